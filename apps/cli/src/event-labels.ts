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
const SOURCES: Record<DecisionSource, string> = { user: '', grant: ' by an "always" grant', rule: ' by a rule', 'confirmation-off': ' (confirmation is off)', system: '' };

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

/**
 * `reason` and `rule` come already made safe to print (escaped like the card). `elsewhere`: the decision withdrew the
 * question this terminal was asking, so a person's allow or deny was made in another client.
 */
export function decisionLine(event: LoopEventOf<'tool-decision'>, reason: string, rule = '', { elsewhere = false } = {}): string {
  const byPerson = elsewhere && (event.decision === 'allow' || event.decision === 'deny') ? ' in another client' : '';
  const source = event.source === 'rule' && rule !== '' ? ` by rule: ${rule}` : event.source === 'user' ? byPerson : SOURCES[event.source];
  const because = reason === '' || (event.source === 'rule' && reason === rule) ? '' : `: ${reason}`;
  return `  ${DECISIONS[event.decision]}${source}${because}`;
}

export function runEndLine(event: LoopEventOf<'run-end'>, error: string): string {
  const label = RUN_ENDS[event.reason];
  if (event.reason === 'error') return `${label}${error === '' ? '' : `: ${error}`}`;
  return label;
}
