import { toVisibleText, visibleArguments, type LoopEventOf, type VisibleArgument, type VisibleText } from '@airlock/core';
import type { ToolInfo } from '@airlock/client';
import type { TerminalStyle } from './terminal-style';

/** A string as the person may safely see it: hidden characters as marked `\u{…}` escapes, never raw. */
export function showVisible(visible: VisibleText, style: TerminalStyle): string {
  return visible.segments.map((segment) => (segment.kind === 'text' ? segment.text : style.escape(segment.text))).join('');
}

export function showText(text: string, style: TerminalStyle): string {
  return showVisible(toVisibleText(text), style);
}

/**
 * The lines that show a tool call before it is decided, with the web card's rules: built from the very arguments
 * that will run, the code of a code-running tool first and whole, every value whole with its line count, hidden
 * characters escaped and counted.
 */
export function renderToolCall(event: LoopEventOf<'tool-start'>, style: TerminalStyle): string[] {
  const header = `${style.bold('⏺ ' + showText(event.toolName, style))}${event.awaitingConfirmation ? '' : style.dim('  (runs without asking)')}`;
  return [header, ...argumentLines(event.toolName, event.arguments, style)];
}

/**
 * The arguments a person edited the call to before allowing it (perhaps in another client), under the same rules:
 * what runs is these, not the proposal shown above them.
 */
export function renderEditedArguments(toolName: string, edited: Readonly<Record<string, unknown>>, style: TerminalStyle): string[] {
  return [style.warn('  Edited before it was allowed; it runs with:'), ...argumentLines(toolName, edited, style)];
}

function argumentLines(toolName: string, values: Readonly<Record<string, unknown>>, style: TerminalStyle): string[] {
  const args = visibleArguments(toolName, values);
  const lines: string[] = [];
  if (args.code !== null) lines.push(...argumentBlock(args.code.label, args.code.argument.value, style));
  for (const argument of args.others) lines.push(...argumentBlock(showVisible(argument.name, style), argument.value, style, argument));
  if (args.code === null && args.others.length === 0) lines.push(style.dim('  no arguments'));
  if (args.hiddenCount > 0) {
    const count = args.hiddenCount === 1 ? '1 hidden character' : `${args.hiddenCount} hidden characters`;
    lines.push(style.warn(`  ⚠ ${count} shown as ${style.escape('\\u{…}')}: what runs contains ${args.hiddenCount === 1 ? 'it' : 'them'}, not what a plain view would show`));
  }
  return lines;
}

function argumentBlock(label: string, value: VisibleText, style: TerminalStyle, argument?: VisibleArgument): string[] {
  const text = showVisible(value, style).split('\n');
  const single = text.length === 1 && argument?.format !== 'json';
  if (single) return [`  ${label}: ${text[0]}`];
  const count = value.lineCount === 1 ? '' : style.dim(` (${value.lineCount} lines)`);
  return [`  ${label}${count}:`, ...text.map((line) => `    ${style.dim('│')} ${line}`)];
}

/** What "Always allow" grants for this tool, the same scope the web card states. */
export function grantScope(toolName: string, tool: ToolInfo | undefined): string {
  if (tool === undefined || tool.annotations.executesCode || tool.annotations.exactGrants) {
    return `A runs this exact call again without asking, in this chat only`;
  }
  return `A runs any ${toolName} call without asking, in this chat only`;
}

const RESULT_LINES = 12;

/** A tool's result, escaped, cut to its first lines (the result is shown, not decided on). */
export function renderResult(result: string, style: TerminalStyle): string[] {
  const visible = toVisibleText(result);
  const lines = showVisible(visible, style).split('\n');
  const shown = lines.slice(0, RESULT_LINES).map((line) => `    ${style.dim('│')} ${line}`);
  if (lines.length > RESULT_LINES) shown.push(style.dim(`    … ${lines.length - RESULT_LINES} more lines`));
  return shown;
}
