import { FOLDED_BLANKS, FOLDED_INDENT } from './blank-runs';
import { declaredArguments } from './declared-arguments';
import type { DeclaredArguments } from './events';
import { isPlainObject } from './json';
import { escapeNotation, toVisibleText, type VisibleSegment, type VisibleText } from './visible-text';

/** An argument value's JSON type; `text` a string. */
export type ArgumentType = 'text' | 'boolean' | 'number' | 'null' | 'object' | 'array';

export interface VisibleArgument {
  /**
   * The argument's name, escaped like its value, and on one line: a line break or tab in it is escaped too, and so is
   * each space (`\u{20}`), counted as hidden: the tool knows its arguments by exact name, and `dry_run ` is not `dry_run`.
   */
  name: VisibleText;
  /** A string as it is, lines and all; any other value as indented JSON. */
  value: VisibleText;
  format: 'text' | 'json';
  type: ArgumentType;
  /**
   * What every client labels the value with, so a string and a value of another type never look alike: the JSON type
   * of a value that is not a string, `text` for a string that reads as JSON (`"true"`, `"5"`, `"null"`, `"[1]"`);
   * null for any other string.
   */
  typeLabel: ArgumentType | null;
  /**
   * The tool's declared names (or schema) were given and do not hold this name: the tool ignores the argument (or
   * runs on its default).
   */
  undeclared: boolean;
  /** The tool's declared names were given but not known at this level (see `DeclaredArguments`): counted as not declared. */
  unchecked: boolean;
  /**
   * Names inside the value (an object whose schema declares names of its own) that the tool does not declare, or
   * that could not be checked, by their path from the argument (`options.dry_run`).
   */
  inner: InnerName[];
}

/** A name inside an argument's value, by its path as shown (each name escaped like an argument's, cut when long). */
export interface InnerName {
  path: string;
  /** Not known rather than not declared. */
  unchecked: boolean;
}

/** What every client says of an argument whose name the tool's schema does not declare. */
export const UNDECLARED_ARGUMENT_NOTE = 'not a parameter of this tool';

/** What every client says of an argument whose name could not be checked against the tool's declared ones. */
export const UNCHECKED_ARGUMENT_NOTE = 'could not be checked against this tool';
/** What every client says of an argument whose value holds a name the tool does not declare. */
export const UNDECLARED_INNER_NOTE = 'holds a name that is not a parameter of this tool';
/** What every client says of an argument whose value holds a name that could not be checked against the tool's. */
export const UNCHECKED_INNER_NOTE = 'holds a name that could not be checked against this tool';

/** Paths a note lists; past them it says how many more. */
const LISTED_PATHS = 5;

/**
 * What every client's card says of a call holding `count` arguments its tool's schema does not declare, in the same
 * words; `inner`, the paths of those inside an argument's value, are listed.
 */
export function undeclaredArgumentsNote(count: number, inner: readonly string[] = []): string {
  const these = count === 1 ? 'An argument of this call is' : `${count} arguments of this call are`;
  return `${these} not a parameter of this tool (marked): the tool may ignore ${count === 1 ? 'it' : 'them'} and run with its own default instead. Check the name against the tool's own.${innerList(inner)}`;
}

/** What every client's card says of a call holding `count` argument names that could not be checked (`inner` as above). */
export function uncheckedArgumentsNote(count: number, inner: readonly string[] = []): string {
  const these = count === 1 ? 'An argument name of this call' : `${count} argument names of this call`;
  return `${these} could not be checked against this tool's parameters (marked): its schema is too large or too intricate to be read here, so count ${count === 1 ? 'it' : 'them'} as not a parameter, which the tool may ignore. Check the name against the tool's own.${innerList(inner)}`;
}

function innerList(paths: readonly string[]): string {
  if (paths.length === 0) return '';
  const more = paths.length - LISTED_PATHS;
  return ` Inside an argument: ${paths.slice(0, LISTED_PATHS).join(', ')}${more > 0 ? ` and ${more} more` : ''}.`;
}

export interface VisibleArguments {
  /** The argument a code-running tool runs, shown first and as code; null for other tools. */
  code: { label: string; language: 'shell' | 'python'; argument: VisibleArgument } | null;
  /** Every other argument, in the order the arguments object holds them. */
  others: VisibleArgument[];
  /** Escaped characters to read with care over all names and values: hidden ones, and in code those outside ASCII. */
  hiddenCount: number;
  /** Of `hiddenCount`, the characters outside ASCII escaped only because they stand in code (`non-ascii-in-code`). */
  nonAsciiCount: number;
  /** Names, of arguments and inside their values, the tool's schema does not declare (none when no schema was given). */
  undeclaredCount: number;
  /** Names, of arguments and inside their values, that could not be checked against the tool's declared ones. */
  uncheckedCount: number;
  /** The names inside arguments' values, over all arguments, that are not declared or could not be checked. */
  inner: InnerName[];
}

export interface VisibleArgumentsOptions {
  /**
   * The names the tool declared as the call was put up (a tool-start's `tool.declared`): every name not among them
   * is marked `undeclared`, at each level they say, and every name at a level they do not know `unchecked`. Default
   * undefined: read from `schema`.
   */
  declared?: DeclaredArguments | undefined;
  /**
   * The tool's JSON Schema for its arguments, as listed now, read with `declaredArguments` when `declared` is not
   * given. Default undefined: the schema is not known, and no name is marked.
   */
  schema?: Readonly<Record<string, unknown>> | undefined;
  /**
   * For a one-line preview, where no label can sit over a value: a string that reads as JSON (`typeLabel` `text`) is
   * shown as a JSON string, quoted (`dry_run: "true"`, never `dry_run: true` for a string). The code of a code-running
   * tool is never quoted. Default false.
   */
  quoteJsonLikeText?: boolean;
}

const CODE_ARGUMENTS = new Map<string, { key: string; label: string; language: 'shell' | 'python' }>([
  ['terminal', { key: 'command', label: 'Command', language: 'shell' }],
  ['python', { key: 'code', label: 'Code', language: 'python' }],
]);

/**
 * A file a later call runs as a program or reads commands from, by its name: a source file of a language that runs or
 * compiles (`.sh`, `.py`, `.go`, `.rs`, `.tsx` …), a file a build, a container, a task runner, a hook manager, CI or
 * an editor runs commands from (`Makefile` and `Makefile.local`, `Gemfile`, `build.rs`, `Dockerfile.dev` and
 * `app.Dockerfile`, `compose.override.yaml`, `mise.toml`, `deno.json`, `lefthook.yml`, a GitHub action or workflow,
 * `.vscode/`, `.zed/` or `.idea/` at any depth …), pip's requirements and constraints (which hold options that run a
 * build), a shell's or tool's start-up file (any dotfile ending in `rc`, `profile`, `env`, `login`, `logout`,
 * `aliases` or `functions`: `.bash_aliases`, `.zshenv`, `.envrc`, `.npmrc`; and `.env.local`, `.yarnrc.yml`), and a
 * Git hook or config. Not whole, and need not be: a file it misses is read by `PROSE_NAME` and `mayRun` instead.
 */
const SCRIPT_NAME_PARTS = [
  String.raw`\.(?:sh|bash|zsh|ksh|csh|tcsh|fish|command|py|pyw|pyi|pl|pm|t|rb|rake|gemspec|js|jsx|mjs|cjs|ts|tsx|mts|cts|vue|svelte|php|lua|tcl|r|jl|go|rs|c|h|cc|cpp|cxx|hpp|hh|m|mm|java|kt|kts|groovy|gradle|scala|sc|swift|cs|fs|fsx|vb|vbs|ex|exs|erl|hs|ml|clj|cljs|dart|nim|zig|el|vim|nix|sql|ps1|psm1|psd1|bat|cmd|mk|mak|just|cmake|awk|sed|applescript|scpt|desktop|service|timer|dockerfile|containerfile)`,
  String.raw`(?:^|\/)(?:(?:GNUmakefile|makefile|Dockerfile|Containerfile|Procfile)(?:\.[^/]*)?|Justfile|Rakefile|Gemfile|Vagrantfile|Brewfile|Podfile|Fastfile|Guardfile|Capfile|Berksfile|Jenkinsfile|Tiltfile|Earthfile|Snakefile|SConstruct|SConscript|BUILD|BUILD\.bazel|WORKSPACE|MODULE\.bazel|meson\.build|CMakeLists\.txt|build\.rs|package\.(?:json|json5|ya?ml)|composer\.json|deno\.jsonc?|bunfig\.toml|pnpm-workspace\.ya?ml|\.yarnrc\.ya?ml|pyproject\.toml|setup\.cfg|tox\.ini|noxfile\.py|Cargo\.toml|\.?mise(?:\.[^/]*)?\.toml|(?:requirements|constraints)[^/]*\.txt|requirements[^/]*\.in|\.gitconfig(?:\.[^/]*)?|\.gitattributes|\.gitmodules|config|\.env\.[^/]+|\.pre-commit-(?:config|hooks)\.ya?ml|\.?lefthook(?:-local)?\.(?:ya?ml|toml|jsonc?)|action\.ya?ml|\.gitlab-ci\.ya?ml|\.travis\.ya?ml|azure-pipelines\.ya?ml|bitbucket-pipelines\.ya?ml|\.drone\.ya?ml|\.?appveyor\.ya?ml|\.woodpecker\.ya?ml|\.gitpod\.ya?ml|(?:docker-)?compose(?:[.-][^/]*)?\.ya?ml|Taskfile(?:\.dist)?\.ya?ml)`,
  String.raw`(?:^|\/)\.[\w.-]*(?:rc|profile|env|login|logout|aliases|functions)`,
  String.raw`(?:^|\/)\.(?:github\/workflows|git\/hooks)\/[^/]+`,
  String.raw`(?:^|\/)requirements\/[^/]+\.(?:txt|in)`,
];
const SCRIPT_NAME = new RegExp(`(?:${SCRIPT_NAME_PARTS.map((part) => `(?:${part})`).join('|')})$`, 'i');
/**
 * Folders whose every file, at any depth, an editor, a hook manager, a task runner or CI reads commands from or runs
 * (a resolved path has no empty part, so a folder followed by `/` holds the file). Each part of a path is read once:
 * a pattern `.+` crossing folders from each of them would take time growing as the square of a long path's length.
 */
const SCRIPT_FOLDER = /(?:^|\/)(?:\.(?:vscode|devcontainer|cargo|zed|idea|husky|githooks|lefthook(?:-local)?|circleci|woodpecker|buildkite|github\/actions)|\.?mise(?:-tasks)?)\//i;
/** Folders whose YAML files, at any depth, CI reads (a GitHub action, a GitLab CI include). */
const CI_FOLDER = /(?:^|\/)\.(?:github|gitlab)\//i;
const YAML_NAME = /\.ya?ml$/i;

function scriptName(name: string): boolean {
  return SCRIPT_NAME.test(name) || SCRIPT_FOLDER.test(name) || (YAML_NAME.test(name) && CI_FOLDER.test(name));
}

/** Airlock's own tools, whose arguments it knows: what runs is their code (`CODE_ARGUMENTS`) or a program `write_file` writes. */
const BUILT_IN_TOOLS: ReadonlySet<string> = new Set(['terminal', 'python', 'write_file', 'read_file', 'list_directory', 'web_fetch']);

/**
 * An argument name that says it holds code, by any word of it (`command`, `shell_cmd`, `sqlQuery`, `run-script`).
 * An argument of a tool Airlock does not know (an MCP server's) so named may be run as it is.
 */
const CODE_NAME_WORDS: ReadonlySet<string> = new Set([
  'command', 'commands', 'cmd', 'cmdline', 'code', 'script', 'scripts', 'shell', 'bash', 'sh', 'zsh', 'powershell',
  'sql', 'query', 'expression', 'expr', 'exec', 'eval', 'program', 'statement', 'snippet', 'javascript', 'js', 'python', 'py',
  'source', 'src', 'cell', 'notebook', 'lambda', 'function', 'func', 'formula', 'macro', 'template', 'payload',
]);

function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '');
}

function namedAsCode(name: string): boolean {
  return nameWords(name).some((word) => CODE_NAME_WORDS.has(word));
}

/**
 * The last word of an argument name that says its value names what the call acts on, a file, a folder, an address
 * or a name (`path`, `file_path`, `targetUrl`, `output_dir`, `paths`), one or several: each line of it is read as a
 * name, not as text. The last word, as `file_content` holds text (`copy_to_path` names one); or, in a name saying what
 * the value is for, a word of `NAMES_BEFORE_A_USE` before `to` or `for` (`paths_to_read`, `url_for_crawl`). Either
 * is enough: a name read as text lets a look-alike line pass, one read as names only marks more.
 */
const NAME_WORDS: ReadonlySet<string> = new Set([
  'path', 'paths', 'pathname', 'filepath', 'file', 'files', 'filename', 'filenames', 'dir', 'dirs', 'directory', 'directories',
  'folder', 'folders', 'url', 'urls', 'uri', 'uris', 'href', 'link', 'links', 'host', 'hosts', 'hostname', 'domain', 'domains',
  'endpoint', 'location', 'target', 'targets', 'destination', 'dest', 'name', 'names', 'repo', 'repository', 'branch', 'remote',
  'email', 'emails', 'recipient', 'recipients', 'dirpath', 'dirpaths', 'filelist', 'pathlist', 'urllist', 'hostlist',
  'ip', 'ips', 'ipv4', 'ipv6', 'ipaddr', 'ipaddress', 'ipaddresses', 'cidr', 'cidrs', 'subnet', 'subnets', 'hostnames',
]);

/** Last words that say the value is several of what the word before names (`file_list`, `pathList`, `url_array`). */
const LIST_WORDS: ReadonlySet<string> = new Set(['list', 'array', 'set']);

/**
 * Last words for an address, which names something only after a word saying of what (`IPAddress`, `email_addresses`,
 * `mac_addr`): a `shipping_address` or a plain `address` is a postal one, text of several lines.
 */
const ADDRESS_WORDS: ReadonlySet<string> = new Set(['address', 'addresses', 'addr', 'addrs']);
const ADDRESS_KINDS: ReadonlySet<string> = new Set(['ip', 'ipv4', 'ipv6', 'email', 'mail', 'mac', 'host', 'server', 'remote', 'bind', 'listen', 'web', 'peer', 'socket', 'wallet']);

function namedAsName(name: string): boolean {
  const words = nameWords(name);
  const last = words[words.length - 1] ?? '';
  const before = words[words.length - 2] ?? '';
  if (NAME_WORDS.has(last) || (LIST_WORDS.has(last) && NAME_WORDS.has(before))) return true;
  if (ADDRESS_WORDS.has(last) && ADDRESS_KINDS.has(before)) return true;
  return words.some((word, at) => at > 0 && (word === 'to' || word === 'for') && NAMES_BEFORE_A_USE.has(words[at - 1]!));
}

/**
 * The words of `NAME_WORDS` that name a file, a folder or an address also before `to` or `for`: an `email_to_send` or
 * a `name_for_greeting` may be text.
 */
const NAMES_BEFORE_A_USE: ReadonlySet<string> = new Set([
  'path', 'paths', 'file', 'files', 'filename', 'filenames', 'dir', 'dirs', 'directory', 'directories', 'folder', 'folders',
  'url', 'urls', 'uri', 'uris', 'host', 'hosts', 'hostname', 'hostnames', 'ip', 'ips', 'domain', 'domains',
]);

/**
 * ASCII a shell or another language reads as syntax that runs, calls or chains something: `$(`, `${`, `$x`, a
 * backquote, `;`, `|`, `&`, `<`, `>`, and the brackets and `=` of a call, a list or an assignment (Python or
 * JavaScript in an argument named `source` or `cell`: `[י:=0, __import__("os").system("…"), י]` draws as a list of
 * one string); a line break between two lines chains them as `;` does (`holdsCodeSyntax`). Text in a script other
 * than Latin or CJK beside any of them is shown as codes, and offered for review.
 */
const CODE_SYNTAX = /\$[({A-Za-z_]|[`;|&<>()[\]{}=]/;
/** A line break: a shell, Python or JavaScript (which breaks lines at U+2028 and U+2029 too) chains lines as `;` does. */
const LINE_BREAK = /[\n\r\u2028\u2029]/;

/**
 * Whether a value holds syntax that runs: `CODE_SYNTAX`, or a line break between two of its lines that are not blank
 * (found in review: an MCP process's `input` of `echo י`, `touch PWNED_NEWLINE`, `י` drew as an echo of a quoted string
 * of three lines, and bash ran `touch`). A line break before or after the only line chains nothing.
 */
function holdsCodeSyntax(text: string): boolean {
  return CODE_SYNTAX.test(text) || LINE_BREAK.test(text.trim());
}

/**
 * Files of prose that nothing runs, by their ending (`requirements.txt` and `CMakeLists.txt`, named as programs, are
 * read as such first). TeX (`\write18`) and MDX (JSX) run code, and are not among them.
 */
const PROSE_NAME = /\.(?:md|markdown|txt|rst|adoc|asciidoc|org|csv|tsv|po|pot|srt|vtt)$/i;

/**
 * What `write_file` writes, for how its text is shown. `script`: a program a later call may run (by its name, or a
 * first line `#!`), shown as code, every character outside ASCII escaped. `prose`: a file of prose that nothing runs,
 * shown as written. `other`: any other file, read as an MCP tool's argument is (`mayRun`): when its text holds syntax
 * that runs, every character outside ASCII but Latin letters and CJK shows its code. The names of programs are never
 * all listed (each review found a file a later run reads commands from that the list missed: a compose override, an
 * action, `mise.toml`), so what is not known as prose is not taken for it. The cost, as for MCP arguments: Cyrillic,
 * Greek or Hebrew text in a YAML or JSON file is shown as codes, and such a call is offered for review.
 */
function writtenFile(target: unknown, content: string): 'script' | 'prose' | 'other' {
  if (content.startsWith('#!') || content.startsWith('\uFEFF#!')) return 'script';
  if (typeof target !== 'string') return 'other';
  const name = resolvedName(target.trimEnd());
  if (scriptName(name)) return 'script';
  return PROSE_NAME.test(name) ? 'prose' : 'other';
}

/**
 * A path as the file tools resolve it, for its name: without `.` and empty parts, a `..` taking the part before it.
 * `.github/workflows/./ci.yml` and `.husky//pre-commit` are written to `.github/workflows/ci.yml` and
 * `.husky/pre-commit`, and must be read by the same names.
 */
function resolvedName(target: string): string {
  const parts: string[] = [];
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
    else parts.push(part);
  }
  return `${target.startsWith('/') ? '/' : ''}${parts.join('/')}`;
}

/**
 * How a tool call's arguments are shown to the person who decides it, in every client: built from the
 * very arguments that will run, each value whole and with hidden characters escaped.
 */
export function visibleArguments(toolName: string, args: Readonly<Record<string, unknown>>, options: VisibleArgumentsOptions = {}): VisibleArguments {
  const code = CODE_ARGUMENTS.get(toolName);
  const declared = options.declared ?? (options.schema === undefined ? undefined : declaredArguments(options.schema));
  const level = declared === undefined ? undefined : declaredLevel(declared);
  let codeArgument: VisibleArguments['code'] = null;
  const others: VisibleArgument[] = [];
  for (const [name, value] of Object.entries(args)) {
    const found = level?.get(name);
    const marks: ArgumentMarks = {
      undeclared: level !== undefined && level !== null && found === undefined,
      unchecked: level === null,
      inner: found?.inner === undefined ? [] : innerNames(value, found.inner, [name]),
    };
    if (code !== undefined && codeArgument === null && name === code.key && typeof value === 'string') {
      codeArgument = { label: code.label, language: code.language, argument: visibleArgument(name, value, { code: true, marks }) };
    } else {
      const written = toolName === 'write_file' && name === 'content' && typeof value === 'string' ? writtenFile(args.path, value) : null;
      const mayRun = !BUILT_IN_TOOLS.has(toolName) || written === 'other';
      others.push(visibleArgument(name, value, { code: written === 'script', mayRun, marks, quote: options.quoteJsonLikeText === true }));
    }
  }
  const all = codeArgument === null ? others : [codeArgument.argument, ...others];
  const hiddenCount = all.reduce((sum, argument) => sum + argument.name.hiddenCount + argument.value.hiddenCount, 0);
  const nonAsciiCount = all.reduce((sum, argument) => sum + argument.name.nonAsciiCount + argument.value.nonAsciiCount, 0);
  const inner = all.flatMap((argument) => argument.inner);
  const undeclaredCount = all.filter((argument) => argument.undeclared).length + inner.filter((name) => !name.unchecked).length;
  const uncheckedCount = all.filter((argument) => argument.unchecked).length + inner.filter((name) => name.unchecked).length;
  return { code: codeArgument, others, hiddenCount, nonAsciiCount, undeclaredCount, uncheckedCount, inner };
}

type ArgumentMarks = Pick<VisibleArgument, 'undeclared' | 'unchecked' | 'inner'>;

/** A level's declared names by name (a Map: `constructor` is not declared by every object); null when not known. */
function declaredLevel(declared: DeclaredArguments): ReadonlyMap<string, { inner?: DeclaredArguments | undefined }> | null {
  return 'names' in declared ? new Map(declared.names.map((entry) => [entry.name, entry])) : null;
}

/** The names inside `value`, an object the tool declared names for (`declared`), that it does not declare or that are not known. */
function innerNames(value: unknown, declared: DeclaredArguments, path: readonly string[]): InnerName[] {
  if (!isPlainObject(value)) return [];
  const level = declaredLevel(declared);
  return Object.entries(value).flatMap(([name, inner]) => {
    const at = [...path, name];
    if (level === null) return [{ path: pathText(at), unchecked: true }];
    const found = level.get(name);
    if (found === undefined) return [{ path: pathText(at), unchecked: false }];
    return found.inner === undefined ? [] : innerNames(inner, found.inner, at);
  });
}

/** Characters of each name a path shows; past them it is cut with `…`. */
const PATH_NAME_CHARS = 40;

/** A path of names as shown: each escaped like an argument's name, cut when long, quoted when it holds a `.` or `"`. */
function pathText(names: readonly string[]): string {
  return names
    .map((name) => {
      const shown = visibleName(name).segments.map((segment) => segment.text).join('');
      const cut = shown.length > PATH_NAME_CHARS ? `${shown.slice(0, PATH_NAME_CHARS)}…` : shown;
      return /[."]/.test(cut) || cut === '' ? quote(cut) : cut;
    })
    .join('.');
}

/**
 * `code`: the value is the code the tool runs, shown with every character outside ASCII escaped. `mayRun`: the tool
 * is not one of Airlock's, or the value is the text `write_file` writes to a file not known as a program or as prose,
 * so a value named like code or holding syntax that runs may run as it is (`mayRun` of toVisibleText). `marks`:
 * what the tool's declared names say of the name and of those inside the value.
 */
function visibleArgument(
  name: string,
  value: unknown,
  { code, mayRun = false, marks, quote: quoted = false }: { code: boolean; mayRun?: boolean; marks: ArgumentMarks; quote?: boolean },
): VisibleArgument {
  const type = argumentType(value);
  const typeLabel = typeof value !== 'string' ? type : readsAsJson(value) ? 'text' : null;
  const text = typeof value !== 'string' ? jsonText(value, '') : quoted && typeLabel === 'text' ? quote(value) : value;
  const runs = mayRun && !code && (namedAsCode(name) || holdsCodeSyntax(text));
  const everyLine = namedAsName(name);
  const visible = toVisibleText(text, { code, mayRun: runs, syntax: true, nfc: typeof value === 'string' || everyLine, everyLine });
  return { name: visibleName(name), value: visible, format: type === 'text' ? 'text' : 'json', type, typeLabel, ...marks };
}

function argumentType(value: unknown): ArgumentType {
  if (typeof value === 'string') return 'text';
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return 'number';
  return 'object';
}

/** What a JSON value may start with, after white space. */
const JSON_START = /^[\s]*[-0-9tfn"[{]/;

/**
 * Whether a string, shown as it is, would read as a JSON value of another kind: `true`, `5`, `null`, `[1]`, `{}`,
 * `"x"` (surrounding white space and all).
 */
export function readsAsJson(text: string): boolean {
  if (!JSON_START.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A name on one line, each space escaped and counted: a name that differs by a space must not look the same. A run
 * long enough for every client to fold into one marker (`␠×N`, see `blankPieces`) is left to that, counted as a fold.
 * An argument's `name` is this; a client finds an argument again by its name as shown through it.
 */
export function visibleArgumentName(name: string): VisibleText {
  return visibleName(name);
}

function visibleName(name: string): VisibleText {
  const visible = toVisibleText(name, { singleLine: true });
  if (!name.includes(' ')) return visible;
  const segments: VisibleSegment[] = [];
  let hiddenCount = visible.hiddenCount;
  let text = '';
  const flush = () => {
    if (text !== '') segments.push({ kind: 'text', text });
    text = '';
  };
  visible.segments.forEach((segment, at) => {
    if (segment.kind !== 'text') {
      flush();
      segments.push(segment);
      return;
    }
    for (const part of segment.text.split(/( +)/)) {
      const folded = part.startsWith(' ') && part.length >= (at === 0 && text === '' && segments.length === 0 ? FOLDED_INDENT : FOLDED_BLANKS);
      if (!part.startsWith(' ') || folded) {
        text += part;
        continue;
      }
      flush();
      for (let index = 0; index < part.length; index++) segments.push({ kind: 'escape', text: escapeNotation(0x20), codePoint: 0x20, class: 'name-space' });
      hiddenCount += part.length;
    }
  });
  flush();
  return { ...visible, segments, hiddenCount };
}

/**
 * JSON with two-space indents whose strings escape only what JSON needs to stay readable as JSON; every
 * other character is left for toVisibleText, so hidden ones get the one escape notation and are counted.
 */
function jsonText(value: unknown, indent: string): string {
  const inner = `${indent}  `;
  if (typeof value === 'string') return quote(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => inner + jsonText(item, inner)).join(',\n')}\n${indent}]`;
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([key, item]) => `${inner}${quote(key)}: ${jsonText(item, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const JSON_ESCAPES = new Map([
  ['"', '\\"'],
  ['\\', '\\\\'],
  ['\n', '\\n'],
  ['\t', '\\t'],
]);

function quote(text: string): string {
  return `"${text.replace(/["\\\n\t]/g, (char) => JSON_ESCAPES.get(char) ?? char)}"`;
}
