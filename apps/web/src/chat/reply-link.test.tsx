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
});
