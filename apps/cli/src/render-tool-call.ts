import { BLANK_NOTATIONS, blankRunsNote, blankRunsOfArguments, escapeQuoteMarks, reasonParts, toVisibleText, UNCHECKED_ARGUMENT_NOTE, UNCHECKED_INNER_NOTE, uncheckedArgumentsNote, UNDECLARED_ARGUMENT_NOTE, UNDECLARED_INNER_NOTE, undeclaredArgumentsNote, unshownDefaultsNote, visibleArguments, visibleTextString, type DeclaredArguments, type LoopEventOf, type ShownReason, type VisibleArgument, type VisibleText } from '@airlock/core';
import type { ToolInfo } from '@airlock/client';
import { cardRows, columnsOf, DEFAULT_COLUMNS, type CardRow } from './card-rows';
import { noteLines } from './note-lines';
import { plainStyle, type TerminalStyle } from './terminal-style';

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
/** The fewest rows of the first argument's value a card keeps before it sums its notes up in one row. */
const FIRST_VALUE_ROWS = 3;
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

/**
 * The card's note of its escapes: `hidden` characters that hide or disguise text, and `nonAscii` outside ASCII in the
 * code, plain letters among them, which are not called hidden.
 */
function escapedNote(hidden: number, nonAscii: number): string {
  const them = hidden + nonAscii === 1 ? 'it' : 'them';
  const hiddenCount = hidden === 1 ? '1 hidden character' : `${hidden} hidden characters`;
  if (nonAscii === 0) return `⚠ ${hiddenCount} shown as ${ESCAPE_NOTATION}: what runs contains ${them}, not what a plain view would show`;
  const outside = `${nonAscii} ${nonAscii === 1 ? 'character' : 'characters'} outside ASCII in the code`;
  return `⚠ ${hidden === 0 ? outside : `${hiddenCount} and ${outside}`} shown as ${ESCAPE_NOTATION}: what runs contains ${them}, and a letter outside ASCII may be drawn like a quote or other syntax it is not`;
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
 * is cut, saying how much more there is, unless `layout.whole`. The card fits the terminal's rows with its question
 * under it (see `argumentLines`): its name and the start of its first argument always stay in view.
 */
export function toolCallCard(event: LoopEventOf<'tool-start'>, style: TerminalStyle, layout: CardLayout = {}, tool?: ToolInfo): ToolCallCard {
  const columns = layout.columns ?? DEFAULT_COLUMNS;
  const { lines: header, cut: nameCut } = headerLines(event.toolName, event.tool?.source ?? tool?.source, event.awaitingConfirmation ? '' : '  (not asked)', style, columns, layout.whole === true);
  // The card and its question fit in view: the rows under the card are its question's (the note on what "Always"
  // grants, and the prompt), or for a call not asked about the line after it.
  const below = event.awaitingConfirmation ? renderAskNote(event, tool, layout).length + rowsOf(decisionPrompt(event.toolName, plainStyle, layout), columns) : 1;
  const rows = layout.whole === true ? Infinity : (layout.rows ?? DEFAULT_ROWS) - below - header.length;
  const hint = event.awaitingConfirmation ? WHOLE_CALL_HINT : WHOLE_CALL_AT_PROMPT_HINT;
  const { lines, cut } = argumentLines(event.toolName, event.arguments, style, layout, { rows, hint, declared: event.tool?.declared, schema: tool?.inputSchema, defaults: unshownDefaultsLines(event, style, layout), asked: askedLines(event, style, layout) });
  return { lines: [...header, ...lines], cut: cut || nameCut };
}

/**
 * The card's first rows: `⏺ <tool>  MCP · <server>`, the tool's and the server's names whole, wrapped over rows rather
 * than cut. Cut at a row's width, `…_dry_run` and `…_for_real` of one long start gave identical cards, and `a` ran the
 * one the card could not show. Each row after the first starts with the card's indent, so none starts at the edge. A
 * tool's name longer than `NAME_ROWS` rows (no tool offered has one from 36 columns on: an MCP tool's is at most 64
 * characters) is cut there with `…` unless `whole`, so that a made-up one cannot fill the screen.
 */
function headerLines(toolName: string, source: string | undefined, after: string, style: TerminalStyle, columns: number, whole: boolean): { lines: string[]; cut: boolean } {
  const width = Math.max(columns - 4, 16);
  const nameRows = cardRows(toVisibleText(toolName, { singleLine: true }), width, style);
  const cut = !whole && nameRows.length > NAME_ROWS;
  const shownRows = cut ? nameRows.slice(0, NAME_ROWS).map((row, index) => (index === NAME_ROWS - 1 ? { ...row, text: `${row.text}…`, width: row.width + 1 } : row)) : nameRows;
  const lines = shownRows.map((row, index) => ({ text: style.bold(`${index === 0 ? '⏺' : ' '} ${row.text}`), width: row.width + 2 }));
  const tail: { text: string; width: number }[] = [];
  const server = source?.startsWith('mcp:') === true ? cardRows(toVisibleText(source.slice('mcp:'.length), { singleLine: true }), width - 8, style) : [];
  server.forEach((row, index) => tail.push({ text: style.dim(`${index === 0 ? '  MCP · ' : '        '}${row.text}`), width: row.width + 8 }));
  if (after !== '') tail.push({ text: style.dim(after), width: after.length });
  const last = lines[lines.length - 1]!;
  if (tail.length > 0 && server.length <= 1 && last.width + tail.reduce((sum, part) => sum + part.width, 0) <= width) {
    last.text += tail.map((part) => part.text).join('');
    return { lines: lines.map((line) => line.text), cut };
  }
  return { lines: [...lines.map((line) => line.text), ...tail.map((part) => part.text)], cut };
}

/** The question's words after the call's name; a narrow terminal breaks the question between them, never inside one. */
const QUESTION_WORDS = ['[a]llow /', '[A]lways /', '[d]eny (reason)'];

/**
 * The question under a card asked about, before what is typed: one row where it fits, else broken between its words
 * over as many rows as it needs (each after the first indented as the first), so no word is split by the terminal.
 */
export function decisionPrompt(toolName: string, style: TerminalStyle, layout: CardLayout = {}): string {
  const columns = layout.columns ?? DEFAULT_COLUMNS;
  const nameWidth = Math.floor(columns / 3);
  // A column is kept for the cursor after the prompt.
  const room = Math.max(columns - 1, 20);
  const rows: { question: string[]; width: number }[] = [{ question: [], width: 2 + shortNameWidth(toolName, nameWidth) }];
  for (const word of [...QUESTION_WORDS, '›']) {
    const row = rows[rows.length - 1]!;
    // The arrow is followed by a blank, where the answer starts.
    const width = word === '›' ? 2 : word.length;
    if (row.width + 1 + width <= room) {
      row.question.push(word);
      row.width += 1 + width;
    } else rows.push({ question: [word], width: 2 + width });
  }
  const shown = rows.map(({ question }, index) => {
    const ends = question.at(-1) === '›';
    const words = ends ? question.slice(0, -1) : question;
    const head = index === 0 ? `  ${shortName(toolName, nameWidth, style)}` : ' ';
    return [head, ...(words.length > 0 ? [style.bold(words.join(' '))] : []), ...(ends ? ['›'] : [])].join(' ');
  });
  return `${shown.join('\n')} `;
}

/** How many columns shortName's answer takes, unstyled. */
function shortNameWidth(name: string, width: number): number {
  const [first, ...rest] = cardRows(toVisibleText(name, { singleLine: true }), Math.max(width, 16), plainStyle);
  return first!.width + (rest.length === 0 ? 0 : 1);
}

/** The rows an unstyled line takes in a terminal of `columns`, with the cursor after it. */
function rowsOf(line: string, columns: number): number {
  let rows = 0;
  for (const row of line.split('\n')) {
    let width = 0;
    for (const char of row) width += columnsOf(char.codePointAt(0)!);
    rows += Math.floor(width / columns) + 1;
  }
  return rows;
}

/** That the tool may run with defaults the card does not show, and why, in the web card's words (`unshownDefaultsNote`). */
function unshownDefaultsLines(event: LoopEventOf<'tool-start'>, style: TerminalStyle, layout: CardLayout): string[] {
  const reasons = event.tool?.unshownDefaults;
  if (reasons === undefined) return [];
  return noteLines(`⚠ ${unshownDefaultsNote(reasons)}`, layout).map((line) => style.warn(line));
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
export function shortName(name: string, width: number, style: TerminalStyle): string {
  const [first, ...rest] = cardRows(toVisibleText(name, { singleLine: true }), Math.max(width, 16), style);
  return rest.length === 0 ? first!.text : `${first!.text}…`;
}

interface ArgumentLinesOptions {
  /**
   * The most rows shown. Past them, arguments after the first are only counted; then the first argument's value is
   * cut to fit, and its notes summed up in one row. Default no limit.
   */
  rows?: number;
  /** How a cut card says it can be seen whole. Default `WHOLE_CALL_HINT`. */
  hint?: string;
  /** The names the tool declared when the call was put up: each name not among them is marked. Default undefined: read from `schema`. */
  declared?: DeclaredArguments | undefined;
  /** The tool's JSON Schema as listed: each name it does not declare is marked. Default undefined, not known: none is. */
  schema?: ToolInfo['inputSchema'] | undefined;
  /** A note's lines after the arguments' own notes: that the tool may run with defaults not shown. Default none. */
  defaults?: string[];
  /** A note's lines after the arguments' own notes (why the call is asked). Default none. */
  asked?: string[];
}

/**
 * The lines of a call's arguments, fitted to `rows`: as many as fit whole, the first one always. When even that does
 * not fit, the first value is cut to the rows left (however long, the card keeps its name, its start and where it is
 * cut in view, over any number of notes a model can add), down to `FIRST_VALUE_ROWS`; below that, the notes are
 * summed up in one row, and then the cut is said in its short form, down to one row of the value.
 */
function argumentLines(toolName: string, values: Readonly<Record<string, unknown>>, style: TerminalStyle, layout: CardLayout, { rows = Infinity, hint = WHOLE_CALL_HINT, declared, schema, defaults = [], asked = [] }: ArgumentLinesOptions = {}): ToolCallCard {
  const args = visibleArguments(toolName, values, { declared, schema });
  const laidOut = [...(args.code === null ? [] : [layOutArgument(args.code.label, args.code.argument, style, layout)]), ...args.others.map((argument) => layOutArgument(argument.name, argument, style, layout))];
  const notes: string[][] = [];
  if (args.hiddenCount > 0) {
    const note = escapedNote(args.hiddenCount - args.nonAsciiCount, args.nonAsciiCount);
    notes.push(noteLines(note, layout).map((line) => style.warn(line.replace(ESCAPE_NOTATION, style.escape(ESCAPE_NOTATION)))));
  }
  const inner = (unchecked: boolean) => args.inner.filter((name) => name.unchecked === unchecked).map((name) => name.path);
  if (args.undeclaredCount > 0) notes.push(noteLines(`⚠ ${undeclaredArgumentsNote(args.undeclaredCount, inner(false))}`, layout).map((line) => style.warn(line)));
  if (args.uncheckedCount > 0) notes.push(noteLines(`⚠ ${uncheckedArgumentsNote(args.uncheckedCount, inner(true))}`, layout).map((line) => style.warn(line)));
  const blankNote = blankRunsNote(blankRunsOfArguments(args));
  if (blankNote !== '') {
    const markers = new RegExp(BLANK_NOTATIONS.join('|'), 'g');
    notes.push(noteLines(`⚠ ${blankNote}`, layout).map((line) => style.warn(line.replace(markers, (notation) => style.escape(notation)))));
  }
  if (defaults.length > 0) notes.push(defaults);
  if (asked.length > 0) notes.push(asked);
  if (laidOut.length === 0) return { lines: [style.dim('  no arguments'), ...notes.flat()], cut: false };

  const [first, ...later] = laidOut as [ArgumentLayout, ...ArgumentLayout[]];
  const moreNote = (more: number) => noteLines(`⚠ ${more} more ${more === 1 ? 'argument' : 'arguments'} not shown (${laidOut.length} in all): ${hint}`, layout).map((line) => style.warn(line));
  const fullNotes = notes.flat();
  const firstBlock = argumentBlock(first, style, layout, { hint });
  // The first argument with its value cut at VALUE_ROWS, and as many after it as fit whole.
  const lines = [...firstBlock.lines];
  let cut = firstBlock.cut;
  for (const [index, argument] of later.entries()) {
    const block = argumentBlock(argument, style, layout, { hint });
    const more = later.length - index - 1;
    if (lines.length + block.lines.length + (more === 0 ? 0 : moreNote(more).length) + fullNotes.length > rows) {
      lines.push(...moreNote(later.length - index));
      cut = true;
      break;
    }
    lines.push(...block.lines);
    cut ||= block.cut;
  }
  if (lines.length + fullNotes.length <= rows) return { lines: [...lines, ...fullNotes], cut };

  // Short of rows: only the first argument, its value cut to the rows left, the rest counted under it.
  const counted = [...(later.length === 0 ? [] : moreNote(later.length)), ...fullNotes];
  const summary = summaryNote({ arguments: later.length, notes: notes.length, hint }, style, layout);
  const shortest = summary.length < counted.length ? summary : counted;
  const withTail = (block: ToolCallCard, tail: string[]): ToolCallCard => ({ lines: [...block.lines, ...tail], cut: block.cut || later.length > 0 || tail === summary });
  const fitted = (tail: string[], { short = false, fewest = Math.min(FIRST_VALUE_ROWS, valueRowCount(first)) } = {}) => {
    for (let valueRows = Math.min(valueRowCount(first), VALUE_ROWS); valueRows >= fewest; valueRows--) {
      const block = argumentBlock(first, style, layout, { hint, valueRows, short });
      if (block.lines.length + tail.length <= rows) return withTail(block, tail);
    }
    return undefined;
  };
  // However small the terminal, the card keeps its name, the first row of the value and where it is cut.
  return fitted(counted) ?? fitted(shortest) ?? fitted(shortest, { short: true, fewest: 1 }) ?? withTail(argumentBlock(first, style, layout, { hint, valueRows: 1, short: true }), shortest);
}

/** One row, when short of rows, standing for the arguments after the first and the notes left out. */
function summaryNote({ arguments: more, notes, hint }: { arguments: number; notes: number; hint: string }, style: TerminalStyle, layout: CardLayout): string[] {
  const parts = [...(more === 0 ? [] : [`${more} more ${more === 1 ? 'argument' : 'arguments'}`]), ...(notes === 0 ? [] : [`${notes} ${notes === 1 ? 'note' : 'notes'}`])];
  if (parts.length === 0) return [];
  return noteLines(`⚠ ${parts.join(' and ')} not shown: ${hint}`, layout).map((line) => style.warn(line));
}

/** An argument laid out for a card, its value to be cut at as many rows as there is room for. */
type ArgumentLayout =
  /** On one line (`  name: value`), where it fits whole. */
  | { line: string }
  /** Its label's rows, then its value's behind the gutter. */
  | {
      label: string[];
      rows: CardRow[];
      /** Characters of the value in all. */
      characters: number;
      /** Its name was cut at `NAME_ROWS`. */
      nameCut: boolean;
    };

/** Rows of an argument's value. */
function valueRowCount(argument: ArgumentLayout): number {
  return 'line' in argument ? 1 : argument.rows.length;
}

function layOutArgument(name: string | VisibleText, argument: VisibleArgument, style: TerminalStyle, layout: CardLayout): ArgumentLayout {
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
    return { line: `  ${label[0]!.text}: ${only!.text}` };
  }
  const lines = label.map((row, index) => (index === 0 ? `  ${row.text}` : `  ${style.dim('↪')} ${row.text}`));
  const lineCount = argument.value.lineCount;
  lines[lines.length - 1] += `${lineCount === 1 ? '' : style.dim(` (${lineCount} lines)`)}:`;
  return { label: lines, rows, characters: [...visibleTextString(argument.value)].length, nameCut: cutLabel !== nameRows };
}

interface ArgumentBlockOptions {
  /** How a cut value says it can be seen whole. */
  hint: string;
  /** Rows of the value shown before it is cut. Default `VALUE_ROWS`. */
  valueRows?: number;
  /** Say the cut in its short form, on fewer rows: how many rows more, and the hint. Default false. */
  short?: boolean;
}

function argumentBlock(argument: ArgumentLayout, style: TerminalStyle, layout: CardLayout, { hint, valueRows = VALUE_ROWS, short = false }: ArgumentBlockOptions): ToolCallCard {
  if ('line' in argument) return { lines: [argument.line], cut: false };
  const { rows } = argument;
  const shown = layout.whole === true || rows.length <= valueRows ? rows : rows.slice(0, valueRows);
  const lines = [...argument.label, ...shown.map((row) => gutterRow(row, style))];
  if (shown.length < rows.length) {
    const more = rows.length - shown.length;
    const note = short
      ? `… ${more} more ${more === 1 ? 'row' : 'rows'}: ${hint}`
      : `… ${more} more ${more === 1 ? 'row' : 'rows'} not shown (${argument.characters.toLocaleString('en')} characters in all): ${hint}`;
    lines.push(...noteLines(note, layout, GUTTER).map((line) => style.warn(line)));
  }
  return { lines, cut: shown.length < rows.length || argument.nameCut };
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

/**
 * The question after a lone `A` (what `a` becomes with Caps Lock on), in place of the note under the card and the
 * question: what "Always" grants, in the note's words, and that only `y` grants it. Unstyled but for its end, in rows
 * that fit the terminal.
 */
export function alwaysPrompt(event: LoopEventOf<'tool-start'>, tool: ToolInfo | undefined, style: TerminalStyle, layout: CardLayout = {}): string {
  const rows = noteLines(`Always allow? ${grantScope(event.toolName, event.tool?.annotations ?? tool?.annotations)}. ${ALWAYS_ANSWERS}`, layout);
  const last = rows.pop()!;
  const styled = last.endsWith(ALWAYS_ANSWERS) ? `${last.slice(0, -ALWAYS_ANSWERS.length)}${style.bold(ALWAYS_ANSWERS)}` : last;
  return `${[...rows, styled].join('\n')} › `;
}

const ALWAYS_ANSWERS = 'y grants it, anything else goes back';

/** What "Always allow" grants for this tool, the same scope the web card states; the name escaped as on the card. */
function grantScope(toolName: string, annotations: ToolInfo['annotations'] | undefined): string {
  if (annotations === undefined || annotations.executesCode || annotations.exactGrants) {
    return `A runs this exact call again without asking, in this chat only`;
  }
  return `A runs any ${showLine(toolName, plainStyle)} call without asking, in this chat only`;
}

const RESULT_ROWS = 12;

/** A tool's result, escaped, laid out like a value and cut to its first rows (the result is shown, not decided on). */
export function renderResult(result: string, style: TerminalStyle, layout: CardLayout = {}): string[] {
  const rows = cardRows(toVisibleText(result), (layout.columns ?? DEFAULT_COLUMNS) - GUTTER.length - 2, style);
  const shown = rows.slice(0, RESULT_ROWS).map((row) => gutterRow(row, style));
  if (rows.length > RESULT_ROWS) shown.push(style.dim(`${GUTTER}… ${rows.length - RESULT_ROWS} more rows`));
  return shown;
}
