import { describe, expect, test } from 'vitest';
import { decodeEntities, htmlToText } from './html-to-text';

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

describe('decodeEntities', () => {
  test('decodes numeric references and rejects invalid code points', () => {
    expect(decodeEntities('&#65;&#x42;&#0;&#xD800;&#x110000;')).toBe('AB\uFFFD\uFFFD\uFFFD');
  });
});
