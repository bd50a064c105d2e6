import { cleanup, render, screen } from '@testing-library/react';
import { createHmac } from 'node:crypto';
import { afterEach, expect, it, vi } from 'vitest';
import { forgetTabCredential, keepTabCredential } from '../auth/token-store';
import { App } from './app';

const TAB_CREDENTIAL = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcde';

/**
 * What answers the page's socket: it opens and proves it knows `known`, and, as Airlock does when asked (`tab` in
 * the connection params), gives the connection a tab credential.
 */
function answeringSocket(known: string) {
  return class AnsweringSocket {
    static made: AnsweringSocket[] = [];
    readyState = 0;
    readonly sent: string[] = [];
    private readonly listeners = new Map<string, ((event?: unknown) => void)[]>();
    constructor(readonly url: string) {
      AnsweringSocket.made.push(this);
      queueMicrotask(() => this.open());
    }
    addEventListener(type: string, listener: (event: never) => void): void {
      this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener as (event?: unknown) => void]);
    }
    send(data: string): void {
      this.sent.push(data);
      if (data.includes('"connectionParams"') && data.includes('"tab"')) this.deliver(JSON.stringify({ airlock: 'tab', credential: TAB_CREDENTIAL }));
    }
    close(): void {
      if (this.readyState === 3) return;
      this.readyState = 3;
      for (const listener of this.listeners.get('close') ?? []) listener();
    }
    private deliver(data: string): void {
      for (const listener of this.listeners.get('message') ?? []) listener({ data });
    }
    private open(): void {
      this.readyState = 1;
      for (const listener of this.listeners.get('open') ?? []) listener();
      const url = new URL(this.url);
      const nonce = url.searchParams.get('proof') ?? '';
      this.deliver(JSON.stringify({ airlock: 'proof', mac: createHmac('sha256', known).update(`airlock server proof v2\n${url.host}\n${nonce}`).digest('base64url') }));
    }
  };
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  window.sessionStorage.clear();
});

it('tells a page whose server could not prove it is Airlock that it could not confirm it, not that its link is no longer valid', async () => {
  const ImpostorSocket = answeringSocket('another token');
  vi.stubGlobal('WebSocket', ImpostorSocket);
  const forgotten = vi.fn();
  render(<App initialAccess={{ kind: 'token', token: 'secret' }} originStorage={undefined} keepTabCredential={() => undefined} forgetTabCredential={forgotten} />);

  await screen.findByRole('heading', { name: 'Could not confirm this is Airlock' });
  expect(screen.queryByRole('heading', { name: 'This link is no longer valid' })).toBeNull();
  // Not kept for the next reload, which another program holding this origin would serve.
  expect(forgotten).toHaveBeenCalled();
  expect(ImpostorSocket.made.flatMap((socket) => socket.sent).some((frame) => frame.includes('secret'))).toBe(false);
});

it('keeps in sessionStorage only the tab credential the server gives, never the token it connected with', async () => {
  const AirlockSocketStub = answeringSocket('secret');
  vi.stubGlobal('WebSocket', AirlockSocketStub);
  const env = { storage: window.sessionStorage };
  render(
    <App
      initialAccess={{ kind: 'token', token: 'secret' }}
      originStorage={undefined}
      keepTabCredential={(credential) => keepTabCredential(env, credential)}
      forgetTabCredential={() => forgetTabCredential(env)}
    />,
  );

  await vi.waitFor(() => expect(window.sessionStorage.getItem('airlock.tab')).toBe(TAB_CREDENTIAL));
  const stored = Array.from({ length: window.sessionStorage.length }, (_, index) => {
    const key = window.sessionStorage.key(index)!;
    return [key, window.sessionStorage.getItem(key)];
  });
  expect(stored).toContainEqual(['airlock.tab', TAB_CREDENTIAL]);
  expect(stored.filter(([key, value]) => `${key}=${value}`.includes('secret'))).toStrictEqual([]);
  expect(AirlockSocketStub.made.flatMap((socket) => socket.sent).find((frame) => frame.includes('"connectionParams"'))).toContain('"tab":"new"');
});
