export type DecisionAnswer = { decision: 'allow' } | { decision: 'always' } | { decision: 'deny'; reason: string };

/**
 * Reads what the person typed at a decision prompt: `a` allows, `A` always allows, `d` denies, and the rest of a
 * deny line (`d use notes.txt`) is the reason for the model. Anything else is null: ask again. Case matters for `a`
 * and `A`, so a wrong shift key never grants more than was meant; the long forms are accepted too.
 */
export function parseDecisionAnswer(line: string): DecisionAnswer | null {
  const trimmed = line.trim();
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(trimmed);
  if (match === null) return null;
  const [, word, rest = ''] = match;
  if ((word === 'a' || word === 'allow') && rest === '') return { decision: 'allow' };
  if ((word === 'A' || word === 'always') && rest === '') return { decision: 'always' };
  if (word === 'd' || word === 'D' || word === 'deny') return { decision: 'deny', reason: rest.trim() };
  return null;
}
