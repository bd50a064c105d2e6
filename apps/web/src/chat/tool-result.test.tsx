import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { DRAWN_CHARACTERS } from './tool-arguments';
import { ToolResult } from './tool-result';

afterEach(cleanup);

// A result is what a tool, a page or an MCP server wrote: "Show all" of a fetched page of 100,000 zero-width spaces
// laid out every one as a marked escape at once.
describe('a result of hidden characters shown whole', () => {
  it('draws up to the card’s bound after "Show all", marks the cut, and draws more on asking', () => {
    const hidden = 5_000;
    render(<ToolResult result={'\u200B'.repeat(hidden)} />);
    const block = document.querySelector<HTMLElement>('.result-text')!;
    const drawn = () => block.querySelectorAll('.escaped-char').length;
    expect(drawn()).toBe(Math.floor(DRAWN_CHARACTERS / 8));
    fireEvent.click(screen.getByRole('button', { name: 'Show all' }));
    expect(drawn()).toBe(Math.floor(DRAWN_CHARACTERS / 8));
    fireEvent.click(within(within(block).getByRole('note', { name: 'Not all drawn' })).getByRole('button', { name: 'Draw more of this value' }));
    expect(drawn()).toBe(hidden);
    expect(within(block).queryByRole('note', { name: 'Not all drawn' })).toBeNull();
  });

  it('draws a short result whole, with no cut', () => {
    render(<ToolResult result={`ok${'\u200B'.repeat(10)}`} />);
    expect(document.querySelectorAll('.result-text .escaped-char')).toHaveLength(10);
    expect(screen.queryByRole('note', { name: 'Not all drawn' })).toBeNull();
  });
});
