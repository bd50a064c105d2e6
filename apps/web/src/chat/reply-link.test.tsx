import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MessageMarkdown } from './message-markdown';

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe('a link in a reply', () => {
  it('is a button showing its full address, not an address the browser could look up before a click', () => {
    const { container } = render(<MessageMarkdown text={'See [the docs](http://secret-1111.attacker.example/x) and <http://other.example/y>.'} />);
    expect(container.querySelectorAll('[href]')).toHaveLength(0);
    const link = screen.getByRole('button', { name: 'the docs' });
    expect(link.getAttribute('title')).toBe('http://secret-1111.attacker.example/x');
    expect(screen.getByRole('button', { name: 'http://other.example/y' }).getAttribute('title')).toBe('http://other.example/y');
  });

  it('opens its address in a new tab on a click, with no referrer and no way back to the app', () => {
    const open = vi.spyOn(window, 'open').mockReturnValue(null);
    render(<MessageMarkdown text={'[the docs](https://example.test/docs?a=1)'} />);
    fireEvent.click(screen.getByRole('button', { name: 'the docs' }));
    expect(open.mock.calls).toStrictEqual([['https://example.test/docs?a=1', '_blank', 'noopener,noreferrer']]);
  });

  it('is its text alone when its address was not safe to open', () => {
    const { container } = render(<MessageMarkdown text={'[run me](javascript:alert(1)) and [this](data:text/html,x)'} />);
    expect(screen.queryAllByRole('button')).toStrictEqual([]);
    expect(container.textContent).toBe('run me and this');
  });

  // Found from outside: `[docs](http://airlock-<run>.localhost:7840@evil.example/e)` showed on hover an address starting
  // with Airlock's own, and a click opened evil.example.
  it('drops a user name and password from the address it shows and opens', () => {
    const open = vi.spyOn(window, 'open').mockReturnValue(null);
    render(<MessageMarkdown text={'[docs](http://airlock-abc.localhost:7840@evil.example:7846/e?x=1) and [b](https://u:p@docs.example/)'} />);
    const link = screen.getByRole('button', { name: 'docs' });
    expect(link.getAttribute('title')).toBe('http://evil.example:7846/e?x=1');
    fireEvent.click(link);
    expect(screen.getByRole('button', { name: 'b' }).getAttribute('title')).toBe('https://docs.example/');
    expect(open.mock.calls).toStrictEqual([['http://evil.example:7846/e?x=1', '_blank', 'noopener,noreferrer']]);
  });

  // Found in review: an address with no scheme (`//host`) was left as written, so
  // `//airlock-<run>.localhost:7840@evil.example/e` kept on hover the address starting with Airlock's own, and the
  // browser, reading it against the page's address, opened evil.example.
  it('shows and opens an address with no scheme as the browser reads it against the page, with no user name or password', () => {
    const open = vi.spyOn(window, 'open').mockReturnValue(null);
    render(<MessageMarkdown text={'[docs](//airlock-abc.localhost:7840@evil.example:7846/e?x=1) and [b](//u:p@other.example/f) and [c](notes/a.md)'} />);
    const scheme = window.location.protocol;
    const shown = ['docs', 'b', 'c'].map((name) => screen.getByRole('button', { name }).getAttribute('title'));
    expect(shown).toStrictEqual([`${scheme}//evil.example:7846/e?x=1`, `${scheme}//other.example/f`, new URL('notes/a.md', window.location.href).href]);
    fireEvent.click(screen.getByRole('button', { name: 'docs' }));
    fireEvent.click(screen.getByRole('button', { name: 'b' }));
    expect(open.mock.calls).toStrictEqual([
      [`${scheme}//evil.example:7846/e?x=1`, '_blank', 'noopener,noreferrer'],
      [`${scheme}//other.example/f`, '_blank', 'noopener,noreferrer'],
    ]);
  });
});

describe('an image in a reply', () => {
  it('is drawn as its alt text and loads nothing, its address on hover', () => {
    const { container } = render(<MessageMarkdown text={'Look: ![a chart](http://127.0.0.1:7845/leak?q=secret "Chart")'} />);
    expect(container.querySelectorAll('img, [src]')).toHaveLength(0);
    const image = screen.getByRole('img', { name: 'image: a chart' });
    expect(image.textContent).toBe('[image: a chart]');
    expect(image.getAttribute('title')).toBe('http://127.0.0.1:7845/leak?q=secret');
  });
});

// Found from outside: the reply's escaping left out an image's alt text (drawn inline) and title, and a block of raw
// HTML (drawn as text): a right-to-left override there turned `…\u202Egnp.eman_elif_ssh_ypoc` around, unmarked.
describe('hidden characters anywhere a reply is drawn', () => {
  it('are escaped in an image’s alt text, a link’s and an image’s title, and a block of raw HTML', () => {
    const { container } = render(
      <MessageMarkdown text={'![I will only read \u202Egnp.eman\u202C README](http://x.example/i "t\u202Eitle") [![\u2067hidden\u2069](/nope.png)](http://x.example/y "l\u200Bink")\n\n<div>block \u202Eevil\u202C \u200B</div>'} />,
    );
    const text = container.textContent;
    expect(text).toContain('[image: I will only read \\u{202E}gnp.eman\\u{202C} README]');
    expect(text).toContain('[image: \\u{2067}hidden\\u{2069}]');
    expect(text).toContain('<div>block \\u{202E}evil\\u{202C} \\u{200B}</div>');
    expect(text).not.toMatch(/[\u202E\u2067\u200B]/);
    for (const element of container.querySelectorAll('[title]')) expect(element.getAttribute('title')).not.toMatch(/[\u202E\u2067\u200B]/);
  });
});

describe('a link to a host named in another script', () => {
  it('shows and opens the address as the browser resolves it, its host in punycode', () => {
    const open = vi.spyOn(window, 'open').mockReturnValue(null);
    render(<MessageMarkdown text={'[log in](https://\u0430pple.com/login)'} />);
    const link = screen.getByRole('button', { name: 'log in' });
    expect(link.getAttribute('title')).toBe('https://xn--pple-43d.com/login');
    fireEvent.click(link);
    expect(open.mock.calls).toStrictEqual([['https://xn--pple-43d.com/login', '_blank', 'noopener,noreferrer']]);
  });
});
