export type DecisionAnswer = { decision: 'allow' } | { decision: 'always' } | { decision: 'deny'; reason: string };

/** A lone `A`: "Always allow" is asked once more before it is granted. */
export const CONFIRM_ALWAYS = 'confirm-always';

/**
 * Reads what the person typed at a decision prompt: `a` allows, `A` asks for "Always allow" (granted once confirmed),
 * `always` in any case grants it, `d` denies, and the rest of a deny line (`d use notes.txt`) is the reason for the
 * model. Anything else is null: ask again. A lone `A` is what `a` becomes with Caps Lock on, so it never grants a lasting
 * decision by itself; the long forms are accepted too.
 */
export function parseDecisionAnswer(line: string): DecisionAnswer | typeof CONFIRM_ALWAYS | null {
  const trimmed = line.trim();
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(trimmed);
  if (match === null) return null;
  const [, word = '', rest = ''] = match;
  if ((word === 'a' || word === 'allow') && rest === '') return { decision: 'allow' };
  if (word === 'A' && rest === '') return CONFIRM_ALWAYS;
  if (word.toLowerCase() === 'always' && rest === '') return { decision: 'always' };
  if (word === 'd' || word === 'D' || word === 'deny') return { decision: 'deny', reason: rest.trim() };
  return null;
}

/** Whether the answer to "Always allow?" grants it: `y` or `Y`; anything else, Enter alone too, goes back. */
export function confirmsAlways(line: string): boolean {
  const trimmed = line.trim();
  return trimmed === 'y' || trimmed === 'Y';
}
