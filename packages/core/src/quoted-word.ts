import { toVisibleText, visibleTextString } from './visible-text';

/** The most characters of a word of a call a reason names (`codeWord`); a longer one is cut with `…`. */
export const MAX_QUOTED_CHARS = 40;

/**
 * Text as one code span of a sentence for the model (`reasonText`): one span it cannot end or step out of, on one
 * line, with the card's escapes for hidden characters, a backtick and a line break among them (`\u{60}`, `\u{A}`).
 */
export function codeSpan(text: string): string {
  return `\`${visibleTextString(toVisibleText(text, { singleLine: true, code: true })).replaceAll('`', '\\u{60}')}\``;
}

