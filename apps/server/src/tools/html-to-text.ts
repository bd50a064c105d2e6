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

type ScannedTag = { ok: true; end: number; closing: boolean; name: string; attributes: string } | { ok: false; resumeAt: number };

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
  let pre = 0;
  let title: string | undefined;
  let index = 0;

  // Breaks are held back and merged, so `</li><li>` or `</p> <p>` give one break, not two.
  let pendingBreak = 0;
  const lineBreak = (lines: number) => {
    pendingBreak = Math.max(pendingBreak, lines);
  };
  const push = (text: string) => {
    if (pendingBreak > 0) out.push('\n'.repeat(pendingBreak));
    pendingBreak = 0;
    out.push(text);
  };

  const isDropping = () => dropped.size > 0;
  const emitText = (raw: string) => {
    if (raw.length === 0 || isDropping()) return;
    const text = decodeEntities(raw);
    if (pre > 0) push(text.replaceAll(' ', PRE_SPACE).replaceAll('\t', PRE_TAB).replaceAll('\n', PRE_NEWLINE));
    else if (/\S/.test(text) || pendingBreak === 0) push(text.replace(/\s+/g, ' '));
  };

  while (index < html.length) {
    const open = html.indexOf('<', index);
    if (open === -1) {
      emitText(html.slice(index));
      break;
    }
    emitText(html.slice(index, open));
    if (html.startsWith('<!--', open)) {
      const close = html.indexOf('-->', open + 4);
      index = close === -1 ? html.length : close + 3;
      continue;
    }
    if (html[open + 1] === '!' || html[open + 1] === '?') {
      const close = html.indexOf('>', open);
      index = close === -1 ? html.length : close + 1;
      continue;
    }
    const tag = scanTag(html, open);
    if (!tag.ok) {
      // Never scanned again: whatever a failed tag covered is text, so a page of broken tags costs one pass.
      emitText(html.slice(open, tag.resumeAt));
      index = tag.resumeAt;
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
      if (!closing) links.push({ href: attribute(attributes, 'href'), start: out.length });
      else {
        const link = links.pop();
        if (link !== undefined) push(linkSuffix(out.slice(link.start).join(''), link.href, baseUrl));
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

function findClosingTag(html: string, name: string, from: number): { contentEnd: number; after: number } {
  const closing = new RegExp(`</${name}\\b[^>]*>`, 'gi');
  closing.lastIndex = from;
  const match = closing.exec(html);
  return match === null ? { contentEnd: html.length, after: html.length } : { contentEnd: match.index, after: match.index + match[0].length };
}

function attribute(attributes: string, name: string): string | undefined {
  const match = new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'>]+))`, 'i').exec(attributes);
  return match === null ? undefined : (match[1] ?? match[2] ?? match[3]);
}

/** " (https://…)" after a link whose text does not already say where it goes. */
function linkSuffix(text: string, href: string | undefined, baseUrl: string | undefined): string {
  if (href === undefined) return '';
  let url: URL;
  try {
    url = new URL(decodeEntities(href), baseUrl);
  } catch {
    return '';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return '';
  const shown = text.replace(/\s+/g, ' ').trim();
  if (shown === '' || shown === url.href || shown === href) return '';
  return ` (${url.href})`;
}
