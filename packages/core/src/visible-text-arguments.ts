import { FOLDED_BLANKS, FOLDED_INDENT } from './blank-runs';
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
  /** The tool's schema was given and does not declare this name: the tool ignores the argument (or runs on its default). */
  undeclared: boolean;
}

/** What every client says of an argument whose name the tool's schema does not declare. */
export const UNDECLARED_ARGUMENT_NOTE = 'not a parameter of this tool';

/** What every client's card says of a call holding `count` arguments its tool's schema does not declare, in the same words. */
export function undeclaredArgumentsNote(count: number): string {
  const these = count === 1 ? 'An argument of this call is' : `${count} arguments of this call are`;
  return `${these} not a parameter of this tool (marked): the tool may ignore ${count === 1 ? 'it' : 'them'} and run with its own default instead. Check the name against the tool's own.`;
}

export interface VisibleArguments {
  /** The argument a code-running tool runs, shown first and as code; null for other tools. */
  code: { label: string; language: 'shell' | 'python'; argument: VisibleArgument } | null;
  /** Every other argument, in the order the arguments object holds them. */
  others: VisibleArgument[];
  /** Hidden characters over all names and values. */
  hiddenCount: number;
  /** Arguments whose name the tool's schema does not declare (none when no schema was given). */
  undeclaredCount: number;
}

export interface VisibleArgumentsOptions {
  /**
   * The tool's JSON Schema for its arguments: every name not among its `properties` is marked `undeclared`. Default
   * undefined: the schema is not known, and no name is marked.
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

/** A file a later call runs as a program, by its name. */
const SCRIPT_NAME = /(?:\.(?:sh|bash|zsh|ksh|fish|command|py|pyw|pl|pm|rb|js|mjs|cjs|ts|mts|cts|php|lua|tcl|ps1|psm1|bat|cmd|mk|awk|sed)|(?:^|\/)(?:GNUmakefile|[Mm]akefile|Dockerfile|Containerfile|Justfile|justfile|Rakefile|\.bashrc|\.bash_profile|\.profile|\.zshrc|\.zprofile|\.envrc|package\.json|\.gitconfig|config)|(?:^|\/)\.git\/hooks\/[^/]+)$/i;

/**
 * Whether `write_file` writes a program a later call may run (by its name, or a first line `#!`): its text is then
 * shown as code, every look-alike of punctuation escaped.
 */
function writesScript(target: unknown, content: string): boolean {
  return content.startsWith('#!') || content.startsWith('\uFEFF#!') || (typeof target === 'string' && SCRIPT_NAME.test(target.trimEnd()));
}

/**
 * How a tool call's arguments are shown to the person who decides it, in every client: built from the
 * very arguments that will run, each value whole and with hidden characters escaped.
 */
export function visibleArguments(toolName: string, args: Readonly<Record<string, unknown>>, options: VisibleArgumentsOptions = {}): VisibleArguments {
  const code = CODE_ARGUMENTS.get(toolName);
  const declared = declaredArgumentNames(options.schema);
  let codeArgument: VisibleArguments['code'] = null;
  const others: VisibleArgument[] = [];
  for (const [name, value] of Object.entries(args)) {
    const undeclared = declared !== undefined && !declared.has(name);
    if (code !== undefined && codeArgument === null && name === code.key && typeof value === 'string') {
      codeArgument = { label: code.label, language: code.language, argument: visibleArgument(name, value, { code: true, undeclared }) };
    } else {
      const script = toolName === 'write_file' && name === 'content' && typeof value === 'string' && writesScript(args.path, value);
      others.push(visibleArgument(name, value, { code: script, undeclared, quote: options.quoteJsonLikeText === true }));
    }
  }
  const all = codeArgument === null ? others : [codeArgument.argument, ...others];
  const hiddenCount = all.reduce((sum, argument) => sum + argument.name.hiddenCount + argument.value.hiddenCount, 0);
  const undeclaredCount = all.filter((argument) => argument.undeclared).length;
  return { code: codeArgument, others, hiddenCount, undeclaredCount };
}

/**
 * The argument names a tool's JSON Schema declares: its own `properties` (none when it has none). Undefined when no
 * schema is given.
 */
export function declaredArgumentNames(schema: Readonly<Record<string, unknown>> | undefined): ReadonlySet<string> | undefined {
  if (schema === undefined) return undefined;
  const properties = Object.hasOwn(schema, 'properties') ? schema.properties : undefined;
  return new Set(isPlainObject(properties) ? Object.keys(properties) : []);
}

/**
 * `code`: the value is the code the tool runs, shown with look-alike punctuation escaped too. `undeclared`: the
 * tool's schema does not declare the name.
 */
function visibleArgument(name: string, value: unknown, { code, undeclared, quote: quoted = false }: { code: boolean; undeclared: boolean; quote?: boolean }): VisibleArgument {
  const type = argumentType(value);
  const typeLabel = typeof value !== 'string' ? type : readsAsJson(value) ? 'text' : null;
  const text = typeof value !== 'string' ? jsonText(value, '') : quoted && typeLabel === 'text' ? quote(value) : value;
  return { name: visibleName(name), value: toVisibleText(text, { code, syntax: true }), format: type === 'text' ? 'text' : 'json', type, typeLabel, undeclared };
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
 */
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
