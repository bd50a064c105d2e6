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
});
