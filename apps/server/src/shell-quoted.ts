/**
 * Characters a shell word shows as something else, or not at all: controls, line and paragraph separators, and
 * format characters (bidirectional overrides, zero widths), which would make a pasted command differ from the one read.
 */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * A word (a path the server names in a message) as it can be pasted into a shell and read as exactly that word: a
 * call may have chosen its name (`x$(curl …|sh)`), and the person runs what the message says outside any sandbox.
 * Plain words stay as they are, others are single-quoted; one holding a backslash, or a character that would not
 * show as itself, is written in `$'…'` with every such character, and any quote, as a `\x`/`\u` escape, so the
 * command stays on one line, every character is seen, and no quote or backslash is left for a shell to read its own
 * way: bash, zsh and ksh read the word back; POSIX sh and fish, which know no `$'…'`, read a wrong word, but one
 * word, and run nothing.
 */
export function shellQuoted(word: string): string {
  if (/^[\w./@%+=:,-]+$/.test(word)) return word;
  // A quote is closed, escaped and opened again (`'\''`), which POSIX sh, bash, zsh and fish all read so; a backslash
  // is not left inside single quotes, where fish reads `\'` as a quote.
  if (!UNSEEN.test(word) && !word.includes('\\')) return `'${word.replaceAll("'", "'\\''")}'`;
  let escaped = '';
  for (const char of word) {
    if (char !== '\\' && char !== "'" && !UNSEEN.test(char)) {
      escaped += char;
      continue;
    }
    const code = char.codePointAt(0)!;
    escaped += code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return `$'${escaped}'`;
}
