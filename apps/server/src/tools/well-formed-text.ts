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

const CONTROL = /\p{Cc}/u;

/**
 * A path a file tool resolves: well-formed, and with no line break, tab or other control character. No file the tools
 * read or write needs one, and a card draws `notes.txt\n` as `notes.txt` (found from outside: write_file made a
 * second file, `notes.txt` and a line break, beside the one the card named). Refused as invalid arguments, before a card.
 */
export function filePathText(field: string) {
  return wellFormedText(field).refine((text) => !CONTROL.test(text), {
    error: (issue) => {
      const found = typeof issue.input === 'string' ? (CONTROL.exec(issue.input)?.[0] ?? '') : '';
      const code = `U+${found.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
      return `${field} holds a line break, tab or other control character (${code}), which no file name here takes and a card cannot show as part of a name: name the file without it`;
    },
  });
}
