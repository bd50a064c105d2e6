import { createRequire } from 'node:module';
import { Language, Parser, type Node, type ParseState, type Tree } from 'web-tree-sitter';
import { innerCommands, type ReachableWords } from './command-wrappers';
import { decodeWord, type ShellWord } from './shell-word';

/** Longer command lines are not parsed: no command rule can allow them, and deny rules cannot see into them. */
export const MAX_COMMAND_LINE_CHARS = 64 * 1024;
const MAX_DEPTH = 128;
/** How deep `bash -c '…'` and `eval …` are followed for deny rules. */
const MAX_NESTED_LINES = 4;
/**
 * At most this many commands are examined behind wrappers, after `find -exec` and in nested command lines of one
 * line (the commands the line itself shows are always all examined). Past it, the rest is not looked at and the
 * line is not seen through: never allowed by a command rule.
 */
export const MAX_FOLLOWED_COMMANDS = 4096;
/** At most this many words in those commands (a wrapper chain repeats its tail in each command it leads to). */
export const MAX_FOLLOWED_WORDS = 128 * 1024;
/** At most this much text of nested command lines is parsed, each reading counted. */
const MAX_NESTED_CHARS = 4 * MAX_COMMAND_LINE_CHARS;
/**
 * How long the parser may work on one command line, all its readings and nested lines together, in all and once
 * it has met a syntax error. The grammar's error recovery takes time quadratic in the length of some broken lines
 * (`a=(` 4,000 times, 16 KB: 4 s here; 60 KB: over a minute); a well-formed line of the longest kind (64 KiB of
 * `if …; then`) parses in about 30 ms here, and 40 KB of short commands took over 100 ms on a loaded machine. Past
 * either limit the parse is given up and the line is asked about (see `Reachable.unread`). The parser runs in the
 * command reader's worker (command-line-reader.ts), not on the server's thread.
 */
export const PARSE_BUDGET_MS = 1_000;
export const PARSE_BUDGET_AFTER_ERROR_MS = 20;

/** One simple command the shell would run: its name and arguments, with no assignment or redirection to a file. */
export interface SimpleCommand {
  readonly words: readonly ShellWord[];
  /**
   * Set when commands after it on the line may run while it runs: up to this index (exclusive) of the line's
   * commands for one in a pipeline (the rest of its pipeline), `Infinity` for one the shell runs in the background
   * (`pytest t & …`: all that follow). Default: none do, the next starts when it has ended.
   */
  readonly alongsideUntil?: number;
  /**
   * Set when its input is not the terminal's (which is closed): a later command of a pipeline (`echo … | sftp host`),
   * or one whose input a redirection copies from another descriptor (`<&3`, `0>&1`). Default: not set.
   */
  readonly inputPiped?: true;
}

/** A command as it is collected, before what runs alongside it is known. */
type CollectedCommand = { -readonly [K in keyof SimpleCommand]: SimpleCommand[K] };

/**
 * A command line as the rules see it. `seen`: every construct in it is understood, and `commands` is what it
 * runs. `refused`: something in it cannot be seen through (`reason` names the first). Either way, `reachable`
 * holds every command found anywhere in it, also inside substitutions, behind wrappers and in `bash -c`
 * strings: what deny rules are checked against; except when `incomplete`: it led to more commands than are
 * examined (`MAX_FOLLOWED_COMMANDS`), and `reachable` holds only the first of them. Such a line must not be
 * allowed by any rule that a deny rule could have caught.
 */
export type CommandLine =
  | { kind: 'seen'; commands: readonly SimpleCommand[]; reachable: readonly ReachableWords[] }
  | { kind: 'refused'; reason: string; reachable: readonly ReachableWords[]; incomplete?: true };

const LIST_OPERATORS = new Set(['&&', '||']);
const PIPE_OPERATORS = new Set(['|', '|&']);
const STATEMENT_SEPARATORS = new Set([';', '&', '\n']);
const NULL_DEVICE = '/dev/null';
const FILE_TO_NULL = new Set(['>', '>>', '&>', '&>>', '<', '>|']);
const DUPLICATE_FD = new Set(['>&', '<&']);
const CLOSE_FD = new Set(['>&-', '<&-']);
/** A backslash-newline, which the shell removes (a backslash-CR-LF is an escaped CR, then a newline). */
const LINE_CONTINUATION = /\\\n/g;
const ESCAPED_CRLF = /\\\r\n/g;
/** What may stand before a `#` that starts a comment: nothing, a blank, or an operator character. */
const COMMENT_MAY_FOLLOW = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>']);
/** What the shell takes as blank between words and between a redirection operator and its target. */
const BLANKS = /^[ \t]*$/;
/** ...and between statements and around operators. */
const BLANK_LINES = /^[ \t\n]*$/;
/** ...and between the words of a command, where there must be some. */
const BETWEEN_WORDS = /^[ \t]+$/;
const EMPTY = /^$/;
const MAX_COMMENT_REREADS = 8;

let loading: Promise<Parser> | undefined;

/** The bash grammar, loaded once on first use; a failed load is retried by the next call. */
function bashParser(): Promise<Parser> {
  loading ??= (async () => {
    await Parser.init();
    const require = createRequire(import.meta.url);
    const language = await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
    const parser = new Parser();
    parser.setLanguage(language);
    return parser;
  })().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** Parses a `terminal` command line with the bash grammar; never throws on any input. */
export async function parseCommandLine(text: string, options: { budgetMs?: number } = {}): Promise<CommandLine> {
  const parser = await bashParser();
  if (text.length > MAX_COMMAND_LINE_CHARS) {
    return { kind: 'refused', reason: `a command line longer than ${MAX_COMMAND_LINE_CHARS} characters`, reachable: [] };
  }
  const reachable = new Reachable(new ParseBudget(options.budgetMs ?? PARSE_BUDGET_MS));
  const line = collectEveryReading(parser, text, reachable, (root) => seeThrough(root, text)) ?? { kind: 'refused', reason: 'no command' };
  followNestedLines(parser, reachable);
  const found = reachable.found;
  if (reachable.unread) {
    return { kind: 'refused', reason: `a command line the parser could not read within ${options.budgetMs ?? PARSE_BUDGET_MS} ms`, reachable: found, incomplete: true };
  }
  if (reachable.full) {
    const reason = `more commands behind wrappers and in nested command lines than are examined (${MAX_FOLLOWED_COMMANDS}, or ${MAX_FOLLOWED_WORDS} words)`;
    return { kind: 'refused', reason, reachable: found, incomplete: true };
  }
  return line.kind === 'seen' ? { kind: 'seen', commands: line.commands, reachable: found } : { kind: 'refused', reason: line.reason, reachable: found };
}

/** `use` on the tree of `text`; undefined when the parse ran out of `budget` (and was given up). */
function withTree<T>(parser: Parser, text: string, budget: ParseBudget, use: (root: Node) => T): T | undefined {
  const tree: Tree | null = parser.parse(text, null, { progressCallback: budget.check });
  if (tree === null) {
    if (!budget.spent) throw new Error('The bash parser returned no tree.');
    // A cancelled parse would otherwise resume where it stopped at the next call.
    parser.reset();
    return undefined;
  }
  try {
    return use(tree.rootNode);
  } finally {
    tree.delete();
  }
}

/**
 * The commands found for deny rules, each once. Those the line itself shows are all kept (there are at most as
 * many as its characters); from `follow()` on, what the line only leads to is counted, and past the limits
 * nothing more is kept and the line is `full`.
 */
class Reachable {
  readonly found: ReachableWords[] = [];
  full = false;
  /** Some reading of the line or of a nested line was not parsed in time: `found` holds only a crude split of it. */
  unread = false;
  constructor(readonly budget: ParseBudget) {}

  #following = false;
  #commands = 0;
  #words = 0;
  #chars = 0;
  readonly #keys = new Set<string>();

  follow(): void {
    this.#following = true;
  }

  /** Keeps a command not kept yet; false when the limit is reached, and nothing more should be looked for. */
  add(words: ReachableWords): boolean {
    if (this.full) return false;
    const key = JSON.stringify(words);
    if (this.#keys.has(key)) return true;
    this.#keys.add(key);
    if (this.#following) {
      this.#commands += 1;
      this.#words += words.length;
      if (this.#commands > MAX_FOLLOWED_COMMANDS || this.#words > MAX_FOLLOWED_WORDS) {
        this.full = true;
        return false;
      }
    }
    this.found.push(words);
    return true;
  }

  /** Whether a nested line this long may still be parsed. */
  parse(chars: number): boolean {
    if (this.full || this.budget.spent) return false;
    if (this.#following) {
      this.#chars += chars;
      if (this.#chars > MAX_NESTED_CHARS) this.full = true;
    }
    return !this.full;
  }
}

/** The time the parser has left for one command line (`PARSE_BUDGET_MS`, `PARSE_BUDGET_AFTER_ERROR_MS`). */
class ParseBudget {
  readonly #started = performance.now();
  #errorAt: number | undefined;
  spent = false;

  /** `totalMs`: PARSE_BUDGET_MS, or less (tests of what happens past it). */
  constructor(private readonly totalMs: number) {}

  /** The parser's progress callback: true cancels the parse. */
  readonly check = (state: ParseState): boolean => {
    const now = performance.now();
    if (state.hasError) this.#errorAt ??= now;
    if (now - this.#started > this.totalMs || (this.#errorAt !== undefined && now - this.#errorAt > PARSE_BUDGET_AFTER_ERROR_MS)) this.spent = true;
    return this.spent;
  };
}

/**
 * Collects the commands of `text` for deny rules, also as the shell would read it where the parser reads it
 * otherwise: the parser takes a backslash-newline for a space where the shell joins the words (`r\<newline>m`
 * is `rm`), a backslash-CR-LF for a line continuation where the shell ends the command at the LF, and `#`
 * inside a word (`x#y`, `\ #`) for the start of a comment, hiding the rest of the line. `first` sees the tree of
 * `text` itself.
 */
function collectEveryReading<T>(parser: Parser, text: string, reachable: Reachable, first?: (root: Node) => T): T | undefined {
  const readings = [text];
  let firstResult: T | undefined;
  if (text.includes('\\\n') || text.includes('\\\r\n')) readings.push(text.replace(ESCAPED_CRLF, '\n').replace(LINE_CONTINUATION, ''));
  let onTree = first;
  for (const reading of readings) {
    let current = reading;
    for (let attempt = 0; attempt < MAX_COMMENT_REREADS; attempt += 1) {
      if (!reachable.parse(current.length)) return firstResult;
      const misread = withTree(parser, current, reachable.budget, (root) => {
        if (onTree !== undefined) firstResult = onTree(root);
        onTree = undefined;
        collectReachable(root, reachable);
        if (root.hasError) roughCommands(current, reachable);
        return { at: misreadComment(root, current) };
      });
      if (misread === undefined) {
        // Not parsed in time: what deny rules see of it is the crude split, and the line cannot be allowed.
        reachable.unread = true;
        roughCommands(current, reachable);
        return firstResult;
      }
      if (misread.at === undefined || reachable.full) break;
      current = `${current.slice(0, misread.at)}\\${current.slice(misread.at)}`;
    }
  }
  return firstResult;
}

/**
 * A crude split of a line the parser could not make sense of, so that a deny rule still sees what error
 * recovery may have swallowed: cut at every operator, parenthesis, brace and backquote, words at blanks, quotes dropped.
 */
function roughCommands(text: string, reachable: Reachable): void {
  for (const part of text.split(/[;&|()`{}\n]|\$\(/)) {
    const words = part.replace(/["'\\]/g, '').split(/\s+/).filter((word) => word !== '');
    if (words.length > 0 && !reachable.add(words)) return;
  }
}

/** Where the parser saw a comment that the shell would not: a `#` that does not start a word. */
function misreadComment(root: Node, text: string): number | undefined {
  if (!text.includes('#')) return undefined;
  const stack: Node[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.type === 'comment') {
      const before = node.startIndex - 1;
      const char = text[before];
      if (char !== undefined && (!COMMENT_MAY_FOLLOW.has(char) || escaped(text, before))) return node.startIndex;
    }
    for (const child of node.children) stack.push(child);
  }
  return undefined;
}

/** Whether the character at `index` follows an odd number of backslashes (`\ ` is a space inside a word). */
function escaped(text: string, index: number): boolean {
  let backslashes = 0;
  while (text[index - 1 - backslashes] === '\\') backslashes += 1;
  return backslashes % 2 === 1;
}

/**
 * The commands the found ones run in turn (behind wrappers, after `find -exec`, in `bash -c` strings), each
 * found command unwrapped once and each distinct nested line parsed once, up to `MAX_NESTED_LINES` deep and
 * within the limits of `Reachable`. Iterative: time in the number of commands and words examined.
 */
function followNestedLines(parser: Parser, reachable: Reachable): void {
  reachable.follow();
  const parsed = new Set<string>();
  let checked = 0;
  for (let level = 0; ; level += 1) {
    const lines: string[] = [];
    for (; checked < reachable.found.length; checked += 1) {
      const inner = innerCommands(reachable.found[checked] ?? []);
      for (const words of inner.words) if (!reachable.add(words)) return;
      for (const nested of inner.commandLines) {
        if (!parsed.has(nested)) {
          parsed.add(nested);
          lines.push(nested);
        }
      }
    }
    if (lines.length === 0 || level >= MAX_NESTED_LINES) return;
    for (const nested of lines) {
      if (nested.length <= MAX_COMMAND_LINE_CHARS) collectEveryReading(parser, nested, reachable);
      if (reachable.full) return;
    }
  }
}

/** Every `command` node anywhere, also in parts the parser could not make sense of. Iterative: no depth limit. */
function collectReachable(root: Node, reachable: Reachable): void {
  const stack: Node[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.type === 'command') {
      const words: (string | undefined)[] = [];
      for (const child of node.children) {
        if (child.type !== 'command_name' && words.length === 0) continue;
        if (child.type !== 'command_name' && !isArgument(child)) continue;
        const word = decodeWord(child);
        words.push(word.kind === 'literal' ? word.value : undefined);
      }
      if (words.length > 0 && !reachable.add(words)) return;
    }
    for (const child of node.children) stack.push(child);
  }
}

function isArgument(node: Node): boolean {
  return node.isNamed && !node.type.endsWith('redirect') && node.type !== 'variable_assignment' && node.type !== 'comment';
}

type Seen = { kind: 'seen'; commands: SimpleCommand[] } | { kind: 'refused'; reason: string };

/**
 * Whether the text between two nodes (or a node's edge and its child) is blank for the shell as well: the
 * parser also skips `\ `, `\<tab>`, CR, form feeds and other spaces, which the shell keeps in a word.
 */
function blank(source: string, from: number, to: number, pattern: RegExp): boolean {
  return from <= to && pattern.test(source.slice(from, to).replace(LINE_CONTINUATION, ''));
}

function seeThrough(root: Node, source: string): Seen {
  if (root.hasError) return { kind: 'refused', reason: 'shell syntax the parser could not make sense of' };
  if (!blank(source, 0, root.startIndex, BLANK_LINES) || !blank(source, root.endIndex, source.length, BLANK_LINES)) {
    return { kind: 'refused', reason: 'text the parser skipped' };
  }
  const commands: CollectedCommand[] = [];
  const problem = statements(root, STATEMENT_SEPARATORS, commands, 0, source);
  if (problem !== undefined) return { kind: 'refused', reason: problem };
  if (commands.length === 0) return { kind: 'refused', reason: 'no command' };
  return { kind: 'seen', commands };
}

/** A run of statements joined by `operators`, every gap between them only blanks. Returns why not, if not. */
function statements(node: Node, operators: ReadonlySet<string>, commands: CollectedCommand[], depth: number, source: string): string | undefined {
  if (depth > MAX_DEPTH) return 'commands nested too deeply';
  let cursor = node.startIndex;
  let previous = commands.length;
  let piped = false;
  for (const child of node.children) {
    if (!blank(source, cursor, child.startIndex, BLANK_LINES)) return 'text the parser skipped';
    cursor = child.endIndex;
    if (!child.isNamed) {
      if (!operators.has(child.type)) return `the operator "${child.type}"`;
      // The statement before a `&` runs in the background, alongside every command after it.
      if (child.type === '&') runAlongside(commands, previous, Infinity);
      // Every statement after a `|` reads what the one before it writes.
      if (PIPE_OPERATORS.has(child.type)) piped = true;
      continue;
    }
    previous = commands.length;
    const problem = statement(child, commands, depth + 1, source);
    if (problem !== undefined) return problem;
    if (piped) readOtherInput(commands, previous);
  }
  return blank(source, cursor, node.endIndex, BLANK_LINES) ? undefined : 'text the parser skipped';
}

/** Marks the commands from `from` on as reading an input other than the terminal's (see `SimpleCommand.inputPiped`). */
function readOtherInput(commands: CollectedCommand[], from: number): void {
  for (const command of commands.slice(from)) command.inputPiped = true;
}

/** Marks the commands from `from` on as running alongside those up to `until` (see `SimpleCommand.alongsideUntil`). */
function runAlongside(commands: CollectedCommand[], from: number, until: number): void {
  for (const command of commands.slice(from)) command.alongsideUntil = Math.max(command.alongsideUntil ?? 0, until);
}

function statement(node: Node, commands: CollectedCommand[], depth: number, source: string): string | undefined {
  switch (node.type) {
    case 'command':
      return simpleCommand(node, commands, source);
    case 'list':
      return statements(node, LIST_OPERATORS, commands, depth, source);
    case 'pipeline': {
      // Every command of a pipeline runs at once.
      const from = commands.length;
      const problem = statements(node, PIPE_OPERATORS, commands, depth, source);
      if (problem === undefined) runAlongside(commands, from, commands.length);
      return problem;
    }
    case 'redirected_statement':
      return redirectedStatement(node, commands, depth, source);
    case 'comment':
      return 'a comment';
    case 'subshell':
      return 'a subshell (…)';
    case 'compound_statement':
      return 'a group { …; }';
    case 'variable_assignment':
    case 'variable_assignments':
      return 'a variable assignment';
    case 'declaration_command':
      return 'a declaration (export, declare, local, readonly, typeset)';
    case 'function_definition':
      return 'a function definition';
    case 'negated_command':
      return 'a negated command (! …)';
    default:
      return `a ${node.type.replaceAll('_', ' ')}`;
  }
}

function redirectedStatement(node: Node, commands: CollectedCommand[], depth: number, source: string): string | undefined {
  const [body, ...redirects] = node.children;
  if (body === undefined || !body.isNamed) return 'a redirection without a command';
  let cursor = node.startIndex;
  for (const [index, child] of node.children.entries()) {
    if (!child.isNamed) return 'a redirection the parser split';
    if (!blank(source, cursor, child.startIndex, index === 0 ? EMPTY : BLANKS)) return 'text the parser skipped';
    cursor = child.endIndex;
  }
  if (cursor !== node.endIndex) return 'text the parser skipped';
  for (const redirect of redirects) {
    const problem = redirectProblem(redirect, source);
    if (problem !== undefined) return problem;
  }
  const from = commands.length;
  const problem = statement(body, commands, depth + 1, source);
  if (problem === undefined && redirects.some(copiesInput)) readOtherInput(commands, from);
  return problem;
}

function simpleCommand(node: Node, commands: CollectedCommand[], source: string): string | undefined {
  const words: ShellWord[] = [];
  let otherInput = false;
  let cursor = node.startIndex;
  for (const [index, child] of node.children.entries()) {
    if (!blank(source, cursor, child.startIndex, index === 0 ? EMPTY : BETWEEN_WORDS)) {
      return 'words the parser split differently from the shell';
    }
    cursor = child.endIndex;
    if (!child.isNamed) return `the token "${child.type}" in a command`;
    if (child.type === 'variable_assignment') return 'an environment assignment before the command';
    if (child.type.endsWith('redirect')) {
      const problem = redirectProblem(child, source);
      if (problem !== undefined) return problem;
      otherInput ||= copiesInput(child);
      continue;
    }
    if (child.type !== 'command_name' && words.length === 0) return `a ${child.type.replaceAll('_', ' ')} before the command name`;
    const word = decodeWord(child);
    if (word.kind === 'refused') return word.reason;
    words.push(word);
  }
  if (cursor !== node.endIndex) return 'words the parser split differently from the shell';
  if (words.length === 0) return 'a command without a name';
  commands.push(otherInput ? { words, inputPiped: true } : { words });
  return undefined;
}

/**
 * Whether a redirection `redirectProblem` lets through gives the command another input than the terminal's: a copy of
 * another descriptor to descriptor 0 (`<&3`, `0<&3`, `0>&1`). `<&-` closes it, and `</dev/null` reads nothing.
 */
function copiesInput(node: Node): boolean {
  const match = /^([0-9]?)\s*([<>])&\s*([0-9])$/.exec(node.text);
  if (match === null) return false;
  const [, descriptor = '', direction, from] = match;
  const to = descriptor === '' ? (direction === '<' ? '0' : '1') : descriptor;
  return to === '0' && from !== '0';
}

/**
 * Only redirections that neither write nor read a file: to or from /dev/null, and copying or closing descriptors;
 * the operator right after the descriptor, and only blanks before the target (`>\ /dev/null` writes ` /dev/null`).
 */
function redirectProblem(node: Node, source: string): string | undefined {
  if (node.type === 'heredoc_redirect') return 'a here-document (<<)';
  if (node.type === 'herestring_redirect') return 'a here-string (<<<)';
  if (node.type !== 'file_redirect') return `a ${node.type.replaceAll('_', ' ')}`;
  // `{name}>file`, with no blank before the operator, opens a descriptor and stores its number in `name`; the
  // parser takes `{name}` for an argument. In `{a['$(…)']}>file` bash evaluates the subscript and runs the `$(…)`,
  // single quotes or not. Any word ending in `}` right before a redirection is refused.
  if (source[node.startIndex - 1] === '}') return 'a redirection of a named descriptor';
  let operator: string | undefined;
  let destination: Node | undefined;
  let cursor = node.startIndex;
  for (const child of node.children) {
    const target = child.isNamed && child.type !== 'file_descriptor';
    if (!blank(source, cursor, child.startIndex, target ? BLANKS : EMPTY)) return 'a redirection the parser split';
    cursor = child.endIndex;
    if (!child.isNamed) operator = operator === undefined ? child.type : 'several';
    else if (child.type === 'file_descriptor') {
      if (!/^[0-9]$/.test(child.text) || destination !== undefined || operator !== undefined) return 'a redirection of a named descriptor';
    } else if (destination === undefined) destination = child;
    else return 'a redirection to several words';
  }
  if (cursor !== node.endIndex) return 'a redirection the parser split';
  if (operator === undefined) return 'a redirection the parser split';
  if (CLOSE_FD.has(operator)) return destination === undefined ? undefined : 'a redirection the parser split';
  if (destination === undefined) return 'a redirection without a target';
  if (DUPLICATE_FD.has(operator)) return /^[0-9]$/.test(destination.text) ? undefined : `a redirection to a file (${operator})`;
  if (FILE_TO_NULL.has(operator)) {
    const target = decodeWord(destination);
    return target.kind === 'literal' && target.value === NULL_DEVICE ? undefined : `a redirection to a file (${operator})`;
  }
  return `the redirection ${operator}`;
}
