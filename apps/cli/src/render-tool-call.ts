import { BLANK_NOTATIONS, blankRunsNote, blankRunsOfArguments, escapeQuoteMarks, reasonParts, toVisibleText, UNCHECKED_ARGUMENT_NOTE, UNCHECKED_INNER_NOTE, uncheckedArgumentsNote, UNDECLARED_ARGUMENT_NOTE, UNDECLARED_INNER_NOTE, undeclaredArgumentsNote, visibleArguments, visibleTextString, type DeclaredArguments, type LoopEventOf, type ShownReason, type VisibleArgument, type VisibleText } from '@airlock/core';
import type { ToolInfo } from '@airlock/client';
import { cardRows, DEFAULT_COLUMNS, type CardRow } from './card-rows';
import { noteLines } from './note-lines';
import type { TerminalStyle } from './terminal-style';

/** How a card is laid out: the terminal's width and height, and whether long values are cut. */
export interface CardLayout {
  /** Columns of the terminal. Default 100. */
  columns?: number;
  /** Rows of the terminal: a card asked about is cut to fit in them, with its question. Default 40. */
  rows?: number;
  /** Every row of every value, none cut (the person asked to see the whole call). Default false. */
  whole?: boolean;
}

/** Rows of one value shown on a card before it is cut, as the web card shows the first lines. */
export const VALUE_ROWS = 12;
/** Rows of an argument's name shown on a card before it is cut. */
export const NAME_ROWS = 2;
/** Rows of the terminal a card leaves for the note and the question under it, and the line above it. */
const ROWS_AROUND_CARD = 6;
/** The fewest rows a card is cut to, however small the terminal says it is. */
const MIN_CARD_ROWS = 10;
const DEFAULT_ROWS = 40;
/** The gutter before each row of a value: nothing a model wrote starts at the left edge. */
const GUTTER = '    ';
const ESCAPE_NOTATION = '\\u{…}';

/** A string as the person may safely see it: hidden characters as marked `\u{…}` escapes, never raw. */
export function showVisible(visible: VisibleText, style: TerminalStyle): string {
  return visible.segments.map((segment) => (segment.kind === 'text' ? segment.text : style.escape(segment.text))).join('');
}

export function showText(text: string, style: TerminalStyle): string {
  return showVisible(toVisibleText(text), style);
}

/** A name, an address or a server's message, on one line: a line break or tab in it is an escape too. */
export function showLine(text: string, style: TerminalStyle): string {
  return showVisible(toVisibleText(text, { singleLine: true }), style);
}

/**
 * A status or a note of the run on one row of the terminal, escaped and cut with `…`: it may quote a name a model chose,
 * and nothing it says may pass for lines of a card or push a card out of view.
 */
export function showRow(text: string, style: TerminalStyle, layout: CardLayout = {}): string {
  return shortName(text, (layout.columns ?? DEFAULT_COLUMNS) - 2, style);
}

/** How a cut card says it can be seen whole: `v` at its question. */
const WHOLE_CALL_HINT = 'type v to see the whole call';
/** The same for a card with no question under it: `v` at the next prompt, where a line is otherwise a message. */
const WHOLE_CALL_AT_PROMPT_HINT = 'type v at you› to see the whole call';

/** A card's lines, and whether something of the call was left out of them (it says so, and how to see it all). */
export interface ToolCallCard {
  lines: string[];
  cut: boolean;
}

/**
 * The lines that show a tool call before it is decided, with the web card's rules: built from the very arguments
 * that will run, the code of a code-running tool first, hidden characters escaped and counted, a value that is not a
 * string labelled with its JSON type (a string that reads as JSON with `text`), and each name the tool does not
 * declare marked, inside an object argument too: against the tool as the call was put up (the event's
 * `tool.declared`), or as listed (`tool`) for an event stored before tool-starts said. Each line fits the terminal; a value longer than `VALUE_ROWS` rows
 * is cut, saying how much more there is, unless `layout.whole`.
 */
export function toolCallCard(event: LoopEventOf<'tool-start'>, style: TerminalStyle, layout: CardLayout = {}, tool?: ToolInfo): ToolCallCard {
  const columns = layout.columns ?? DEFAULT_COLUMNS;
  const header = `${style.bold('⏺ ' + shortName(event.toolName, columns - 30, style))}${mcpSource(event.tool?.source ?? tool?.source, style)}${event.awaitingConfirmation ? '' : style.dim('  (not asked)')}`;
  // The card and its question fit in view: arguments past that are counted, not shown, so none of them (however
  // many, however long their names) can push the first ones, or the card's top, out of view.
  const rows = layout.whole === true ? Infinity : Math.max((layout.rows ?? DEFAULT_ROWS) - ROWS_AROUND_CARD, MIN_CARD_ROWS) - 1;
  const hint = event.awaitingConfirmation ? WHOLE_CALL_HINT : WHOLE_CALL_AT_PROMPT_HINT;
  const asked = askedLines(event, style, layout);
  const { lines, cut } = argumentLines(event.toolName, event.arguments, style, layout, { rows: rows - asked.length, hint, declared: event.tool?.declared, schema: tool?.inputSchema });
  return { lines: [header, ...lines, ...asked], cut };
}

/**
 * Why a rule had the call asked rather than deciding it, in the web card's words, on lines of their own (`reasonLine`).
 */
function askedLines(event: LoopEventOf<'tool-start'>, style: TerminalStyle, layout: CardLayout): string[] {
  if (event.askedBecause === undefined) return [];
  return noteLines(`Why you are asked: ${reasonLine(event.askedBecause.reason)}.`, layout).map((line) => style.warn(line));
}

/**
 * A reason the server gives, drawn part by part as it typed it and never parsed, on one line with the card's escapes:
 * a word of a call or rule as code in backticks, free text someone else wrote (a rule's reason) in `“…”`. A backtick
 * in either is `\u{60}`, so every backtick shown delimits a code part, and no line break of theirs starts a line. A
 * sentence stored before reasons were typed is plain text. `escape` styles each escape (default: as it is).
 */
export function reasonLine(reason: ShownReason, escape: (notation: string) => string = (notation) => notation): string {
  const line = (text: string, { code = false, ticks = true } = {}) =>
    toVisibleText(text, { singleLine: true, code })
      .segments.map((segment) => (segment.kind === 'escape' ? escape(segment.text) : ticks ? segment.text.replaceAll('`', escape('\\u{60}')) : segment.text))
      .join('');
  return reasonParts(reason)
    .map((part) => ('code' in part ? `\`${line(part.code, { code: true })}\`` : 'quote' in part ? `“${escapeQuoteMarks(line(part.quote), escape)}”` : line(part.text, { ticks: false })))
    .join('');
}

/** `toolCallCard`'s lines. */
export function renderToolCall(event: LoopEventOf<'tool-start'>, style: TerminalStyle, layout: CardLayout = {}, tool?: ToolInfo): string[] {
  return toolCallCard(event, style, layout, tool).lines;
}

/**
 * The arguments a person edited the call to before allowing it (perhaps in another client), under the same rules:
 * what runs is these, not the proposal shown above them. `tool`: the names the call's tool declared when it was put
 * up, or the tool as listed when its tool-start did not say.
 */
export function renderEditedArguments(toolName: string, edited: Readonly<Record<string, unknown>>, style: TerminalStyle, layout: CardLayout = {}, tool?: ToolInfo | { declared: DeclaredArguments }): string[] {
  const known = tool === undefined ? {} : 'declared' in tool ? { declared: tool.declared } : { schema: tool.inputSchema };
  return [style.warn('  Edited before it was allowed; it runs with:'), ...argumentLines(toolName, edited, style, layout, known).lines];
}

/** A tool's name on one line of at most `width` columns, escaped; a longer one is cut with `…`. */
/**
 * `  MCP · <server>` for a tool of an MCP server, as the web card's badge says it, escaped and cut: two servers may
 * give tools one name, and the server is what tells them apart. Empty for a built-in.
 */
function mcpSource(source: string | undefined, style: TerminalStyle): string {
  if (source?.startsWith('mcp:') !== true) return '';
  return style.dim(`  MCP · ${shortName(source.slice('mcp:'.length), 24, style)}`);
}

export function shortName(name: string, width: number, style: TerminalStyle): string {
  const [first, ...rest] = cardRows(toVisibleText(name, { singleLine: true }), Math.max(width, 16), style);
  return rest.length === 0 ? first!.text : `${first!.text}…`;
}

interface ArgumentLinesOptions {
  /** The most rows shown; the arguments that would go past them (leaving room for the notes) are only counted. Default no limit. */
  rows?: number;
  /** How a cut card says it can be seen whole. Default `WHOLE_CALL_HINT`. */
  hint?: string;
  /** The names the tool declared when the call was put up: each name not among them is marked. Default undefined: read from `schema`. */
  declared?: DeclaredArguments | undefined;
  /** The tool's JSON Schema as listed: each name it does not declare is marked. Default undefined, not known: none is. */
  schema?: ToolInfo['inputSchema'] | undefined;
}

function argumentLines(toolName: string, values: Readonly<Record<string, unknown>>, style: TerminalStyle, layout: CardLayout, { rows = Infinity, hint = WHOLE_CALL_HINT, declared, schema }: ArgumentLinesOptions = {}): ToolCallCard {
  const args = visibleArguments(toolName, values, { declared, schema });
  const blocks = [...(args.code === null ? [] : [argumentBlock(args.code.label, args.code.argument, style, layout, hint)]), ...args.others.map((argument) => argumentBlock(argument.name, argument, style, layout, hint))];
  const notes: string[] = [];
  if (args.hiddenCount > 0) {
    const count = args.hiddenCount === 1 ? '1 hidden character' : `${args.hiddenCount} hidden characters`;
    const note = `⚠ ${count} shown as ${ESCAPE_NOTATION}: what runs contains ${args.hiddenCount === 1 ? 'it' : 'them'}, not what a plain view would show`;
    notes.push(...noteLines(note, layout).map((line) => style.warn(line.replace(ESCAPE_NOTATION, style.escape(ESCAPE_NOTATION)))));
  }
  const inner = (unchecked: boolean) => args.inner.filter((name) => name.unchecked === unchecked).map((name) => name.path);
  if (args.undeclaredCount > 0) notes.push(...noteLines(`⚠ ${undeclaredArgumentsNote(args.undeclaredCount, inner(false))}`, layout).map((line) => style.warn(line)));
  if (args.uncheckedCount > 0) notes.push(...noteLines(`⚠ ${uncheckedArgumentsNote(args.uncheckedCount, inner(true))}`, layout).map((line) => style.warn(line)));
  const blankNote = blankRunsNote(blankRunsOfArguments(args));
  if (blankNote !== '') {
    const markers = new RegExp(BLANK_NOTATIONS.join('|'), 'g');
    notes.push(...noteLines(`⚠ ${blankNote}`, layout).map((line) => style.warn(line.replace(markers, (notation) => style.escape(notation)))));
  }
  const lines: string[] = [];
  let cut = false;
  if (blocks.length === 0) lines.push(style.dim('  no arguments'));
  const moreNote = (more: number) => noteLines(`⚠ ${more} more ${more === 1 ? 'argument' : 'arguments'} not shown (${blocks.length} in all): ${hint}`, layout);
  for (const [index, block] of blocks.entries()) {
    const more = blocks.length - index - 1;
    const room = rows - notes.length - lines.length - (more === 0 ? 0 : moreNote(more).length);
    // The first argument is shown however long (its value is cut already); no later one is shown in part.
    if (index > 0 && block.lines.length > room) {
      lines.push(...moreNote(blocks.length - index).map((line) => style.warn(line)));
      cut = true;
      break;
    }
    lines.push(...block.lines);
    cut ||= block.cut;
  }
  return { lines: [...lines, ...notes], cut };
}

function argumentBlock(name: string | VisibleText, argument: VisibleArgument, style: TerminalStyle, layout: CardLayout, hint: string): ToolCallCard {
  const columns = layout.columns ?? DEFAULT_COLUMNS;
  // Room for the row's `  ↪ ` before it and the `…:` after it.
  const nameRows = cardRows(typeof name === 'string' ? toVisibleText(name) : name, columns - 8, style);
  const cutLabel = layout.whole === true || nameRows.length <= NAME_ROWS ? nameRows : nameRows.slice(0, NAME_ROWS).map((row, index) => (index === NAME_ROWS - 1 ? { ...row, text: `${row.text}…` } : row));
  // After the name, on its last row: what the tool does not declare, and the value's type (see VisibleArgument's typeLabel).
  const warnings = [...(argument.undeclared ? [UNDECLARED_ARGUMENT_NOTE] : []), ...(argument.unchecked ? [UNCHECKED_ARGUMENT_NOTE] : []), ...innerMarks(argument)];
  const marks = [...warnings.map((warning) => style.warn(`⚠ ${warning}`)), ...(argument.typeLabel === null ? [] : [style.dim(`(${argument.typeLabel})`)])];
  const marksWidth = warnings.reduce((width, warning) => width + warning.length + 3, 0) + (argument.typeLabel === null ? 0 : argument.typeLabel.length + 3);
  const label = marks.length === 0 ? cutLabel : cutLabel.map((row, index) => (index === cutLabel.length - 1 ? { ...row, text: `${row.text} ${marks.join(' ')}`, width: row.width + marksWidth } : row));
  const rows = cardRows(argument.value, columns - GUTTER.length - 2, style);
  const [only] = rows;
  if (label.length === 1 && rows.length === 1 && argument.format !== 'json' && label[0]!.width + only!.width + 4 <= columns) {
    return { lines: [`  ${label[0]!.text}: ${only!.text}`], cut: false };
  }
  const lines = label.map((row, index) => (index === 0 ? `  ${row.text}` : `  ${style.dim('↪')} ${row.text}`));
  const lineCount = argument.value.lineCount;
  const characters = [...visibleTextString(argument.value)].length;
  lines[lines.length - 1] += `${lineCount === 1 ? '' : style.dim(` (${lineCount} lines)`)}:`;
  const shown = layout.whole === true || rows.length <= VALUE_ROWS ? rows : rows.slice(0, VALUE_ROWS);
  lines.push(...shown.map((row) => gutterRow(row, style)));
  if (shown.length < rows.length) {
    const more = rows.length - shown.length;
    const note = `… ${more} more ${more === 1 ? 'row' : 'rows'} not shown (${characters.toLocaleString('en')} characters in all): ${hint}`;
    lines.push(...noteLines(note, layout, GUTTER).map((line) => style.warn(line)));
  }
  return { lines, cut: shown.length < rows.length || cutLabel !== nameRows };
}

/** What an argument's value holds that the tool does not declare, or that could not be checked. */
function innerMarks(argument: VisibleArgument): string[] {
  return [...(argument.inner.some((name) => !name.unchecked) ? [UNDECLARED_INNER_NOTE] : []), ...(argument.inner.some((name) => name.unchecked) ? [UNCHECKED_INNER_NOTE] : [])];
}

function gutterRow(row: CardRow, style: TerminalStyle): string {
  return `${GUTTER}${style.dim(row.continued ? '↪' : '│')} ${row.text}`;
}

/** What to type at a decision prompt, said again after an answer it does not understand. */
export const ANSWER_HINT = 'Type a, A or d, optionally followed by a reason: "d use notes.txt instead"; v shows the whole call.';

/**
 * The note under a card before it asks: what "Always" grants and, when an undecided call times out, when. Unstyled,
 * in lines that fit the terminal.
 */
export function renderAskNote(event: LoopEventOf<'tool-start'>, tool: ToolInfo | undefined, layout: CardLayout = {}): string[] {
  const expires = event.expiresAt === null || event.expiresAt === undefined ? '' : `; undecided, it is denied at ${new Date(event.expiresAt).toLocaleTimeString()}`;
  // The tool as the call was put up, which an allow covers; the list (read at start) only for an event that does not say.
  return noteLines(`${grantScope(event.toolName, event.tool?.annotations ?? tool?.annotations)}${expires}`, layout);
}

/** What "Always allow" grants for this tool, the same scope the web card states. */
function grantScope(toolName: string, annotations: ToolInfo['annotations'] | undefined): string {
  if (annotations === undefined || annotations.executesCode || annotations.exactGrants) {
    return `A runs this exact call again without asking, in this chat only`;
  }
  return `A runs any ${toolName} call without asking, in this chat only`;
}

const RESULT_ROWS = 12;

/** A tool's result, escaped, laid out like a value and cut to its first rows (the result is shown, not decided on). */
export function renderResult(result: string, style: TerminalStyle, layout: CardLayout = {}): string[] {
  const rows = cardRows(toVisibleText(result), (layout.columns ?? DEFAULT_COLUMNS) - GUTTER.length - 2, style);
  const shown = rows.slice(0, RESULT_ROWS).map((row) => gutterRow(row, style));
  if (rows.length > RESULT_ROWS) shown.push(style.dim(`${GUTTER}… ${rows.length - RESULT_ROWS} more rows`));
  return shown;
}
