import { UNPROVEN_SERVER_MESSAGE } from '@airlock/client';
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthScreen } from './auth-screen';

afterEach(cleanup);

describe('the token screen', () => {
  it('says a server that could not prove it is Airlock was not trusted, without calling the link invalid or asking for the token', () => {
    render(<AuthScreen reason="unproven" detail={UNPROVEN_SERVER_MESSAGE} onToken={() => undefined} />);

    expect(screen.getByRole('heading').textContent).toBe('Could not confirm this is Airlock');
    const text = document.body.textContent ?? '';
    expect(text).toContain(
      'This page did not connect. The server at this address could not prove it is Airlock with this token (another program, or Airlock started with another token); the token was not sent.',
    );
    expect(text).not.toContain('The server said');
    expect(text).not.toMatch(/paste the token/i);
    expect(screen.queryByRole('textbox')).toBeNull();
  });

  it('says the link is no longer valid when the server refused the token, and takes a pasted address or token', () => {
    render(<AuthScreen reason="refused" detail="invalid access token" onToken={() => undefined} />);

    expect(screen.getByRole('heading').textContent).toBe('This link is no longer valid');
    expect(document.body.textContent).toContain('The server said: “invalid access token”.');
    expect(screen.getByRole('textbox', { name: 'Or paste the address, or the token alone, here' })).toBeDefined();
  });
});
