import { createRequire } from 'node:module';
import { Language, Parser, type Node, type Tree } from 'web-tree-sitter';
import { innerCommands, type ReachableWords } from './command-wrappers';
import { decodeWord, type ShellWord } from './shell-word';

/** Longer command lines are not parsed: no command rule can allow them, and deny rules cannot see into them. */
export const MAX_COMMAND_LINE_CHARS = 64 * 1024;
const MAX_DEPTH = 128;
/** How deep `bash -c '…'` and `eval …` are followed for deny rules. */
const MAX_NESTED_LINES = 4;

/** One simple command the shell would run: its name and arguments, with no assignment or redirection to a file. */
export interface SimpleCommand {
  readonly words: readonly ShellWord[];
}

/**
 * A command line as the rules see it. `seen`: every construct in it is understood, and `commands` is what it
 * runs. `refused`: something in it cannot be seen through (`reason` names the first). Either way, `reachable`
 * holds every command found anywhere in it, also inside substitutions, behind wrappers and in `bash -c`
 * strings: what deny rules are checked against.
 */
export type CommandLine =
  | { kind: 'seen'; commands: readonly SimpleCommand[]; reachable: readonly ReachableWords[] }
  | { kind: 'refused'; reason: string; reachable: readonly ReachableWords[] };

const LIST_OPERATORS = new Set(['&&', '||']);
const PIPE_OPERATORS = new Set(['|', '|&']);
const STATEMENT_SEPARATORS = new Set([';', '&', '\n']);
const NULL_DEVICE = '/dev/null';
const FILE_TO_NULL = new Set(['>', '>>', '&>', '&>>', '<', '>|']);
const DUPLICATE_FD = new Set(['>&', '<&']);
const CLOSE_FD = new Set(['>&-', '<&-']);
const LINE_CONTINUATION = /\\\r?\n/g;
/** What may stand before a `#` that starts a comment: nothing, a blank, or an operator character. */
const COMMENT_MAY_FOLLOW = new Set([' ', '\t', '\n', '\r', ';', '&', '|', '(', ')', '<', '>']);
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
export async function parseCommandLine(text: string): Promise<CommandLine> {
  const parser = await bashParser();
  if (text.length > MAX_COMMAND_LINE_CHARS) {
    return { kind: 'refused', reason: `a command line longer than ${MAX_COMMAND_LINE_CHARS} characters`, reachable: [] };
  }
  const reachable: ReachableWords[] = [];
  const line = withTree(parser, text, (root) => seeThrough(root));
  collectEveryReading(parser, text, reachable);
  await followNestedLines(parser, reachable);
  return line.kind === 'seen' ? { kind: 'seen', commands: line.commands, reachable } : { kind: 'refused', reason: line.reason, reachable };
}

function withTree<T>(parser: Parser, text: string, use: (root: Node) => T): T {
  const tree: Tree | null = parser.parse(text);
  if (tree === null) throw new Error('The bash parser returned no tree.');
  try {
    return use(tree.rootNode);
  } finally {
    tree.delete();
  }
}

/**
 * Collects the commands of `text` for deny rules, also as the shell would read it where the parser reads it
 * otherwise: the parser takes a backslash-newline for a space where the shell joins the words (`r\<newline>m`
 * is `rm`), and takes `#` inside a word (`x#y`) for the start of a comment, hiding the rest of the line.
 */
function collectEveryReading(parser: Parser, text: string, reachable: ReachableWords[]): void {
  const readings = [text];
  if (text.includes('\\\n') || text.includes('\\\r\n')) readings.push(text.replace(LINE_CONTINUATION, ''));
  for (const reading of readings) {
    let current = reading;
    for (let attempt = 0; attempt < MAX_COMMENT_REREADS; attempt += 1) {
      const misread = withTree(parser, current, (root) => {
        collectReachable(root, reachable);
        if (root.hasError) reachable.push(...roughCommands(current));
        return misreadComment(root, current);
      });
      if (misread === undefined) break;
      current = `${current.slice(0, misread)}\\${current.slice(misread)}`;
    }
  }
}

/**
 * A crude split of a line the parser could not make sense of, so that a deny rule still sees what error
 * recovery may have swallowed: cut at every operator, parenthesis, brace and backquote, words at blanks, quotes dropped.
 */
function roughCommands(text: string): ReachableWords[] {
  return text
    .split(/[;&|()`{}\n]|\$\(/)
    .map((part) => part.replace(/["'\\]/g, '').split(/\s+/).filter((word) => word !== ''))
    .filter((words) => words.length > 0);
}

/** Where the parser saw a comment that the shell would not: a `#` that does not start a word. */
function misreadComment(root: Node, text: string): number | undefined {
  const stack: Node[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.type === 'comment') {
      const before = text[node.startIndex - 1];
      if (before !== undefined && !COMMENT_MAY_FOLLOW.has(before)) return node.startIndex;
    }
    stack.push(...node.children);
  }
  return undefined;
}

async function followNestedLines(parser: Parser, reachable: ReachableWords[]): Promise<void> {
  let checked = 0;
  for (let level = 0; level < MAX_NESTED_LINES; level += 1) {
    const lines: string[] = [];
    for (; checked < reachable.length; checked += 1) {
      const inner = innerCommands(reachable[checked] ?? []);
      reachable.push(...inner.words);
      lines.push(...inner.commandLines);
    }
    for (const nested of lines) {
      if (nested.length <= MAX_COMMAND_LINE_CHARS) collectEveryReading(parser, nested, reachable);
    }
    if (lines.length === 0) return;
  }
}

/** Every `command` node anywhere, also in parts the parser could not make sense of. Iterative: no depth limit. */
function collectReachable(root: Node, reachable: ReachableWords[]): void {
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
      if (words.length > 0) reachable.push(words);
    }
    stack.push(...node.children);
  }
}

function isArgument(node: Node): boolean {
  return node.isNamed && !node.type.endsWith('redirect') && node.type !== 'variable_assignment' && node.type !== 'comment';
}

type Seen = { kind: 'seen'; commands: SimpleCommand[] } | { kind: 'refused'; reason: string };

function seeThrough(root: Node): Seen {
  if (root.hasError) return { kind: 'refused', reason: 'shell syntax the parser could not make sense of' };
  const commands: SimpleCommand[] = [];
  const problem = statements(root, STATEMENT_SEPARATORS, commands, 0);
  if (problem !== undefined) return { kind: 'refused', reason: problem };
  if (commands.length === 0) return { kind: 'refused', reason: 'no command' };
  return { kind: 'seen', commands };
}

/** A run of statements joined by `operators`, every gap between them only blanks. Returns why not, if not. */
function statements(node: Node, operators: ReadonlySet<string>, commands: SimpleCommand[], depth: number): string | undefined {
  if (depth > MAX_DEPTH) return 'commands nested too deeply';
  let cursor = node.startIndex;
  for (const child of node.children) {
    const gap = node.text.slice(cursor - node.startIndex, child.startIndex - node.startIndex);
    if (!/^[\s]*$/.test(gap.replace(LINE_CONTINUATION, ''))) return 'text the parser skipped';
    cursor = child.endIndex;
    if (!child.isNamed) {
      if (!operators.has(child.type)) return `the operator "${child.type}"`;
      continue;
    }
    const problem = statement(child, commands, depth + 1);
    if (problem !== undefined) return problem;
  }
  const tail = node.text.slice(cursor - node.startIndex);
  return /^\s*$/.test(tail.replace(LINE_CONTINUATION, '')) ? undefined : 'text the parser skipped';
}

function statement(node: Node, commands: SimpleCommand[], depth: number): string | undefined {
  switch (node.type) {
    case 'command':
      return simpleCommand(node, commands);
    case 'list':
      return statements(node, LIST_OPERATORS, commands, depth);
    case 'pipeline':
      return statements(node, PIPE_OPERATORS, commands, depth);
    case 'redirected_statement':
      return redirectedStatement(node, commands, depth);
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

function redirectedStatement(node: Node, commands: SimpleCommand[], depth: number): string | undefined {
  const [body, ...redirects] = node.namedChildren.filter((child) => child !== null);
  if (body === undefined) return 'a redirection without a command';
  for (const redirect of redirects) {
    const problem = redirectProblem(redirect);
    if (problem !== undefined) return problem;
  }
  if (node.children.some((child) => !child.isNamed)) return 'a redirection the parser split';
  return statement(body, commands, depth + 1);
}

function simpleCommand(node: Node, commands: SimpleCommand[]): string | undefined {
  const words: ShellWord[] = [];
  let cursor = -1;
  for (const child of node.children) {
    if (cursor !== -1) {
      const gap = node.text.slice(cursor - node.startIndex, child.startIndex - node.startIndex).replace(LINE_CONTINUATION, '');
      if (!/^[ \t]+$/.test(gap)) return 'words the parser split differently from the shell';
    }
    cursor = child.endIndex;
    if (!child.isNamed) return `the token "${child.type}" in a command`;
    if (child.type === 'variable_assignment') return 'an environment assignment before the command';
    if (child.type.endsWith('redirect')) {
      const problem = redirectProblem(child);
      if (problem !== undefined) return problem;
      continue;
    }
    if (child.type !== 'command_name' && words.length === 0) return `a ${child.type.replaceAll('_', ' ')} before the command name`;
    const word = decodeWord(child);
    if (word.kind === 'refused') return word.reason;
    words.push(word);
  }
  if (words.length === 0) return 'a command without a name';
  commands.push({ words });
  return undefined;
}

/** Only redirections that neither write nor read a file: to or from /dev/null, and copying or closing descriptors. */
function redirectProblem(node: Node): string | undefined {
  if (node.type === 'heredoc_redirect') return 'a here-document (<<)';
  if (node.type === 'herestring_redirect') return 'a here-string (<<<)';
  if (node.type !== 'file_redirect') return `a ${node.type.replaceAll('_', ' ')}`;
  let operator: string | undefined;
  let destination: Node | undefined;
  for (const child of node.children) {
    if (!child.isNamed) operator = operator === undefined ? child.type : 'several';
    else if (child.type === 'file_descriptor') {
      if (!/^[0-9]$/.test(child.text) || destination !== undefined || operator !== undefined) return 'a redirection of a named descriptor';
    } else if (destination === undefined) destination = child;
    else return 'a redirection to several words';
  }
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
