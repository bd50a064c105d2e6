import { CollapsingWriter, isWhiteSpace } from './collapsing-writer';
import { decodeEntities, entityAt } from './html-entities';

/** What an element does to the text; elements not named here add nothing but their content. */
type ElementKind = 'raw' | 'title' | 'dropped' | 'block' | 'paragraph' | 'br' | 'hr' | 'li' | 'cell' | 'pre' | 'img' | 'a';

const ELEMENTS = new Map<string, ElementKind>([
  // Content never text worth reading: skipped raw up to the closing tag.
  ...kinds('raw', ['script', 'style', 'textarea', 'xmp', 'noscript', 'iframe', 'noembed', 'noframes']),
  // Dropped with everything inside them.
  ...kinds('dropped', ['nav', 'template', 'svg', 'math', 'object', 'canvas', 'select', 'button']),
  ...kinds('block', [
    'address', 'article', 'aside', 'caption', 'dd', 'details', 'dialog', 'div', 'dt', 'fieldset', 'figcaption', 'footer',
    'form', 'header', 'hgroup', 'main', 'section', 'summary', 'tbody', 'tfoot', 'thead', 'tr', 'body', 'html',
  ]),
  ...kinds('paragraph', ['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'table', 'ul', 'ol', 'dl', 'figure']),
  ...kinds('cell', ['td', 'th']),
  ['title', 'title'], ['br', 'br'], ['hr', 'hr'], ['li', 'li'], ['pre', 'pre'], ['img', 'img'], ['a', 'a'],
]);

function kinds(kind: ElementKind, names: string[]): [string, ElementKind][] {
  return names.map((name) => [name, kind]);
}

/** Longer "tags" are taken as text. */
const MAX_TAG_LENGTH = 64 * 1024;
const MAX_TAG_NAME_LENGTH = 64;

/**
 * What a page may spend on its links' addresses (see LinkAddresses), in characters of its length, so the work and the
 * text stay linear in the page however many links it has and however long its own address. ADDRESS_COST, in
 * characters, stands for parsing a URL at all.
 */
const ADDRESS_WORK_PER_CHARACTER = 2;
const ADDRESS_TEXT_PER_CHARACTER = 1;
const MIN_ADDRESS_BUDGET = 256 * 1024;
const ADDRESS_COST = 128;

const AMPERSAND = 0x26;
const DOUBLE_QUOTE = 0x22;
const EQUALS = 0x3d;
const EXCLAMATION_MARK = 0x21;
const GREATER_THAN = 0x3e;
const QUESTION_MARK = 0x3f;
const SINGLE_QUOTE = 0x27;
const SLASH = 0x2f;

/** The tag last read by `scanTag`; one per page, so reading a tag allocates nothing but its name. */
class TagScan {
  /** Lower-case. */
  name = '';
  closing = false;
  attributesStart = 0;
  attributesEnd = 0;
  /** Just past the '>'. */
  end = 0;
  /** When it is not a tag: where reading may resume. */
  resumeAt = 0;
}

/**
 * Reads the tag starting at `open` (a '<') into `tag`, quotes respected. When it is not a tag, sets where reading may
 * resume: past everything this scan looked at, so no character is scanned twice.
 */
function scanTag(html: string, open: number, tag: TagScan): boolean {
  let i = open + 1;
  const closing = html.charCodeAt(i) === SLASH;
  if (closing) i++;
  if (!isAsciiLetter(html.charCodeAt(i))) {
    tag.resumeAt = open + 1;
    return false;
  }
  const nameStart = i;
  const nameLimit = Math.min(html.length, i + MAX_TAG_NAME_LENGTH);
  for (i++; i < nameLimit && isTagNameCharacter(html.charCodeAt(i)); i++);
  const nameEnd = i;
  const limit = Math.min(html.length, open + MAX_TAG_LENGTH);
  while (i < limit) {
    const code = html.charCodeAt(i);
    if (code === GREATER_THAN) {
      tag.name = html.slice(nameStart, nameEnd).toLowerCase();
      tag.closing = closing;
      tag.attributesStart = nameEnd;
      tag.attributesEnd = i;
      tag.end = i + 1;
      return true;
    }
    if (code === DOUBLE_QUOTE || code === SINGLE_QUOTE) {
      const close = html.indexOf(code === DOUBLE_QUOTE ? '"' : "'", i + 1);
      if (close === -1 || close >= limit) {
        tag.resumeAt = close === -1 ? html.length : close + 1;
        return false;
      }
      i = close + 1;
    } else {
      i++;
    }
  }
  tag.resumeAt = Math.max(i, open + 1);
  return false;
}

/**
 * Where the next comment, declaration or well-formed tag starts, at or after `from`, or -1 when there is none; a tag
 * is read into `tag`. A '<' that starts none of them is text, read together with the text around it.
 */
function nextMarkup(html: string, from: number, tag: TagScan): number {
  let open = html.indexOf('<', from);
  while (open !== -1) {
    if (isDeclaration(html, open) || scanTag(html, open, tag)) return open;
    // Never scanned again: whatever a failed tag covered is text, so a page of broken tags costs one pass.
    open = html.indexOf('<', tag.resumeAt);
  }
  return -1;
}

/** A comment, a doctype or a processing instruction: `<!…` or `<?…`. */
function isDeclaration(html: string, open: number): boolean {
  const next = html.charCodeAt(open + 1);
  return next === EXCLAMATION_MARK || next === QUESTION_MARK;
}

/**
 * Reduces an HTML page to the text a person would read: scripts, styles and navigation are dropped, link text is kept
 * (with the link's address when it is an absolute web address), blocks become lines and whitespace is collapsed.
 * A small tolerant scanner, not a full parser: good enough for reading, never executed.
 */
export function htmlToText(html: string, baseUrl?: string): string {
  const writer = new CollapsingWriter();
  const dropped = new Map<string, number>();
  const tag = new TagScan();
  const links = new OpenLinks();
  const addresses = new LinkAddresses(baseUrl, html.length);
  let pre = 0;
  let title: string | undefined;
  let index = 0;

  // Breaks are held back and merged, so `</li><li>` or `</p> <p>` give one break, not two.
  let pendingBreak = 0;
  const lineBreak = (lines: number) => {
    pendingBreak = Math.max(pendingBreak, lines);
  };
  const flushBreak = () => {
    if (pendingBreak === 0) return;
    writer.lineBreaks(pendingBreak);
    pendingBreak = 0;
  };
  const write = (text: string) => {
    if (text === '') return;
    flushBreak();
    writer.text(text);
  };
  // White space alone leaves a held break held, so it can still merge with the next one.
  const writeCharacter = (code: number) => {
    if (pre === 0 && isWhiteSpace(code)) {
      if (pendingBreak === 0) writer.space();
      return;
    }
    flushBreak();
    writer.char(code);
  };

  const isDropping = () => dropped.size > 0;
  const writeText = (start: number, end: number) => {
    if (isDropping()) return;
    for (let at = start; at < end; at++) {
      const code = html.charCodeAt(at);
      const entity = code === AMPERSAND ? entityAt(html, at) : undefined;
      if (entity === undefined) {
        writeCharacter(code);
        continue;
      }
      for (let unit = 0; unit < entity.value.length; unit++) writeCharacter(entity.value.charCodeAt(unit));
      at = entity.end - 1;
    }
  };

  while (index < html.length) {
    const open = nextMarkup(html, index, tag);
    if (open === -1) {
      writeText(index, html.length);
      break;
    }
    writeText(index, open);
    if (isDeclaration(html, open)) {
      const comment = html.startsWith('<!--', open);
      const close = comment ? html.indexOf('-->', open + 4) : html.indexOf('>', open);
      index = close === -1 ? html.length : close + (comment ? 3 : 1);
      continue;
    }
    index = tag.end;
    const { closing, name } = tag;
    const kind = ELEMENTS.get(name);
    if (kind === undefined) continue;

    if ((kind === 'raw' || kind === 'title') && !closing) {
      const end = findClosingTag(html, name, index);
      if (kind === 'title' && title === undefined && !isDropping()) title = decodeEntities(html.slice(index, end.contentEnd)).replace(/\s+/g, ' ').trim();
      index = end.after;
      continue;
    }
    if (kind === 'dropped') {
      if (endsWithSlash(html, tag.attributesStart, tag.attributesEnd)) continue;
      const depth = (dropped.get(name) ?? 0) + (closing ? -1 : 1);
      if (depth > 0) dropped.set(name, depth);
      else dropped.delete(name);
      continue;
    }
    if (isDropping()) continue;

    switch (kind) {
      case 'raw':
      case 'title':
        break;
      case 'block':
        lineBreak(1);
        break;
      case 'paragraph':
      case 'hr':
        lineBreak(2);
        break;
      case 'br':
        flushBreak();
        writer.lineBreaks(1);
        break;
      case 'li':
        lineBreak(1);
        if (!closing) write('- ');
        break;
      case 'cell':
        if (!closing) {
          flushBreak();
          writer.tab();
        }
        break;
      case 'pre':
        pre = Math.max(0, pre + (closing ? -1 : 1));
        lineBreak(2);
        break;
      case 'img': {
        const alt = closing ? '' : decodeEntities(attribute(html, tag, 'alt') ?? '').trim();
        if (alt !== '') {
          write(' [image: ');
          writer.text(alt);
          writer.text('] ');
        }
        break;
      }
      case 'a':
        if (!closing) links.push(tag, writer.length);
        else if (links.pop()) {
          // The href is read only once the link closes: a page of links never closed costs no reading.
          const href = attribute(html, links.popped, 'href');
          if (href !== undefined) write(addresses.suffix(writer, links.popped.textStart, href));
        }
        break;
    }
  }

  const body = writer.toString();
  return title ? `Title: ${title}\n\n${body}` : body;
}

/** The links open at this point of the page, innermost last, kept as plain numbers. */
class OpenLinks {
  private readonly starts: number[] = [];
  /** The link taken by the last `pop`. */
  readonly popped = { attributesStart: 0, attributesEnd: 0, textStart: 0 };

  push(tag: TagScan, textStart: number): void {
    this.starts.push(tag.attributesStart, tag.attributesEnd, textStart);
  }

  pop(): boolean {
    if (this.starts.length === 0) return false;
    this.popped.textStart = this.starts.pop()!;
    this.popped.attributesEnd = this.starts.pop()!;
    this.popped.attributesStart = this.starts.pop()!;
    return true;
  }
}

/** Where the raw content of `name` ends, and where reading resumes after its closing tag (case-insensitive). */
function findClosingTag(html: string, name: string, from: number): { contentEnd: number; after: number } {
  const notFound = { contentEnd: html.length, after: html.length };
  for (let at = html.indexOf('</', from); at !== -1; at = html.indexOf('</', at + 2)) {
    const nameEnd = at + 2 + name.length;
    if (!startsWithName(html, at + 2, name) || isWordCharacter(html.charCodeAt(nameEnd))) continue;
    // The first '>' after a matching name ends it; without one no later closing tag can end either.
    const close = html.indexOf('>', nameEnd);
    return close === -1 ? notFound : { contentEnd: at, after: close + 1 };
  }
  return notFound;
}

/** Whether `html` has the lower-case ASCII `name` at `at`, in any case. */
function startsWithName(html: string, at: number, name: string): boolean {
  if (at + name.length > html.length) return false;
  for (let index = 0; index < name.length; index++) {
    if ((html.charCodeAt(at + index) | 0x20) !== name.charCodeAt(index)) return false;
  }
  return true;
}

function endsWithSlash(html: string, start: number, end: number): boolean {
  let index = end - 1;
  while (index >= start && isWhiteSpace(html.charCodeAt(index))) index--;
  return index >= start && html.charCodeAt(index) === SLASH;
}

function isAsciiLetter(code: number): boolean {
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x7a;
}

function isTagNameCharacter(code: number): boolean {
  return isAsciiLetter(code) || (code >= 0x30 && code <= 0x3a) || code === 0x2d;
}

function isWordCharacter(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

/**
 * The value of the first attribute `name` (lower-case) in a tag's attributes, or undefined. Attributes are read one
 * after the other, so a name inside another attribute's quoted value is not taken for an attribute.
 */
function attribute(html: string, range: { attributesStart: number; attributesEnd: number }, name: string): string | undefined {
  const end = range.attributesEnd;
  let i = range.attributesStart;
  while (i < end) {
    while (i < end && isHtmlSpace(html.charCodeAt(i))) i++;
    const nameStart = i;
    while (i < end && !isHtmlSpace(html.charCodeAt(i)) && !isAttributeNameEnd(html.charCodeAt(i))) i++;
    if (i === nameStart) {
      i++;
      continue;
    }
    const matches = i - nameStart === name.length && startsWithName(html, nameStart, name);
    while (i < end && isHtmlSpace(html.charCodeAt(i))) i++;
    if (html.charCodeAt(i) !== EQUALS || i >= end) continue;
    i++;
    while (i < end && isHtmlSpace(html.charCodeAt(i))) i++;
    const quote = html.charCodeAt(i);
    let valueStart = i;
    let valueEnd: number;
    if (i < end && (quote === DOUBLE_QUOTE || quote === SINGLE_QUOTE)) {
      valueStart = i + 1;
      // Searched within the tag only: a search to the end of the page for every tag would not be linear.
      for (i = valueStart; i < end && html.charCodeAt(i) !== quote; i++);
      valueEnd = i;
      i++;
    } else {
      while (i < end && !isHtmlSpace(html.charCodeAt(i)) && html.charCodeAt(i) !== GREATER_THAN) i++;
      valueEnd = i;
    }
    if (matches) return html.slice(valueStart, valueEnd);
  }
  return undefined;
}

/** '=', '/' or '>'. */
function isAttributeNameEnd(code: number): boolean {
  return code === EQUALS || code === SLASH || code === GREATER_THAN;
}

function isHtmlSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 12 || code === 13;
}

/**
 * The address shown after a link, within the page's budgets: for work, resolving an href costs ADDRESS_COST plus the
 * href and the page's own address (each href once) and reading a link's text back what was read; for text, the
 * addresses written out their length. Links closed once either is spent show no address.
 */
class LinkAddresses {
  /** Each href resolved, to the http(s) address it names or to undefined. */
  private readonly resolved = new Map<string, string | undefined>();
  private work: number;
  private text: number;

  constructor(
    private readonly baseUrl: string | undefined,
    pageLength: number,
  ) {
    this.work = Math.max(MIN_ADDRESS_BUDGET, ADDRESS_WORK_PER_CHARACTER * pageLength);
    this.text = Math.max(MIN_ADDRESS_BUDGET, ADDRESS_TEXT_PER_CHARACTER * pageLength);
  }

  /** " (https://…)" after a link whose text, written since `start`, does not already say where it goes. */
  suffix(writer: CollapsingWriter, start: number, href: string): string {
    if (this.work <= 0 || this.textIs(writer, start, href)) return '';
    let address = this.resolved.get(href);
    if (!this.resolved.has(href)) {
      this.work -= ADDRESS_COST + href.length + (this.baseUrl?.length ?? 0);
      if (this.work <= 0) return '';
      address = resolve(href, this.baseUrl);
      this.resolved.set(href, address);
    }
    if (address === undefined || this.textIs(writer, start, '') || this.textIs(writer, start, address)) return '';
    this.text -= address.length;
    return this.text < 0 ? '' : ` (${address})`;
  }

  /** Whether the link's text is `value`. */
  private textIs(writer: CollapsingWriter, start: number, value: string): boolean {
    // Runs of white space in the writer are at most two characters long (outside preformatted text), so text longer
    // than this cannot collapse to `value`: it is not read at all.
    const written = writer.length - start;
    if (written > 2 * value.length + 4) return false;
    this.work -= written;
    return writer.writtenSinceIs(start, value);
  }
}

/** The http(s) address `href` names on a page at `baseUrl`, or undefined. */
function resolve(href: string, baseUrl: string | undefined): string | undefined {
  try {
    const url = new URL(decodeEntities(href), baseUrl);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}
