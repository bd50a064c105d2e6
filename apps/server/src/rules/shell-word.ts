import type { Node } from 'web-tree-sitter';

/**
 * One word of a simple command after quote removal: `literal` when its value is known (`'npm'`, `te"st"`),
 * `dynamic` when the shell computes it but cannot run code doing so (a glob, `~`, `{a,b}`, `$NAME`, `${NAME}`),
 * with the names of the variables it expands (`_` for `$_`, `1` for `$1`), in order. Braces that cannot expand
 * are plain characters: `{}` and `-I{}` are literal.
 */
export type ShellWord = { kind: 'literal'; value: string } | { kind: 'dynamic'; text: string; variables: readonly string[] };

/**
 * A word's text as the program gets it, where the shell cannot make it another or several: a literal, or one whose
 * only mark is a `~` past its start, which bash leaves as it is (`HEAD~1`: it expands one at a word's start, or after
 * `=` or `:` in a word written as an assignment, which holds no `=` here); undefined for any other.
 */
export function plainWord(word: ShellWord): string | undefined {
  if (word.kind === 'literal') return word.value;
  return word.variables.length === 0 && /^[\w./:@^-]+~[\w./:@^~-]*$/.test(word.text) ? word.text : undefined;
}

/** A word the engine will not see through, with the construct that made it so. */
export interface RefusedWord {
  kind: 'refused';
  reason: string;
}

const SIMPLE_VARIABLE = /^\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!_-])$/;
const BRACED_VARIABLE = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/;
/** Characters that end or change a word in the shell: seen unquoted inside one word node, the parser and the shell disagree. */
const SHELL_SYNTAX = new Set([';', '&', '|', '<', '>', '(', ')', '`', '$', '"', "'", ' ', '\t', '\n', '\r']);
const GLOB_OR_EXPANSION = new Set(['*', '?', '[', ']', '~']);
const BRACES = new Set(['{', '}']);
const DOUBLE_QUOTE_ESCAPES = new Set(['$', '`', '"', '\\']);
const ANSI_C_ESCAPES = new Map([
  ['a', '\x07'], ['b', '\b'], ['e', '\x1b'], ['E', '\x1b'], ['f', '\f'], ['n', '\n'], ['r', '\r'], ['t', '\t'],
  ['v', '\v'], ['\\', '\\'], ["'", "'"], ['"', '"'], ['?', '?'],
]);

const refused = (reason: string): RefusedWord => ({ kind: 'refused', reason });

/** The value of an argument or command-name node, or why it cannot be known without running code. */
export function decodeWord(node: Node): ShellWord | RefusedWord {
  return decode(node, mayExpandBraces(node.text));
}

/**
 * Whether the shell may expand braces in a whole word: only with a comma or `..` in it (`{a,b}`, `{1..3}`;
 * quoted ones are taken as unquoted here, to be safe). Otherwise braces are plain characters (`{}`, `-I{}`).
 */
function mayExpandBraces(text: string): boolean {
  return text.includes('{') && (text.includes(',') || text.includes('..'));
}

function decode(node: Node, braces: boolean): ShellWord | RefusedWord {
  switch (node.type) {
    case 'command_name': {
      const [inner, ...rest] = node.children;
      if (inner === undefined || rest.length > 0 || inner.startIndex !== node.startIndex || inner.endIndex !== node.endIndex) {
        return refused('a command name the parser split');
      }
      return decode(inner, braces);
    }
    case 'word':
    case 'number':
      return decodeBareWord(node.text, braces);
    case 'raw_string':
      return node.text.length >= 2 && node.text.startsWith("'") && node.text.endsWith("'")
        ? { kind: 'literal', value: node.text.slice(1, -1) }
        : refused('a single-quoted string the parser cut');
    case 'string':
      return decodeDoubleQuoted(node);
    case 'ansi_c_string':
      return decodeAnsiC(node.text);
    case 'concatenation':
      return decodeConcatenation(node, braces);
    case 'simple_expansion':
      return SIMPLE_VARIABLE.test(node.text) ? { kind: 'dynamic', text: node.text, variables: [node.text.slice(1)] } : refused(`the expansion ${node.text}`);
    case 'expansion':
      return BRACED_VARIABLE.test(node.text) ? { kind: 'dynamic', text: node.text, variables: [node.text.slice(2, -1)] } : refused('a ${…} expansion with an operator');
    case 'brace_expression':
      return /^\{[^\s\\#'"`$]*\}$/.test(node.text) ? { kind: 'dynamic', text: node.text, variables: [] } : refused('a brace expression the parser spread out');
    case 'command_substitution':
      return refused('a command substitution ($(…) or `…`)');
    case 'process_substitution':
      return refused('a process substitution (<(…) or >(…))');
    case 'arithmetic_expansion':
      return refused('an arithmetic expansion $((…))');
    case 'translated_string':
      return refused('a $"…" translated string');
    default:
      return refused(`a ${node.type.replaceAll('_', ' ')}`);
  }
}

function decodeBareWord(text: string, braces: boolean): ShellWord | RefusedWord {
  if (text.startsWith('#')) return refused('a "#" that starts a comment');
  let value = '';
  let dynamic = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] ?? '';
    if (char === '\\') {
      index += 1;
      if (index >= text.length) return refused('a trailing backslash');
      if (text[index] !== '\n') value += text[index];
    } else if (SHELL_SYNTAX.has(char)) {
      return refused(`an unquoted "${char}" inside a word`);
    } else {
      if (GLOB_OR_EXPANSION.has(char) || (braces && BRACES.has(char))) dynamic = true;
      value += char;
    }
  }
  return dynamic ? { kind: 'dynamic', text, variables: [] } : { kind: 'literal', value };
}

function decodeDoubleQuoted(node: Node): ShellWord | RefusedWord {
  const { text } = node;
  if (text.length < 2 || !text.startsWith('"') || !text.endsWith('"')) return refused('a double-quoted string the parser cut');
  const parts: (ShellWord | RefusedWord)[] = [];
  let cursor = node.startIndex + 1;
  for (const child of node.children) {
    if (!child.isNamed && child.type === '"') continue;
    if (child.startIndex !== cursor) return refused('a double-quoted string the parser did not cover');
    cursor = child.endIndex;
    parts.push(child.type === 'string_content' ? decodeStringContent(child.text) : decodeWord(child));
  }
  if (cursor !== node.endIndex - 1) return refused('a double-quoted string the parser did not cover');
  return join(parts);
}

function decodeStringContent(text: string): ShellWord | RefusedWord {
  let value = '';
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] ?? '';
    if (char === '\\') {
      const next = text[index + 1];
      if (next === '\n') index += 1;
      else if (next !== undefined && DOUBLE_QUOTE_ESCAPES.has(next)) {
        value += next;
        index += 1;
      } else value += char;
    } else if (char === '$' || char === '`') {
      return refused(`a "${char}" inside double quotes the parser left as text`);
    } else value += char;
  }
  return { kind: 'literal', value };
}

function decodeAnsiC(text: string): ShellWord | RefusedWord {
  if (text.length < 3 || !text.startsWith("$'") || !text.endsWith("'")) return refused("a $'…' string the parser cut");
  const body = text.slice(2, -1);
  let value = '';
  for (let index = 0; index < body.length; index += 1) {
    const char = body[index] ?? '';
    if (char !== '\\') {
      value += char;
      continue;
    }
    const next = body[index + 1] ?? '';
    const simple = ANSI_C_ESCAPES.get(next);
    if (simple !== undefined) {
      value += simple;
      index += 1;
    } else if (next === 'x' && /^[0-9a-fA-F]{2}$/.test(body.slice(index + 2, index + 4))) {
      value += String.fromCharCode(Number.parseInt(body.slice(index + 2, index + 4), 16));
      index += 3;
    } else if (/^[0-7]{3}$/.test(body.slice(index + 1, index + 4))) {
      value += String.fromCharCode(Number.parseInt(body.slice(index + 1, index + 4), 8) & 0xff);
      index += 3;
    } else {
      return refused(`the escape "\\${next}" in a $'…' string`);
    }
  }
  if (value.includes('\0')) return refused("a NUL byte in a $'…' string");
  return { kind: 'literal', value };
}

function decodeConcatenation(node: Node, braces: boolean): ShellWord | RefusedWord {
  const parts: (ShellWord | RefusedWord)[] = [];
  let cursor = node.startIndex;
  for (const child of node.children) {
    if (child.startIndex !== cursor) return refused('a word the parser split');
    cursor = child.endIndex;
    parts.push(decode(child, braces));
  }
  if (cursor !== node.endIndex) return refused('a word the parser split');
  return join(parts);
}

function join(parts: readonly (ShellWord | RefusedWord)[]): ShellWord | RefusedWord {
  let value = '';
  let text = '';
  let dynamic = false;
  const variables: string[] = [];
  for (const part of parts) {
    if (part.kind === 'refused') return part;
    if (part.kind === 'dynamic') {
      dynamic = true;
      text += part.text;
      variables.push(...part.variables);
    } else {
      value += part.value;
      text += part.value;
    }
  }
  return dynamic ? { kind: 'dynamic', text, variables } : { kind: 'literal', value };
}
