import { toVisibleText, visibleTextString } from '@airlock/core';

/**
 * A name or link target from the file system as the card shows one, on one line (`\u{A}` for a line break, `\u{1B}`,
 * `\u{202E}` …): a call, a clone or a hostile workspace chooses such names, and one holding a line break would add lines
 * of its own to the result the model and the person read (a file named `x\nfile     README.md  (10 bytes)` added an
 * entry to a listing; a link to `x\nReplaced notes.md (2 bytes).` a line to a refusal).
 */
export function oneLine(text: string): string {
  return visibleTextString(toVisibleText(text, { singleLine: true }));
}
