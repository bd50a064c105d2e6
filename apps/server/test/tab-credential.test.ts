import { ChatService, type AirlockServices, type ModelInfo } from '@airlock/api';
import { createAirlockClient } from '@airlock/client';
import { ApprovalRegistry } from '@airlock/core';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import type { TabCredentialsOptions } from '../src/http/tab-credentials';
import { startServer } from '../src/start-server';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
const MODEL_INFO: ModelInfo = { provider: 'demo', baseURL: null, model: 'demo', demo: true };

async function start(tabCredentials?: TabCredentialsOptions) {
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => undefined as never, tools: () => [] });
  const services: AirlockServices = { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => MODEL_INFO };
  const server = await startServer({
    config: { host: '127.0.0.1', port: 0, token: TOKEN, allowedOrigins: [] },
    services,
    webRoot: join(tmpdir(), 'airlock-no-such-web-root'),
    log: () => undefined,
    ...(tabCredentials === undefined ? {} : { tabCredentials }),
  });
  return { server, [Symbol.asyncDispose]: () => server.close() };
}

interface Frame {
  airlock?: string;
  credential?: string;
  id?: number | null;
  error?: { data?: { code?: string } };
  result?: unknown;
}

/**
 * A socket as the run's page opens it (its Host and Origin unless `headers` say otherwise) that presents `params`
 * and asks for model.info, recording what comes back.
 */
function tab(server: { port: number; browserUrl: string }, params: Record<string, string>, headers?: Record<string, string>) {
  const origin = new URL(server.browserUrl);
  const socket = new WebSocket(`ws://127.0.0.1:${server.port}/trpc?connectionParams=1`, { headers: { Host: origin.host, Origin: origin.origin, ...headers } });
  const frames: Frame[] = [];
  const refusal = new Promise<string>((resolve) => socket.once('unexpected-response', (_req, res) => resolve(String(res.statusCode))));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString('utf8')) as Frame));
  socket.once('open', () => {
    socket.send(JSON.stringify({ method: 'connectionParams', data: params }));
    socket.send(JSON.stringify({ id: 1, method: 'query', params: { path: 'model.info', input: undefined } }));
  });
  const credential = () => frames.find((frame) => frame.airlock === 'tab')?.credential;
  const answered = () => vi.waitFor(() => expect(frames.some((frame) => frame.id === 1 || frame.id === null)).toBe(true), { timeout: 10_000 });
  const refusedWith = () => frames.find((frame) => frame.id === null)?.error?.data?.code;
  return {
    socket,
    frames,
    credential,
    answered,
    refusedWith,
    refusal,
    close: async () => {
      socket.close();
      await closed;
    },
    closed,
    [Symbol.asyncDispose]: async () => socket.terminate(),
  };
}

/** Presents `credential`, again while the server has yet to see the connection it belongs to close. */
async function reopen(server: { port: number; browserUrl: string }, credential: string) {
  return vi.waitFor(
    async () => {
      const next = tab(server, { tab: credential });
      await next.answered();
      if (next.refusedWith() === 'CONFLICT') throw new Error('its connection is not seen closed yet');
      return next;
    },
    { timeout: 10_000 },
  );
}

describe('a tab credential', () => {
  it('is given beside the token on request, and re-opens the tab once after its connection closed, for a new one', async () => {
    await using running = await start();
    await using first = tab(running.server, { token: TOKEN, tab: 'new' });
    await first.answered();
    const credential = first.credential()!;
    expect(credential).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(credential).not.toContain(TOKEN);
    await first.close();

    await using second = await reopen(running.server, credential);
    expect(second.frames).toContainEqual({ id: 1, result: { type: 'data', data: MODEL_INFO } });
    const next = second.credential()!;
    expect(next).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(next).not.toBe(credential);
    await second.close();

    await using replayed = tab(running.server, { tab: credential });
    await replayed.answered();
    expect(replayed.refusedWith()).toBe('UNAUTHORIZED');
    await replayed.closed;
    expect(replayed.credential()).toBeUndefined();
  });

  it('is refused while the connection it belongs to is open, and works once that closes', async () => {
    await using running = await start();
    await using open = tab(running.server, { token: TOKEN, tab: 'new' });
    await open.answered();
    const credential = open.credential()!;

    await using copy = tab(running.server, { tab: credential });
    await copy.answered();
    expect(copy.refusedWith()).toBe('CONFLICT');
    expect(copy.frames.filter((frame) => frame.result !== undefined || frame.airlock !== undefined)).toStrictEqual([]);
    await copy.closed;

    await open.close();
    await using reopened = await reopen(running.server, credential);
    expect(reopened.frames).toContainEqual({ id: 1, result: { type: 'data', data: MODEL_INFO } });
  });

  it('is worth nothing once the grace after its connection closed is over', async () => {
    const clock = { now: 0 };
    await using running = await start({ graceMs: 30_000, now: () => clock.now });
    await using first = tab(running.server, { token: TOKEN, tab: 'new' });
    await first.answered();
    const credential = first.credential()!;
    await first.close();
    // The server may see the close after the client does: it is refused as still open until then.
    await vi.waitFor(async () => {
      clock.now += 30_000;
      await using late = tab(running.server, { tab: credential });
      await late.answered();
      expect(late.refusedWith()).toBe('UNAUTHORIZED');
    }, { timeout: 10_000 });
  });

  it('goes through the Origin and Host checks of any connection: refused from another page, it still works from the run’s own', async () => {
    await using running = await start();
    await using first = tab(running.server, { token: TOKEN, tab: 'new' });
    await first.answered();
    const credential = first.credential()!;
    await first.close();

    const { port } = running.server;
    await using foreignOrigin = tab(running.server, { tab: credential }, { Origin: 'http://evil.test' });
    expect(await foreignOrigin.refusal).toBe('403');
    await using foreignHost = tab(running.server, { tab: credential }, { Host: `evil.test:${port}`, Origin: `http://evil.test:${port}` });
    expect(await foreignHost.refusal).toBe('403');

    await using own = await reopen(running.server, credential);
    expect(own.frames).toContainEqual({ id: 1, result: { type: 'data', data: MODEL_INFO } });
  });

  it('is never taken with a wrong token beside it, and junk beyond the rate is refused while a live credential still works', async () => {
    await using running = await start({ rate: { attempts: 3, windowMs: 60_000 } });
    await using first = tab(running.server, { token: TOKEN, tab: 'new' });
    await first.answered();
    const credential = first.credential()!;
    await first.close();

    await using withWrongToken = tab(running.server, { token: `${TOKEN}x`, tab: credential });
    await withWrongToken.answered();
    expect(withWrongToken.refusedWith()).toBe('UNAUTHORIZED');

    const refusals: (string | undefined)[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      await using junk = tab(running.server, { tab: `junk-${attempt}` });
      await junk.answered();
      refusals.push(junk.refusedWith());
    }
    expect(refusals).toStrictEqual(['UNAUTHORIZED', 'UNAUTHORIZED', 'UNAUTHORIZED', 'TOO_MANY_REQUESTS']);

    await using own = tab(running.server, { tab: credential });
    await own.answered();
    expect(own.frames).toContainEqual({ id: 1, result: { type: 'data', data: MODEL_INFO } });
  });

  it('given back beside the token (a reconnect), is revoked: only the new one re-opens the tab', async () => {
    await using running = await start();
    await using first = tab(running.server, { token: TOKEN, tab: 'new' });
    await first.answered();
    const old = first.credential()!;
    await first.close();

    await using second = tab(running.server, { token: TOKEN, tab: old });
    await second.answered();
    const next = second.credential()!;
    await second.close();

    await using replayed = tab(running.server, { tab: old });
    await replayed.answered();
    expect(replayed.refusedWith()).toBe('UNAUTHORIZED');
    await using reopened = await reopen(running.server, next);
    expect(reopened.frames).toContainEqual({ id: 1, result: { type: 'data', data: MODEL_INFO } });
  });
});

describe('@airlock/client with a tab', () => {
  it('keeps each credential the server gives, and a client made again with the last one alone (a reload) connects and keeps a new one', async () => {
    await using running = await start();
    const kept: string[] = [];
    const keep = (credential: string) => void kept.push(credential);
    const first = createAirlockClient({ url: running.server.wsUrl, token: TOKEN, tab: { keep }, WebSocket });
    expect(await first.trpc.model.info.query()).toStrictEqual(MODEL_INFO);
    await vi.waitFor(() => expect(kept).toHaveLength(1), { timeout: 10_000 });
    await first.close();

    const rejected: string[] = [];
    const reloaded = createAirlockClient({
      url: running.server.wsUrl,
      token: '',
      tab: { credential: kept[0]!, keep },
      WebSocket,
      retryDelayMs: () => 50,
      onRejected: (message) => void rejected.push(message),
    });
    expect(await reloaded.trpc.model.info.query()).toStrictEqual(MODEL_INFO);
    await vi.waitFor(() => expect(kept).toHaveLength(2), { timeout: 10_000 });
    expect(kept[1]).not.toBe(kept[0]);
    expect(rejected).toStrictEqual([]);
    await reloaded.close();
  });
});
