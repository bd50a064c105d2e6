import { cleanup, render, screen } from '@testing-library/react';
import { createHmac } from 'node:crypto';
import { afterEach, expect, it, vi } from 'vitest';
import { App } from './app';

/** What answers the page's socket: it opens and proves it knows a token other than the page's. */
class ImpostorSocket {
  static made: ImpostorSocket[] = [];
  readyState = 0;
  readonly sent: string[] = [];
  private readonly listeners = new Map<string, ((event?: unknown) => void)[]>();
  constructor(readonly url: string) {
    ImpostorSocket.made.push(this);
    queueMicrotask(() => this.open());
  }
  addEventListener(type: string, listener: (event: never) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener as (event?: unknown) => void]);
  }
  send(data: string): void {
    this.sent.push(data);
  }
  close(): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    for (const listener of this.listeners.get('close') ?? []) listener();
  }
  private open(): void {
    this.readyState = 1;
    for (const listener of this.listeners.get('open') ?? []) listener();
    const nonce = new URL(this.url).searchParams.get('proof') ?? '';
    const mac = createHmac('sha256', 'another token').update(`airlock server proof\n${nonce}`).digest('base64url');
    for (const listener of this.listeners.get('message') ?? []) listener({ data: JSON.stringify({ airlock: 'proof', mac }) });
  }
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

it('tells a page whose server could not prove it is Airlock that it could not confirm it, not that its link is no longer valid', async () => {
  vi.stubGlobal('WebSocket', ImpostorSocket);
  const forgotten = vi.fn();
  render(<App initialToken="secret" originStorage={undefined} saveToken={() => undefined} forgetToken={forgotten} />);

  await screen.findByRole('heading', { name: 'Could not confirm this is Airlock' });
  expect(screen.queryByRole('heading', { name: 'This link is no longer valid' })).toBeNull();
  // Not kept for the next reload, which another program holding this origin would serve.
  expect(forgotten).toHaveBeenCalled();
  expect(ImpostorSocket.made.flatMap((socket) => socket.sent).some((frame) => frame.includes('secret'))).toBe(false);
});
