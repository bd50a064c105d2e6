import { escapeNotation, toVisibleProse } from '@airlock/core';

/**
 * A log line as the server's console may show it. Log lines carry text from outside (an MCP server's stderr and
 * errors, a model server's or a database's error messages, file names), and a terminal obeys what it is sent: an
 * escape sequence clears the screen or sets the clipboard (OSC 52), a line break or a carriage return starts what
 * looks like a line of Airlock's own (a forged start-up link). Every control character, line breaks included, and
 * everything else that hides or reorders text is shown as its code (`\u{1B}`), as the CLI shows them; other
 * characters, of any script, are left as written. Text escaped already comes out as it went in.
 */
export function consoleLine(text: string): string {
  return toVisibleProse(text)
    .segments.map((segment) => {
      if (segment.kind === 'text') return segment.text.replace(/[\r\n]/gu, (character) => escapeNotation(character.charCodeAt(0)));
      // A backslash obeys nothing: left as written, so a line escaped before (a model's id) is not escaped twice.
      return segment.class === 'backslash' ? '\\' : segment.text;
    })
    .join('');
}

/** Writes a log line to the console (stdout), escaped by `consoleLine`. */
export function logToConsole(line: string): void {
  console.log(consoleLine(line));
}
