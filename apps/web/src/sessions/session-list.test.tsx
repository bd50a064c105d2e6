import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionList } from './session-list';

afterEach(cleanup);

describe('SessionList', () => {
  it('lists an unsaved chat under a name of its own, never the name of the New chat action', () => {
    render(<SessionList sessions={[]} currentId="chat_1" draft onSelect={() => undefined} onDelete={() => undefined} />);
    const entries = screen.getAllByRole('button');
    expect(entries.map((entry) => entry.textContent)).toStrictEqual(['Untitled chat']);
    expect(screen.queryByRole('button', { name: /new chat/i })).toBeNull();
  });

  // Found from outside: a chat's title is its first message, pasted by anyone: a right-to-left override there drew the
  // title reversed in the chat list, unmarked, where the card and the reply mark it.
  it('shows a title’s hidden and reordering characters as escapes, in its entry and its Delete button’s name', () => {
    const title = 'invoice \u202Efdp.exe\u202C \u200Bdone';
    render(<SessionList sessions={[{ sessionId: 'chat_2', title, createdAt: 1, updatedAt: 1 } as never]} currentId="chat_1" draft={false} onSelect={() => undefined} onDelete={() => undefined} />);
    const shown = 'invoice \\u{202E}fdp.exe\\u{202C} \\u{200B}done';
    expect(document.querySelector('.session-title')?.textContent).toBe(shown);
    expect(screen.getByRole('button', { name: `Delete chat ${shown}` })).toBeTruthy();
  });
});
