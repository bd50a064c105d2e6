import type { Decision, DecisionSource, LoopEventOf, RunEndReason, ToolOutcome } from '@airlock/core';
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
const SOURCES: Record<DecisionSource, string> = { user: '', grant: ' by an "always" grant', 'confirmation-off': ' (confirmation is off)' };

const RUN_ENDS: Record<RunEndReason, string> = {
  done: '',
  cancelled: '■ stopped',
  error: '✗ the run failed',
  'tool-budget': '■ tool call limit reached',
};

export function outcomeLine(event: LoopEventOf<'tool-end'>, style: TerminalStyle): string {
  const { label, tone } = OUTCOMES[event.outcome];
  const paint = tone === 'good' ? style.good : tone === 'bad' ? style.bad : style.dim;
  return `  ${paint(`→ ${label}`)}`;
}

export function decisionLine(event: LoopEventOf<'tool-decision'>, reason: string): string {
  return `  ${DECISIONS[event.decision]}${SOURCES[event.source]}${reason === '' ? '' : `: ${reason}`}`;
}

export function runEndLine(event: LoopEventOf<'run-end'>, error: string): string {
  const label = RUN_ENDS[event.reason];
  if (event.reason === 'error') return `${label}${error === '' ? '' : `: ${error}`}`;
  return label;
}
