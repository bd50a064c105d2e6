import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { MessageMarkdown, tooDeepForMarkdown } from './message-markdown';

afterEach(cleanup);

describe('MessageMarkdown', () => {
  it('renders ordinary model text as Markdown', () => {
    const { container } = render(<MessageMarkdown text={'# Plan\n\n- one\n  - two\n\n> quoted **bold**'} />);
    expect(container.querySelector('h1')?.textContent).toBe('Plan');
    expect(container.querySelectorAll('li')).toHaveLength(2);
    expect(container.querySelector('blockquote strong')?.textContent).toBe('bold');
  });

  it.each([
    ['a list nested 1,000 deep', `${'- '.repeat(1000)}x`],
    ['a quote nested 5,000 deep', `${'> '.repeat(5000)}x`],
    ['20,000 nested emphasis markers', '*a'.repeat(20_000)],
  ])('shows %s as it is, without overflowing the stack or freezing', (_name, text) => {
    expect(tooDeepForMarkdown(text)).toBe(true);
    const { container } = render(<MessageMarkdown text={text} />);
    expect(container.querySelector('.plain-text')?.textContent).toBe(text);
  });

  it('keeps ordinary nesting as Markdown', () => {
    expect(tooDeepForMarkdown(`${'  '.repeat(5)}- item\n${'> '.repeat(3)}quote\n1. first`)).toBe(false);
    render(<MessageMarkdown text={'1. first\n2. second'} />);
    expect(screen.getAllByRole('listitem')).toHaveLength(2);
  });
});
