/** PEP 263: a comment on line 1 or 2 saying `coding: <name>` or `coding=<name>` sets how Python decodes a file. */
const COMMENT_LINE = /^\uFEFF?[ \t\f]*#/;
const CODING = /coding[:=][ \t]*([-\w.]+)/g;

/**
 * Names under which Python decodes a file as the UTF-8 it is shown as: its tokenizer reads `utf-8-sig` (and any
 * `utf-8-…`) as utf-8, and `utf8` is the same codec. Anything else, an alias of UTF-8 included, is reported.
 */
const READ_AS_UTF8 = new Set(['utf-8', 'utf8', 'utf-8-sig']);

export interface EncodingDeclaration {
  /** The encoding as written in the comment. */
  name: string;
  /** 1 or 2. */
  line: number;
}

/**
 * The first encoding other than UTF-8 declared on the source's first two lines. Line 2 is checked whatever line 1
 * holds (Python reads it only after a comment or a blank line), and every declaration on a line (Python takes the
 * first): erring towards reporting costs the model one comment, missing one lets Python run other text than shown.
 * A lone CR ends a line, as it does for Python.
 */
export function pythonEncodingDeclaration(source: string): EncodingDeclaration | undefined {
  const lines = source.split(/\r\n|\r|\n/, 2);
  for (const [index, line] of lines.entries()) {
    if (!COMMENT_LINE.test(line)) continue;
    for (const [, name = ''] of line.matchAll(CODING)) {
      if (!READ_AS_UTF8.has(name.toLowerCase().replaceAll('_', '-'))) return { name, line: index + 1 };
    }
  }
  return undefined;
}
