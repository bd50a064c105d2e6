/** Elements whose content is never text worth reading; their raw content is skipped up to the closing tag. */
const RAW_SKIPPED = new Set(['script', 'style', 'textarea', 'xmp', 'noscript', 'iframe', 'noembed', 'noframes']);
/** Elements dropped with everything inside them. */
const DROPPED = new Set(['nav', 'template', 'svg', 'math', 'object', 'canvas', 'select', 'button']);
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'caption', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset',
  'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hgroup', 'main', 'ol', 'p',
  'section', 'summary', 'table', 'tbody', 'tfoot', 'thead', 'tr', 'ul', 'body', 'html',
]);
const PARAGRAPHS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'table', 'ul', 'ol', 'dl', 'figure']);

const TAG_NAME = /[a-zA-Z][a-zA-Z0-9:-]{0,63}/y;
/** Longer "tags" are taken as text. */
const MAX_TAG_LENGTH = 64 * 1024;

type Tag = { ok: true; end: number; closing: boolean; name: string; attributes: string };
type ScannedTag = Tag | { ok: false; resumeAt: number };

/**
 * Reads the tag starting at `open` (a '<'), quotes respected. When it is not a tag, answers where reading may resume:
 * past everything this scan looked at, so no character is scanned twice.
 */
function scanTag(html: string, open: number): ScannedTag {
  let i = open + 1;
  const closing = html[i] === '/';
  if (closing) i++;
  TAG_NAME.lastIndex = i;
  const name = TAG_NAME.exec(html)?.[0];
  if (name === undefined) return { ok: false, resumeAt: open + 1 };
  i += name.length;
  const attributesStart = i;
  const limit = Math.min(html.length, open + MAX_TAG_LENGTH);
  while (i < limit) {
    const ch = html[i];
    if (ch === '>') return { ok: true, end: i + 1, closing, name, attributes: html.slice(attributesStart, i) };
    if (ch === '"' || ch === "'") {
      const close = html.indexOf(ch, i + 1);
      if (close === -1 || close >= limit) return { ok: false, resumeAt: close === -1 ? html.length : close + 1 };
      i = close + 1;
    } else {
      i++;
    }
  }
  return { ok: false, resumeAt: Math.max(i, open + 1) };
}

/**
 * The next comment, declaration or well-formed tag at or after `from`, or undefined when there is none.
 * A '<' that starts none of them is text, read together with the text around it.
 */
function nextMarkup(html: string, from: number): { open: number; tag: Tag | undefined } | undefined {
  let open = html.indexOf('<', from);
  while (open !== -1) {
    if (html[open + 1] === '!' || html[open + 1] === '?') return { open, tag: undefined };
    const tag = scanTag(html, open);
    if (tag.ok) return { open, tag };
    // Never scanned again: whatever a failed tag covered is text, so a page of broken tags costs one pass.
    open = html.indexOf('<', tag.resumeAt);
  }
  return undefined;
}

// Placeholders keep <pre> spacing through the whitespace collapsing at the end.
const PRE_SPACE = '\uE000';
const PRE_NEWLINE = '\uE001';
const PRE_TAB = '\uE002';

const NAMED_ENTITIES = new Map<string, string>([
  ['amp', '&'], ['lt', '<'], ['gt', '>'], ['quot', '"'], ['apos', "'"], ['nbsp', '\u00a0'], ['copy', '©'], ['reg', '®'],
  ['trade', '™'], ['hellip', '…'], ['mdash', '—'], ['ndash', '–'], ['lsquo', '‘'], ['rsquo', '’'], ['sbquo', '‚'],
  ['ldquo', '“'], ['rdquo', '”'], ['bdquo', '„'], ['laquo', '«'], ['raquo', '»'], ['lsaquo', '‹'], ['rsaquo', '›'],
  ['bull', '•'], ['middot', '·'], ['deg', '°'], ['plusmn', '±'], ['times', '×'], ['divide', '÷'], ['micro', 'µ'],
  ['para', '¶'], ['sect', '§'], ['euro', '€'], ['pound', '£'], ['yen', '¥'], ['cent', '¢'], ['frac12', '½'],
  ['frac14', '¼'], ['frac34', '¾'], ['sup2', '²'], ['sup3', '³'], ['larr', '←'], ['rarr', '→'], ['uarr', '↑'],
  ['darr', '↓'], ['harr', '↔'], ['le', '≤'], ['ge', '≥'], ['ne', '≠'], ['asymp', '≈'], ['infin', '∞'], ['minus', '−'],
  ['prime', '′'], ['Prime', '″'], ['shy', '\u00ad'], ['zwj', '\u200d'], ['zwnj', '\u200c'], ['ensp', '\u2002'],
  ['emsp', '\u2003'], ['thinsp', '\u2009'], ['iexcl', '¡'], ['iquest', '¿'], ['check', '✓'], ['hearts', '♥'],
]);
/** Entities that old pages write without the semicolon. */
const LEGACY_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'nbsp', 'copy', 'reg']);

/** Decodes HTML character references: named ones from a common set, and every numeric one. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,7}|[a-zA-Z][a-zA-Z0-9]{1,31})(;?)/g, (whole, body: string, semicolon: string) => {
    if (body.startsWith('#')) {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
      const valid = code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
      return valid ? String.fromCodePoint(code) : '\uFFFD';
    }
    const decoded = NAMED_ENTITIES.get(body);
    if (decoded === undefined || (semicolon === '' && !LEGACY_ENTITIES.has(body))) return whole;
    return decoded;
  });
}

/**
 * Reduces an HTML page to the text a person would read: scripts, styles and navigation are dropped, link text is kept
 * (with the link's address when it is an absolute web address), blocks become lines and whitespace is collapsed.
 * A small tolerant scanner, not a full parser: good enough for reading, never executed.
 */
export function htmlToText(html: string, baseUrl?: string): string {
  const out: string[] = [];
  const dropped = new Map<string, number>();
  const links: { href: string | undefined; start: number }[] = [];
  const shown = new ShownText();
  let pre = 0;
  let title: string | undefined;
  let index = 0;

  // Breaks are held back and merged, so `</li><li>` or `</p> <p>` give one break, not two.
  let pendingBreak = 0;
  const lineBreak = (lines: number) => {
    pendingBreak = Math.max(pendingBreak, lines);
  };
  const write = (text: string) => {
    out.push(text);
    // Only a link's text is ever read back.
    if (links.length > 0) shown.append(text);
  };
  const push = (text: string) => {
    if (pendingBreak > 0) write('\n'.repeat(pendingBreak));
    pendingBreak = 0;
    write(text);
  };

  const isDropping = () => dropped.size > 0;
  const emitText = (raw: string) => {
    if (raw.length === 0 || isDropping()) return;
    const text = decodeEntities(raw);
    if (pre > 0) push(text.replaceAll(' ', PRE_SPACE).replaceAll('\t', PRE_TAB).replaceAll('\n', PRE_NEWLINE));
    else if (/\S/.test(text) || pendingBreak === 0) push(text.replace(/\s+/g, ' '));
  };

  while (index < html.length) {
    const markup = nextMarkup(html, index);
    if (markup === undefined) {
      emitText(html.slice(index));
      break;
    }
    const { open, tag } = markup;
    emitText(html.slice(index, open));
    if (tag === undefined) {
      const comment = html.startsWith('<!--', open);
      const close = comment ? html.indexOf('-->', open + 4) : html.indexOf('>', open);
      index = close === -1 ? html.length : close + (comment ? 3 : 1);
      continue;
    }
    index = tag.end;
    const { closing, attributes } = tag;
    const name = tag.name.toLowerCase();
    const selfClosing = attributes.trimEnd().endsWith('/');

    if (!closing && (RAW_SKIPPED.has(name) || name === 'title')) {
      const end = findClosingTag(html, name, index);
      if (name === 'title' && title === undefined && !isDropping()) title = decodeEntities(html.slice(index, end.contentEnd)).replace(/\s+/g, ' ').trim();
      index = end.after;
      continue;
    }
    if (DROPPED.has(name)) {
      if (selfClosing) continue;
      const depth = (dropped.get(name) ?? 0) + (closing ? -1 : 1);
      if (depth > 0) dropped.set(name, depth);
      else dropped.delete(name);
      continue;
    }
    if (isDropping()) continue;

    if (name === 'br') push('\n');
    else if (name === 'hr') lineBreak(2);
    else if (name === 'li') {
      lineBreak(1);
      if (!closing) push('- ');
    } else if (name === 'td' || name === 'th') {
      if (!closing) push(' \t');
    } else if (name === 'pre') {
      pre = Math.max(0, pre + (closing ? -1 : 1));
      lineBreak(2);
    } else if (name === 'img' && !closing) {
      const alt = attribute(attributes, 'alt');
      if (alt !== undefined && alt.trim() !== '') push(` [image: ${decodeEntities(alt).trim()}] `);
    } else if (name === 'a') {
      if (!closing) links.push({ href: attribute(attributes, 'href'), start: shown.length });
      else {
        const link = links.pop();
        if (link !== undefined) push(linkSuffix(shown, link.start, link.href, baseUrl));
      }
    } else if (BLOCKS.has(name)) lineBreak(PARAGRAPHS.has(name) ? 2 : 1);
  }

  const body = out
    .join('')
    .replace(/[ \t\u00a0]+/g, (spaces) => (spaces.includes('\t') ? '\t' : ' '))
    .replace(/[ \t]*\n[ \t]*/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
    .replaceAll(PRE_SPACE, ' ')
    .replaceAll(PRE_TAB, '\t')
    .replaceAll(PRE_NEWLINE, '\n');
  return title ? `Title: ${title}\n\n${body}` : body;
}

/** Where the raw content of `name` ends, and where reading resumes after its closing tag (case-insensitive). */
function findClosingTag(html: string, name: string, from: number): { contentEnd: number; after: number } {
  const notFound = { contentEnd: html.length, after: html.length };
  for (let at = html.indexOf('</', from); at !== -1; at = html.indexOf('</', at + 2)) {
    const nameEnd = at + 2 + name.length;
    if (html.slice(at + 2, nameEnd).toLowerCase() !== name || isWordCharacter(html.charCodeAt(nameEnd))) continue;
    // The first '>' after a matching name ends it; without one no later closing tag can end either.
    const close = html.indexOf('>', nameEnd);
    return close === -1 ? notFound : { contentEnd: at, after: close + 1 };
  }
  return notFound;
}

function isWordCharacter(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

/**
 * The value of the first attribute `name` in a tag's attribute text, or undefined. Attributes are read one after
 * the other, so a name inside another attribute's quoted value is not taken for an attribute.
 */
function attribute(attributes: string, name: string): string | undefined {
  const n = attributes.length;
  let i = 0;
  const skipSpace = () => {
    while (i < n && isHtmlSpace(attributes.charCodeAt(i))) i++;
  };
  while (i < n) {
    skipSpace();
    const nameStart = i;
    while (i < n && !isHtmlSpace(attributes.charCodeAt(i)) && !'=/>'.includes(attributes[i]!)) i++;
    if (i === nameStart) {
      i++;
      continue;
    }
    const attributeName = attributes.slice(nameStart, i);
    skipSpace();
    if (attributes[i] !== '=') continue;
    i++;
    skipSpace();
    let value: string;
    const quote = attributes[i];
    if (quote === '"' || quote === "'") {
      const close = attributes.indexOf(quote, i + 1);
      const end = close === -1 ? n : close;
      value = attributes.slice(i + 1, end);
      i = end + 1;
    } else {
      const valueStart = i;
      while (i < n && !isHtmlSpace(attributes.charCodeAt(i)) && attributes[i] !== '>') i++;
      value = attributes.slice(valueStart, i);
    }
    if (attributeName.toLowerCase() === name) return value;
  }
  return undefined;
}

function isHtmlSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 12 || code === 13;
}

/**
 * The text written inside links, every run of white space reduced to one space, kept as pieces. A link's text is the
 * part written since it opened; reading it costs no more than the link's own address, however deeply links nest.
 */
class ShownText {
  private readonly pieces: string[] = [];
  /** Where each piece starts in the collapsed text. */
  private readonly starts: number[] = [];
  private endsWithSpace = true;
  length = 0;

  append(text: string): void {
    let collapsed = text.replace(/\s+/g, ' ');
    if (this.endsWithSpace && collapsed.startsWith(' ')) collapsed = collapsed.slice(1);
    if (collapsed === '') return;
    this.pieces.push(collapsed);
    this.starts.push(this.length);
    this.length += collapsed.length;
    this.endsWithSpace = collapsed.endsWith(' ');
  }

  /** The collapsed text from `start` on, trimmed, or undefined when it is longer than `limit`. */
  since(start: number, limit: number): string | undefined {
    if (this.length - start > limit + 2) return undefined;
    // `start` is always where a piece begins, and every piece is at least one character long.
    let index = this.starts.length;
    while (index > 0 && this.starts[index - 1]! >= start) index--;
    const text = this.pieces.slice(index).join('').trim();
    return text.length > limit ? undefined : text;
  }
}

/** " (https://…)" after a link whose text does not already say where it goes. */
function linkSuffix(shown: ShownText, start: number, href: string | undefined, baseUrl: string | undefined): string {
  if (href === undefined) return '';
  let url: URL;
  try {
    url = new URL(decodeEntities(href), baseUrl);
  } catch {
    return '';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return '';
  // Text longer than both ways of writing the address cannot repeat it: it is not read at all.
  const text = shown.since(start, Math.max(url.href.length, href.length));
  if (text === '' || text === url.href || text === href) return '';
  return ` (${url.href})`;
}
