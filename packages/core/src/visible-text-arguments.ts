import { isPlainObject } from './json';
import { toVisibleText, type VisibleText } from './visible-text';

export interface VisibleArgument {
  /** The argument's name, escaped like its value, and on one line: a line break or tab in it is escaped too. */
  name: VisibleText;
  /** A string as it is, lines and all; any other value as indented JSON. */
  value: VisibleText;
  format: 'text' | 'json';
}

export interface VisibleArguments {
  /** The argument a code-running tool runs, shown first and as code; null for other tools. */
  code: { label: string; language: 'shell' | 'python'; argument: VisibleArgument } | null;
  /** Every other argument, in the order the arguments object holds them. */
  others: VisibleArgument[];
  /** Hidden characters over all names and values. */
  hiddenCount: number;
}

const CODE_ARGUMENTS = new Map<string, { key: string; label: string; language: 'shell' | 'python' }>([
  ['terminal', { key: 'command', label: 'Command', language: 'shell' }],
  ['python', { key: 'code', label: 'Code', language: 'python' }],
]);

/**
 * How a tool call's arguments are shown to the person who decides it, in every client: built from the
 * very arguments that will run, each value whole and with hidden characters escaped.
 */
export function visibleArguments(toolName: string, args: Readonly<Record<string, unknown>>): VisibleArguments {
  const code = CODE_ARGUMENTS.get(toolName);
  let codeArgument: VisibleArguments['code'] = null;
  const others: VisibleArgument[] = [];
  for (const [name, value] of Object.entries(args)) {
    if (code !== undefined && codeArgument === null && name === code.key && typeof value === 'string') {
      codeArgument = { label: code.label, language: code.language, argument: visibleArgument(name, value, true) };
    } else {
      others.push(visibleArgument(name, value, false));
    }
  }
  const all = codeArgument === null ? others : [codeArgument.argument, ...others];
  const hiddenCount = all.reduce((sum, argument) => sum + argument.name.hiddenCount + argument.value.hiddenCount, 0);
  return { code: codeArgument, others, hiddenCount };
}

/** `code`: the value is the code the tool runs, shown with look-alike punctuation escaped too. */
function visibleArgument(name: string, value: unknown, code: boolean): VisibleArgument {
  const isText = typeof value === 'string';
  return {
    name: toVisibleText(name, { singleLine: true }),
    value: toVisibleText(isText ? value : jsonText(value, ''), { code }),
    format: isText ? 'text' : 'json',
  };
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
