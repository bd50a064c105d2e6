import type { Decision, DecisionSource, LoopEventOf, RunEndReason, ToolOutcome } from '@airlock/core';
import { columnsOf, DEFAULT_COLUMNS } from './card-rows';
import { quotedLines } from './quoted-lines';
import { showLine, shortName, type CardLayout } from './render-tool-call';
import type { TerminalStyle } from './terminal-style';

const OUTCOMES: Record<ToolOutcome, { label: string; tone: 'good' | 'bad' | 'dim' }> = {
  executed: { label: 'ran', tone: 'good' },
  error: { label: 'failed', tone: 'bad' },
  denied: { label: 'not run: denied', tone: 'bad' },
  'timed-out': { label: 'not run: no decision in time', tone: 'bad' },
  cancelled: { label: 'not run: stopped', tone: 'dim' },
  disabled: { label: 'not run: not enabled or over the limit', tone: 'dim' },
  duplicate: { label: 'not run: same call as before', tone: 'dim' },
  interrupted: { label: 'interrupted when the server stopped; it may have done part of its work', tone: 'bad' },
};

const DECISIONS: Record<Decision, string> = { allow: '✓ allowed', deny: '✗ denied', timeout: '⌛ no decision in time', cancel: '✗ stopped' };
const SOURCES: Record<DecisionSource, string> = { user: '', grant: ' by an "always" grant', rule: ' by a rule', 'confirmation-off': ' (confirmation is off)', system: '' };

const RUN_ENDS: Record<RunEndReason, string> = {
  done: '',
  cancelled: '■ stopped',
  error: '✗ the run failed',
  'tool-budget': '■ tool call limit reached',
};

/**
 * `for echo (call_0_1): `: which call a decision or an outcome is about, said when it is not the card shown last (the
 * calls of one reply are all shown, and asked about, before the first of them runs). The name and the id are the
 * model's: each on one row, escaped and cut.
 */
export function callLabel(toolName: string, toolCallId: string, style: TerminalStyle): string {
  const characters = [...toolCallId];
  const id = characters.length <= 12 ? toolCallId : `…${characters.slice(-8).join('')}`;
  return `for ${shortName(toolName, 30, style)} (${showLine(id, style)}): `;
}

/** `call`: the `callLabel` of the call, when it is not the card shown last. */
export function outcomeLine(event: LoopEventOf<'tool-end'>, style: TerminalStyle, call = ''): string {
  const { label, tone } = OUTCOMES[event.outcome];
  const paint = tone === 'good' ? style.good : tone === 'bad' ? style.bad : style.dim;
  return `  ${call}${paint(`→ ${label}`)}`;
}

/**
 * `reason` and `rule` come already made safe to print (escaped like the card). `elsewhere`: the decision withdrew the
 * question this terminal was asking, so a person's allow or deny was made in another client. `call`: the
 * `callLabel` of the call, when it is not the card shown last.
 */
export function decisionLine(event: LoopEventOf<'tool-decision'>, reason: string, rule = '', { elsewhere = false, call = '' } = {}): string {
  const byPerson = elsewhere && (event.decision === 'allow' || event.decision === 'deny') ? ' in another client' : '';
  const source = event.source === 'rule' && rule !== '' ? ` by rule: ${rule}` : event.source === 'user' ? byPerson : SOURCES[event.source];
  const because = reason === '' || (event.source === 'rule' && reason === rule) ? '' : `: ${reason}`;
  return `  ${call}${DECISIONS[event.decision]}${source}${because}`;
}

/** The gutter before each row of a decision line after its first, `    ↪ `, its arrow counted as two columns (as any character outside ASCII). */
const GUTTER_COLUMNS = 7;

/** A style's escape sequence (SGR: ESC, `[`, numbers, `m`), which takes no column. */
const STYLE_SEQUENCE = new RegExp(`${String.fromCharCode(0x1b)}\\[[0-9;]*m`, 'y');

/**
 * A `decisionLine` laid out in rows of at most the terminal's width: each of its lines (a reason keeps its line
 * breaks) wrapped here, every row after a line's first behind the `↪` gutter. Left to the terminal's wrapping, a
 * rule that quotes a call's whole arguments put the model's words at the left edge, where `Calling: terminal` or
 * `  command: …` would pass for the client's own lines. The line comes made safe to print (escaped like the card), its
 * only control characters the style's own sequences, which take no column.
 */
export function decisionRows(line: string, style: TerminalStyle, layout: CardLayout = {}): string[] {
  const columns = Math.max(layout.columns ?? DEFAULT_COLUMNS, GUTTER_COLUMNS + 16);
  const gutter = `    ${style.dim('↪')} `;
  const rows: string[] = [];
  for (const text of line.split('\n')) {
    let row = '';
    let used = 0;
    let width = columns;
    for (let index = 0; index < text.length; ) {
      STYLE_SEQUENCE.lastIndex = index;
      const sequence = STYLE_SEQUENCE.exec(text);
      if (sequence !== null) {
        row += sequence[0];
        index += sequence[0].length;
        continue;
      }
      const codePoint = text.codePointAt(index)!;
      const char = String.fromCodePoint(codePoint);
      const size = columnsOf(codePoint);
      if (used + size > width) {
        rows.push(row);
        row = gutter;
        used = 0;
        width = columns - GUTTER_COLUMNS;
      }
      row += char;
      used += size;
      index += char.length;
    }
    rows.push(row);
  }
  return rows;
}

/**
 * The run's end, on as many rows as its error takes. The error, a model server's or the network's words, may say
 * anything (a model server may quote what the model wrote): it is laid out as `quotedLines`.
 */
export function runEndLines(event: LoopEventOf<'run-end'>, style: TerminalStyle, layout: CardLayout = {}): string[] {
  const label = RUN_ENDS[event.reason];
  if (event.reason !== 'error' || event.error === undefined || event.error === '') return label === '' ? [] : [label];
  return quotedLines(`${label}: ${event.error}`, style, layout);
}
