/** Nesting markers at the start of one line (`- - - > x`) past which a text is shown as it is. */
const MAX_LINE_NESTING = 32;
/**
 * Emphasis, link, quote, code and table markers and list items in one text past which it is shown as it is. Each is
 * an element or more for the parser and React: a reply of 20,000 list items (`1. a` apart) parsed again as it
 * streamed in kept the tab busy for 28 s, stalling 4 s at a time, with a call waiting under it.
 */
const MAX_MARKERS = 10_000;
/**
 * Link brackets nested in a text times its length, past which it is shown as it is. At each `]` the parser goes back
 * over the text of the brackets still open: 4,900 `[`, 900 KB of words and 4,900 `]` (under `MAX_MARKERS`) took it
 * 156 s, some 35 ns a level and character. Under this bound a parse costs at most about what the parse of a plain
 * 900 KB text does.
 */
const MAX_BRACKET_WORK = 20_000_000;
/**
 * Characters the parser reads looking for the end of raw HTML it cannot close, past which a text is shown as it is.
 * At each `<!--`, `<?`, `<![CDATA[` and `<!` and a letter it reads on to `-->`, `?>`, `]]>` or `>`, up to the end of
 * the paragraph, and, finding none, reads the text after the `<` again as text: 120 KB of `a <!--` on one line took it
 * 18 s, 220 KB of `a <![CDATA[` 41 s, 105 KB of lines with an unclosed `<?` 12 s (15 to 45 ns a character read).
 * Under this bound that costs at most about a quarter of a second.
 */
const MAX_HTML_SCAN_WORK = 5_000_000;
const LINE_NESTING = /^(?:[ \t]*(?:[-*+>]|\d{1,9}[.)])(?=[ \t]|$)[ \t]*)+/gm;

/** What in a text makes the Markdown parser and React recurse, or make many elements. */
export interface MarkdownWeight {
  /** Emphasis, link, quote, code and table markers, and list items. */
  markers: number;
  /** Whether one line nests past the limit. */
  deepLine: boolean;
}

export const NO_WEIGHT: MarkdownWeight = { markers: 0, deepLine: false };

/** Linear in the text. The weight of a text cut at line ends is the sum of its parts' (`addWeights`). */
export function weighMarkdown(text: string): MarkdownWeight {
  let markers = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    // * _ [ ] > ` |
    if (code === 42 || code === 95 || code === 91 || code === 93 || code === 62 || code === 96 || code === 124) markers++;
  }
  if (markers > MAX_MARKERS) return { markers, deepLine: false };
  let deepLine = false;
  for (const match of text.matchAll(LINE_NESTING)) {
    let levels = 0;
    for (const char of match[0]) if (char !== ' ' && char !== '\t' && !(char >= '0' && char <= '9') && char !== '.' && char !== ')') levels++;
    const ordinals = match[0].match(/\d+[.)]/g)?.length ?? 0;
    // A list item's marker, counted once more where it is also an emphasis or quote marker (`*`, `>`): an upper bound.
    markers += levels + ordinals;
    if (levels + ordinals > MAX_LINE_NESTING) deepLine = true;
    if (deepLine || markers > MAX_MARKERS) break;
  }
  return { markers, deepLine };
}

export function addWeights(first: MarkdownWeight, second: MarkdownWeight): MarkdownWeight {
  return { markers: first.markers + second.markers, deepLine: first.deepLine || second.deepLine };
}

/**
 * Whether a text of this weight is too deeply nested to render as Markdown: the parser and React recurse once per
 * level, and a reply of 2 KB (`'- '.repeat(1000)`) overflowed the stack, one of 40 KB froze the tab.
 */
export function tooDeep(weight: MarkdownWeight): boolean {
  return weight.markers > MAX_MARKERS || weight.deepLine;
}

export function tooDeepForMarkdown(text: string): boolean {
  return tooDeep(weighMarkdown(text));
}

/** Whether the parser would take far longer on `text` than on as much plain text (see `MAX_BRACKET_WORK`, `MAX_HTML_SCAN_WORK`). Linear. */
export function tooCostlyToParse(text: string): boolean {
  let depth = 0;
  let deepest = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    // [ ]
    if (code === 91) deepest = Math.max(deepest, ++depth);
    else if (code === 93 && depth > 0) depth--;
  }
  return deepest * text.length > MAX_BRACKET_WORK || htmlScanWork(text) > MAX_HTML_SCAN_WORK;
}

/** The raw HTML openers the parser reads on from to an end it may not find, and those ends. */
const HTML_SCANS = [
  { open: /<!--/g, end: '-->' },
  { open: /<\?/g, end: '?>' },
  { open: /<!\[CDATA\[/g, end: ']]>' },
  { open: /<![A-Za-z]/g, end: '>' },
] as const;
/** A blank line (the end of a paragraph), from the line end before it. */
const BLANK_LINE = /(?:\r\n|\r(?!\n)|\n)[ \t]*(?=\r|\n|$)/g;

/**
 * An upper bound on what the parser reads looking for the ends of raw HTML (see `MAX_HTML_SCAN_WORK`): from each
 * opener to its end or to the next blank line, whichever comes first. Linear: each search goes on from where the last
 * one of its kind stopped.
 */
function htmlScanWork(text: string): number {
  let work = 0;
  let paragraphEnd = -1;
  const nextParagraphEnd = (from: number): number => {
    if (paragraphEnd >= from) return paragraphEnd;
    BLANK_LINE.lastIndex = from;
    paragraphEnd = BLANK_LINE.exec(text)?.index ?? text.length;
    return paragraphEnd;
  };
  for (const { open, end } of HTML_SCANS) {
    let closed = -1;
    for (const match of text.matchAll(open)) {
      const from = match.index;
      if (closed < from) {
        const found = text.indexOf(end, from + match[0].length);
        closed = found === -1 ? text.length : found;
      }
      work += Math.min(closed, nextParagraphEnd(from)) - from;
      if (work > MAX_HTML_SCAN_WORK) return work;
    }
    paragraphEnd = -1;
  }
  return work;
}
