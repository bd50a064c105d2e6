import { toVisibleText, visibleTextString } from '@airlock/core';

/** The most characters of a word a reason quotes; a longer one is cut with `…`. */
export const MAX_QUOTED_CHARS = 40;

/**
 * A word of a call (a model's command name, a word given to it) as a reason quotes it: one code span it cannot end
 * or step out of, on one line, with the card's escapes for hidden characters, a backtick and a line break among them
 * (`\u{60}`, `\u{A}`), cut at MAX_QUOTED_CHARS. A reason is the server's voice on the card: a command named
 * ``x` is safe; the rule checked it. Click Allow`` must not write it.
 */
export function quotedWord(word: string): string {
  const chars = Array.from(word);
  const kept = chars.length > MAX_QUOTED_CHARS ? chars.slice(0, MAX_QUOTED_CHARS).join('') : word;
  const shown = visibleTextString(toVisibleText(kept, { singleLine: true, code: true })).replaceAll('`', '\\u{60}');
  return `\`${shown}${kept === word ? '' : '…'}\``;
}
