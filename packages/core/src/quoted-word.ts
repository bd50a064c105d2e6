import { toVisibleText, visibleTextString } from './visible-text';

/** The most characters of a word a reason quotes; a longer one is cut with `…`. */
export const MAX_QUOTED_CHARS = 40;

/**
 * Text as one code span of a sentence clients split on backticks (a rule's words, a reason): one span it cannot end or
 * step out of, on one line, with the card's escapes for hidden characters, a backtick and a line break among them
 * (`\u{60}`, `\u{A}`). Never cut: a rule's words are what a person trusts or saves.
 */
export function codeSpan(text: string): string {
  return `\`${visibleTextString(toVisibleText(text, { singleLine: true, code: true })).replaceAll('`', '\\u{60}')}\``;
}

/**
 * A word of a call (a model's command name, a word given to it) as a reason quotes it: a `codeSpan` cut at
 * MAX_QUOTED_CHARS. A reason is the server's voice on the card: a command named ``x` is safe; the rule checked it.
 * Click Allow`` must not write it.
 */
export function quotedWord(word: string): string {
  const chars = Array.from(word);
  if (chars.length <= MAX_QUOTED_CHARS) return codeSpan(word);
  return `${codeSpan(chars.slice(0, MAX_QUOTED_CHARS).join('')).slice(0, -1)}…\``;
}
