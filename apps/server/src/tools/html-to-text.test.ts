import fc from 'fast-check';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { htmlToText } from './html-to-text';

type Node = { kind: 'text'; word: number } | { kind: 'element'; tag: string; attributes: string; children: Node[] };

const SHOWN = ['p', 'div', 'span', 'b', 'em', 'a', 'li', 'ul', 'td', 'h2', 'pre', 'section', 'unknown-tag'];
const DROPPED = ['nav', 'template', 'svg', 'button'];
/** Their content is raw text up to the closing tag, so they hold only text here. */
const RAW = ['script', 'style', 'noscript', 'textarea'];
const ATTRIBUTES = ['', ' href="/page"', ' href=https://example.test/a', " title='1 > 0 w900001' href='#top'", ' data-x="<b>w900002</b>"', ' class=x'];

const tree = fc.letrec<{ node: Node; nodes: Node[] }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('text' as const), word: fc.constant(0) }),
    fc.record({ kind: fc.constant('element' as const), tag: fc.constantFrom(...SHOWN, ...DROPPED), attributes: fc.constantFrom(...ATTRIBUTES), children: tie('nodes') }),
    fc.record({
      kind: fc.constant('element' as const),
      tag: fc.constantFrom(...RAW),
      attributes: fc.constantFrom(...ATTRIBUTES),
      children: fc.array(fc.record({ kind: fc.constant('text' as const), word: fc.constant(0) }), { maxLength: 3 }),
    }),
  ),
  nodes: fc.array(tie('node'), { maxLength: 4 }),
})).nodes;

/** The page, and the words a reader should see in order (numbered as they are written). */
function render(nodes: Node[]): { html: string; shown: string[] } {
  const shown: string[] = [];
  let next = 0;
  const go = (list: Node[], hidden: boolean): string =>
    list
      .map((node) => {
        if (node.kind === 'text') {
          const word = `w${next++}`;
          if (!hidden) shown.push(word);
          return ` ${word} `;
        }
        const inner = go(node.children, hidden || DROPPED.includes(node.tag) || RAW.includes(node.tag));
        return `<${node.tag}${node.attributes}>${inner}</${node.tag}>`;
      })
      .join('');
  return { html: go(nodes, false), shown };
}

describe('htmlToText, property-based', () => {
  test('shows exactly the words outside dropped elements, in order, and no markup', () => {
    fc.assert(
      fc.property(tree, (nodes) => {
        const { html, shown } = render(nodes);
        const text = htmlToText(html, 'https://example.test/');
        expect(text.match(/\bw\d+\b/g) ?? []).toStrictEqual(shown);
        expect(text).not.toMatch(/[<>]/);
      }),
    );
  });

  test('answers for any text without throwing, with white space collapsed', () => {
    const piece = fc.oneof(
      fc.constantFrom('<', '>', '</', '<a href="', '<a ', '"', "'", '=', '<script>', '</script', '<!--', '<!', '&amp', '&#x', ';', ' ', '\n', '\t', '\u00a0', 'x'),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const html = pieces.join('');
        fc.pre(!/<pre/i.test(html));
        const text = htmlToText(html, 'https://example.test/');
        expect(text).not.toMatch(/\n\n\n|^\s|\s$|[ \t]\n|\n[ \t]/);
      }),
    );
  });
});

describe('htmlToText on hostile pages', () => {
  test('reads a 360 KB page of closing tags that never end', () => {
    // Each "</script" used to start a search to the end of the page for its '>'.
    const page = `<p>before</p><script>${'</script '.repeat(40_000)}`;
    expect(htmlToText(page)).toBe('before');
  });

  test('reads 20,000 nested links', () => {
    // Closing each link used to join all the text written since it opened.
    const page = `${'<a href="https://example.test/x">link '.repeat(20_000)}${'</a>'.repeat(20_000)}`;
    const text = htmlToText(page);
    expect(text.startsWith('link link')).toBe(true);
    expect(text.split(' (https://example.test/x)')).toHaveLength(20_001);
  });

  test('keeps a link without its address when its text already is the address, however deeply nested', () => {
    const page = `${'<a href="https://example.test/x">'.repeat(3)}https://example.test/x${'</a>'.repeat(3)}`;
    expect(htmlToText(page)).toBe('https://example.test/x');
  });

  test('takes an attribute only where an attribute starts, not inside another one\'s value', () => {
    expect(htmlToText('<a title="see href=https://example.test/wrong" href="https://example.test/right">here</a>')).toBe('here (https://example.test/right)');
  });
});

describe('htmlToText on pages as large as web_fetch reads', () => {
  const size = 2 * 1024 * 1024;

  test('keeps 2 MiB of preformatted white space as it is', () => {
    // One string per piece of white space, each replaced three times over, held the server for seconds.
    const spacing = ' \n\t'.repeat(size / 3);
    expect(htmlToText(`<pre>${spacing}</pre>`)).toBe(spacing);
  });

  test('reads 2 MiB of list items, table cells and paragraphs, one line or paragraph each', () => {
    const count = size / 16;
    expect(htmlToText('<li>one\n'.repeat(count))).toBe(Array.from({ length: count }, () => '- one').join('\n'));
    expect(htmlToText('<tr><td>a<td>b\n'.repeat(count))).toBe(Array.from({ length: count }, () => 'a\tb').join('\n'));
    expect(htmlToText('<p>a &amp; b</p> '.repeat(count))).toBe(Array.from({ length: count }, () => 'a & b').join('\n\n'));
  });
});

describe('htmlToText on pages of many links', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  test("spends work and text on the links' addresses in proportion to the page, however long the page's own address", () => {
    const base = `https://example.test/${'p'.repeat(8_000)}`;
    const page = Array.from({ length: 5_000 }, (_, index) => `<a href="#${index}">y</a> `).join('');
    let parsed = 0;
    vi.stubGlobal(
      'URL',
      class CountingURL extends URL {
        constructor(url: string | URL, baseUrl?: string | URL) {
          parsed += String(url).length + (baseUrl === undefined ? 0 : String(baseUrl).length);
          super(url, baseUrl);
        }
      },
    );
    const text = htmlToText(page, base);
    // Each link parsed the page's address again and wrote it out: 40 million characters of each for this 105 KB page.
    expect(parsed).toBeLessThan(4 * page.length);
    expect(text.length).toBeLessThan(4 * page.length);
    expect(text.startsWith(`y (${base}#0) y (${base}#1) y`)).toBe(true);
    expect(text.endsWith(' y y y')).toBe(true);
  });
});

describe('htmlToText', () => {
  test('reads a page of 2 MiB of unclosed tags in one pass (a hostile page cannot freeze the server)', () => {
    const hostile = '<a '.repeat(700_000);
    expect(htmlToText(hostile).length).toBeGreaterThan(0);
    const quoted = `<p>ok</p>${'<a x="'.repeat(300_000)}>`;
    expect(htmlToText(quoted)).toContain('ok');
  });

  test('keeps readable text and drops scripts, styles and navigation', () => {
    const html = `<!doctype html>
      <html><head><title>The  Title</title><style>body { color: red }</style>
      <script>var x = "<p>not text</p>";</script></head>
      <body>
        <nav><a href="/home">Home</a> <a href="/about">About</a></nav>
        <h1>Heading</h1>
        <!-- a comment -->
        <p>First   paragraph
           with <b>bold</b> and a <a href="/docs/page?a=1&amp;b=2">link to docs</a>.</p>
        <ul><li>one</li><li>two</li></ul>
        <noscript>enable scripts</noscript>
        <p>Caf&eacute; &amp; cr&#232;me &#x2014; 5&nbsp;&lt;&nbsp;6 &unknown; &copy</p>
      </body></html>`;
    expect(htmlToText(html, 'https://example.test/start')).toBe(
      [
        'Title: The Title',
        '',
        'Heading',
        '',
        'First paragraph with bold and a link to docs (https://example.test/docs/page?a=1&b=2).',
        '',
        '- one',
        '- two',
        '',
        'Caf&eacute; & crème — 5 < 6 &unknown; ©',
      ].join('\n'),
    );
  });

  test('keeps the spacing of preformatted text', () => {
    expect(htmlToText('<p>code:</p><pre>  if x:\n      y()</pre><p>after</p>')).toBe('code:\n\n  if x:\n      y()\n\nafter');
  });

  test('table cells and line breaks stay apart', () => {
    expect(htmlToText('<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>x<br>y')).toBe('a\tb\n1\t2\n\nx\ny');
  });

  test('does not hang or throw on broken markup', () => {
    expect(htmlToText('<p>unclosed <a href="x">link <script>never closed')).toBe('unclosed link');
    expect(htmlToText('a < b and <3 <!-- open comment')).toBe('a < b and <3');
  });
});
