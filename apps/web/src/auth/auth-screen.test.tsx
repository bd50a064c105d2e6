import { UNPROVEN_SERVER_MESSAGE } from '@airlock/client';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthScreen } from './auth-screen';

afterEach(cleanup);

describe('the token screen', () => {
  it('says a server that could not prove it is Airlock was not trusted, without calling the link invalid, and takes another token', () => {
    const pasted: string[] = [];
    render(<AuthScreen reason="unproven" detail={UNPROVEN_SERVER_MESSAGE} onToken={(token) => pasted.push(token)} />);

    expect(screen.getByRole('heading').textContent).toBe('Could not confirm this is Airlock');
    const text = document.body.textContent ?? '';
    expect(text).toContain(
      'This page did not connect, and this tab no longer keeps anything to reconnect with. The server at this address could not prove it is Airlock with this token (another program, or Airlock started with another token); the token was not sent.',
    );
    expect(text).not.toContain('The server said');
    // A mistyped token looks the same as another program to the page: the person can paste the right one, which is
    // sent only to a server that proves it knows it.
    fireEvent.change(screen.getByRole('textbox', { name: 'Or paste the address, or the token alone, here' }), { target: { value: 'the-right-token' } });
    fireEvent.click(screen.getByRole('button', { name: 'Connect' }));
    expect(pasted).toStrictEqual(['the-right-token']);
  });

  it('says the link is no longer valid when the server refused the token, and takes a pasted address or token', () => {
    render(<AuthScreen reason="refused" detail="invalid access token" onToken={() => undefined} />);

    expect(screen.getByRole('heading').textContent).toBe('This link is no longer valid');
    expect(document.body.textContent).toContain('The server said: “invalid access token”.');
    expect(screen.getByRole('textbox', { name: 'Or paste the address, or the token alone, here' })).toBeDefined();
  });

  it('says the server was restarted on a new address, not that the token was refused, when a later run refuses this page’s address', () => {
    render(<AuthScreen reason="moved" detail="Airlock was started again, on a new address: open the link it printed then" onToken={() => undefined} />);

    expect(screen.getByRole('heading').textContent).toBe('Airlock was restarted on a new address');
    const text = document.body.textContent ?? '';
    expect(text).toContain(
      'The Airlock server was restarted and is now at a new address, so this tab cannot reach it any more. Open the new link it printed when it started: your chats, and any call still waiting for you, are there.',
    );
    expect(text).not.toContain('access token');
    expect(text).not.toContain('The server said');
  });
});
