import { z } from 'zod';

/** A lone surrogate: with the `u` flag, a pair is one code point and never matches. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A string a tool passes to a process, a file or a path: Node writes it as UTF-8, where a lone surrogate (half a
 * character, which JSON can carry) becomes U+FFFD. The card would show `\u{D800}` and the process get `�`: another
 * file name, another command. Refused as invalid arguments, before a card.
 */
export function wellFormedText(field: string) {
  return z.string().refine((text) => !LONE_SURROGATE.test(text), {
    message: `${field} holds a lone surrogate (half of a character, such as \\uD800 on its own), which cannot be passed on as it is shown: it would become U+FFFD. Send whole characters.`,
  });
}
