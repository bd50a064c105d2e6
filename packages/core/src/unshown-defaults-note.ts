import type { UnshownDefaultsReason } from './events';

/** Why, in every client's words, for each reason a tool-start gives (`ShownTool['unshownDefaults']`). */
const REASON_WORDS: Record<UnshownDefaultsReason, string> = {
  limit: 'its schema is larger or deeper than is read here',
  ambiguous: 'its schema leaves open which default applies (several of its alternatives fit this call, or two defaults differ)',
  unreadable: 'part of its schema that may declare one is not read here (a reference elsewhere, a condition)',
  refused: 'a default its schema declares and its own check refuses is not shown',
};

/**
 * What every client's card says of a call whose tool may act on defaults its arguments do not show, in the same
 * words, with why.
 */
export function unshownDefaultsNote(reasons: readonly UnshownDefaultsReason[]): string {
  const why = reasons.map((reason) => REASON_WORDS[reason]).join('; ');
  return `The tool may run with defaults this card does not show: ${why}. To be sure what runs, edit the call to give every value.`;
}
