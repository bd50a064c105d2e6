import { ChatService, confirmInputSchema, type AppRouter, type ModelInfo } from '@airlock/api';
import { ApprovalRegistry, CLOSE_REPLACED_BEFORE_TOKEN, type ModelPart } from '@airlock/core';
import { deferred, hangingStep, ScriptedModel, textStep, type ScriptStep } from '@airlock/core/testing';
import { createTRPCClient, createWSClient, TRPCClientError, wsLink } from '@trpc/client';
import { readdirSync, readlinkSync } from 'node:fs';
import { mkdir, truncate, writeFile } from 'node:fs/promises';
import { request, type Agent } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { ConfigError, DEFAULT_CAPACITY, loadConfig, type Capacity } from '../src/config';
import { ownLimit } from '../src/own-limits';
import { MAX_MESSAGE_SEPARATORS } from '../src/http/requests-per-message';
import { MAX_PIPELINED_REQUESTS, startServer, type RunningServer, type StartServerOptions } from '../src/start-server';
import { tempDir } from './support/temp-dir';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
const MODEL_INFO: ModelInfo = { provider: 'demo', baseURL: null, model: 'demo', demo: true };

async function startTestServer(
  options: { steps?: ScriptStep[]; capacity?: Partial<Capacity> } & Pick<StartServerOptions, 'sendWindow' | 'httpTimeouts' | 'webRoot'> = {},
) {
  const model = new ScriptedModel(options.steps ?? []);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [] });
  const lines: string[] = [];
  const server = await startServer({
    config: { host: '127.0.0.1', port: 0, token: TOKEN, allowedOrigins: [], capacity: options.capacity ?? {} },
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => MODEL_INFO },
    webRoot: options.webRoot ?? join(tmpdir(), 'airlock-no-such-web-root'),
    log: (line) => lines.push(line),
    ...(options.sendWindow === undefined ? {} : { sendWindow: options.sendWindow }),
    ...(options.httpTimeouts === undefined ? {} : { httpTimeouts: options.httpTimeouts }),
  });
  return { server, chat, lines, [Symbol.asyncDispose]: () => server.close() };
}

/** A tRPC client with the token; `retryDelayMs` is how long it waits to try again when its socket is refused or closed (default 60 s). */
function connectClient(server: RunningServer, options: { retryDelayMs?: number } = {}) {
  const wsClient = createWSClient({
    url: server.wsUrl,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    connectionParams: { token: TOKEN },
    retryDelayMs: () => options.retryDelayMs ?? 60_000,
  });
  const client = createTRPCClient<AppRouter>({ links: [wsLink({ client: wsClient })] });
  return { client, [Symbol.asyncDispose]: () => wsClient.close() };
}

/** A raw socket that has presented the token; `frames` collects every parsed message once reading. */
async function authenticatedSocket(server: RunningServer) {
  const socket = new WebSocket(`${server.wsUrl}?connectionParams=1`);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));
  return { socket, closed, [Symbol.asyncDispose]: async () => socket.terminate() };
}

/** The status a WebSocket upgrade is answered with: 101 when accepted. */
function upgradeStatus(url: string): Promise<number> {
  const socket = new WebSocket(url);
  socket.on('error', () => undefined);
  return new Promise((resolve) => {
    socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    socket.once('open', () => {
      socket.terminate();
      resolve(101);
    });
  });
}

/** The status `/healthz` answers with, on a socket of its own, or kept open afterwards in `agent` when it keeps sockets alive. */
function healthz(port: number, agent?: Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = { Host: `127.0.0.1:${port}`, ...(agent === undefined ? { Connection: 'close' } : {}) };
    const req = request({ host: '127.0.0.1', port, path: '/healthz', headers, ...(agent === undefined ? {} : { agent }) }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A raw TCP socket to the server, once connected; `closed` resolves with every byte it received once the server closed it. */
async function rawTcp(port: number, options: { paused?: boolean } = {}) {
  const socket = connect(port, '127.0.0.1');
  if (options.paused === true) socket.pause();
  let received = 0;
  socket.on('data', (chunk: Buffer) => (received += chunk.length));
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(received)));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return { socket, closed, [Symbol.asyncDispose]: async () => void socket.destroy() };
}

/**
 * A WebSocket that has not presented its token yet. `ask()` asks model.info and resolves with the answer, or with
 * 'closed' when the socket closes first; `present()` presents the token, then asks.
 */
async function quietSocket(server: RunningServer) {
  const socket = new WebSocket(`${server.wsUrl}?connectionParams=1`);
  const closed = new Promise<{ code: number }>((resolve) => socket.on('close', (code) => resolve({ code })));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const ask = () => {
    const answer = new Promise<WireMessage>((resolve) => socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString('utf8')) as WireMessage)));
    socket.send(JSON.stringify({ id: 1, method: 'query', params: { path: 'model.info' } }));
    return Promise.race([answer, closed.then(() => 'closed' as const)]);
  };
  const present = () => {
    socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));
    return ask();
  };
  return { socket, closed, present, ask, [Symbol.asyncDispose]: async () => socket.terminate() };
}

/** A model turn of `count` text deltas of `size` characters each. */
function bigStep(count: number, size: number): ModelPart[] {
  const text = 'x'.repeat(size);
  return [...Array.from({ length: count }, (): ModelPart => ({ type: 'text-delta', text })), { type: 'finish', reason: 'stop' }];
}

/** A model turn of `count` deltas of `size` characters each, reasoning and text in turn: one event each (deltas of one kind that come together are joined). */
function eventPerDeltaStep(count: number, size: number): ModelPart[] {
  const text = 'x'.repeat(size);
  return [...Array.from({ length: count }, (_, i): ModelPart => ({ type: i % 2 === 0 ? 'reasoning-delta' : 'text-delta', text })), { type: 'finish', reason: 'stop' }];
}

/** Runs a whole run through a real client and answers how many events it has. */
async function runToEnd(client: ReturnType<typeof connectClient>['client'], sessionId: string, runId: string): Promise<number> {
  const ended = deferred<number>();
  let events = 0;
  const subscription = client.chat.stream.subscribe(
    { sessionId, runId, message: 'go' },
    {
      onData: ({ data }) => {
        events++;
        if (data.type === 'run-end') ended.resolve(events);
      },
      onError: (error) => ended.reject(error),
    },
  );
  try {
    return await ended.promise;
  } finally {
    subscription.unsubscribe();
  }
}

type WireMessage = { id: number | string | null; result?: { type: string; id?: string }; error?: { message: string; data: { code: string } } };

/**
 * Sends the chat's title changes in one message on a socket of their own, which has presented the token, and answers
 * each change's outcome, in the order sent: 'ok', or its error's code.
 */
async function changeTitles(server: RunningServer, sessionId: string, titles: string[]): Promise<string[]> {
  await using raw = await authenticatedSocket(server);
  const answers = new Map<number, WireMessage>();
  const all = deferred<void>();
  raw.socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as WireMessage;
    if (typeof message.id === 'number') answers.set(message.id, message);
    if (answers.size === titles.length) all.resolve();
  });
  raw.socket.send(JSON.stringify(titles.map((title, i) => ({ id: i + 1, method: 'mutation', params: { path: 'sessions.update', input: { sessionId, title } } }))));
  await all.promise;
  return titles.map((_, i) => answers.get(i + 1)?.error?.data.code ?? 'ok');
}

describe('a client that stops reading', () => {
  it('gets 32 of 100 replays of a large run, all complete once it reads, while the server stays bounded and answers others', async () => {
    const deltas = 1000;
    await using running = await startTestServer({ steps: [eventPerDeltaStep(deltas, 1024)] });
    await using reader = connectClient(running.server);
    const events = await runToEnd(reader.client, 'big', 'big-run');
    expect(events).toBeGreaterThanOrEqual(deltas);

    await using slow = await authenticatedSocket(running.server);
    const before = process.memoryUsage();
    for (let i = 0; i < 100; i++) {
      slow.socket.send(JSON.stringify({ id: i + 1, method: 'subscription', params: { path: 'chat.stream', input: { sessionId: 'big', runId: 'big-run' } } }));
    }
    slow.socket.pause();

    // Answered only after the replays have pushed all they could: their reads chain on promises alone.
    await using other = connectClient(running.server);
    expect((await other.client.sessions.list.query()).sessions).toMatchObject([{ sessionId: 'big' }]);
    expect(await healthz(running.server.port)).toBe(200);
    const after = process.memoryUsage();
    // Without a send window the 100 replays queue about 100 MiB here.
    expect(after.heapUsed + after.external - (before.heapUsed + before.external)).toBeLessThan(32 * 2 ** 20);

    const lastSeq = new Map<number, number>();
    const errors = new Map<number, WireMessage['error']>();
    const stopped = new Set<number>();
    const done = deferred<void>();
    slow.socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString('utf8')) as WireMessage;
      if (typeof message.id !== 'number') return;
      const id = message.id;
      if (message.error) errors.set(id, message.error);
      if (message.result?.type === 'data') {
        const seq = Number(message.result.id?.split(':').at(-1));
        // Every replay goes on from where it stopped: no event twice, none missing.
        if (seq !== (lastSeq.get(id) ?? 0) + 1) done.reject(new Error(`subscription ${id}: seq ${seq} after ${lastSeq.get(id) ?? 0}`));
        lastSeq.set(id, seq);
      }
      if (message.result?.type === 'stopped') stopped.add(id);
      if (stopped.size === 100) done.resolve();
    });
    slow.socket.resume();
    await done.promise;

    const served = [...stopped].filter((id) => !errors.has(id));
    expect([served.length, errors.size]).toStrictEqual([32, 68]);
    for (const id of served) expect(lastSeq.get(id)).toBe(events);
    expect(new Set([...errors.values()].map((error) => `${error?.data.code} ${error?.message}`))).toStrictEqual(
      new Set(['TOO_MANY_REQUESTS limit exceeded: at most 32 subscriptions open at once per connection']),
    );
  }, 60_000);

  it('is answered the queries of a batch one at a time, as its socket takes them: it holds one big answer, not the batch', async () => {
    // One message of 2 M characters of 3 bytes: each read of the chat is an answer of 6 MB, more than the kernel's
    // buffers take from a client that reads nothing.
    const text = '€'.repeat(2_000_000);
    await using running = await startTestServer({ steps: [[{ type: 'text-delta', text }, { type: 'finish', reason: 'stop' }]] });
    await using reader = connectClient(running.server);
    await runToEnd(reader.client, 'big', 'big-run');
    const reads = vi.spyOn(running.chat, 'getSession');

    await using slow = await authenticatedSocket(running.server);
    const tcp = (slow.socket as unknown as { _socket: Duplex })._socket;
    tcp.pause();
    const batch = Array.from({ length: 8 }, (_, i) => ({ id: i + 1, method: 'query', params: { path: 'sessions.get', input: { sessionId: 'big' } } }));
    slow.socket.send(JSON.stringify(batch));
    await vi.waitFor(() => expect(reads).toHaveBeenCalled(), { timeout: 30_000 });
    // Answered once the first read's answer has met the window: another client connects and asks after it.
    await using other = connectClient(running.server);
    expect(await other.client.model.info.query()).toStrictEqual(MODEL_INFO);
    // The first answer fills the kernel's buffers and the window; before, all 8 were read and their 48 MB queued.
    expect(reads.mock.calls.length).toBeLessThanOrEqual(2);

    const answers: { id: number | null; error?: unknown; result?: { data?: unknown } }[] = [];
    const all = deferred<void>();
    slow.socket.on('message', (data: Buffer) => {
      answers.push(JSON.parse(data.toString('utf8')) as (typeof answers)[number]);
      if (answers.length === batch.length) all.resolve();
    });
    tcp.resume();
    await all.promise;
    expect(answers.map((answer) => [answer.id, answer.error, JSON.stringify(answer.result?.data).includes(text)])).toStrictEqual(
      batch.map((request) => [request.id, undefined, true]),
    );
    expect(reads).toHaveBeenCalledTimes(batch.length);
  }, 60_000);

  it('is closed with 1013 and a reason, the one that went the longest without reading first, once the sockets together hold more unsent than the server keeps; one under it is not, and gets all once it reads (found in review)', async () => {
    // Each read of the chat is an answer of 6 MB, more than the kernel's buffers take from a client that reads nothing:
    // one socket holds one, counted whole until it is all written, under the total; two hold more than it.
    const text = '€'.repeat(2_000_000);
    await using running = await startTestServer({
      steps: [[{ type: 'text-delta', text }, { type: 'finish', reason: 'stop' }]],
      sendWindow: { highWaterBytes: 256 * 1024, stallMs: 60_000, totalBytes: 9 * 2 ** 20 },
    });
    await using reader = connectClient(running.server);
    await runToEnd(reader.client, 'big', 'big-run');
    const reads = vi.spyOn(running.chat, 'getSession');
    /** A socket that asks for the chat `count` times, one answer at a time, and reads none of it until told to. */
    const slowReader = async (count: number) => {
      const raw = await authenticatedSocket(running.server);
      const tcp = (raw.socket as unknown as { _socket: Duplex })._socket;
      tcp.pause();
      const answers: number[] = [];
      raw.socket.on('message', (data: Buffer) => {
        const message = JSON.parse(data.toString('utf8')) as WireMessage;
        if (typeof message.id === 'number' && message.error === undefined) answers.push(message.id);
      });
      const readsBefore = reads.mock.calls.length;
      raw.socket.send(JSON.stringify(Array.from({ length: count }, (_, i) => ({ id: i + 1, method: 'query', params: { path: 'sessions.get', input: { sessionId: 'big' } } }))));
      await vi.waitFor(() => expect(reads.mock.calls.length).toBeGreaterThan(readsBefore), { timeout: 30_000 });
      return { ...raw, tcp, answers };
    };

    // One socket alone holds a few MB unsent: under the total, it stays, as a client briefly slow would.
    const first = await slowReader(2);
    await using second = await slowReader(2);
    await vi.waitFor(() => expect(running.lines.filter((line) => line.startsWith('Closed a connection holding'))).toHaveLength(1), { timeout: 30_000 });
    expect(running.lines.find((line) => line.startsWith('Closed a connection holding'))).toMatch(
      /^Closed a connection holding \d+ KiB unsent: the connections' send buffers together held more than 9 MiB, and it had gone the longest without reading$/,
    );
    first.tcp.resume();
    expect(await first.closed).toStrictEqual({ code: 1013, reason: 'the server holds too much unsent for slow connections: this one went the longest without reading' });

    // The other, under the total once the first went, reads all it asked for and is still open.
    second.tcp.resume();
    await vi.waitFor(() => expect(second.answers).toStrictEqual([1, 2]), { timeout: 30_000 });
    expect(second.socket.readyState).toBe(WebSocket.OPEN);
  }, 60_000);

  it('is closed with 1008 when one message carries more than 64 requests, and none of them runs', async () => {
    await using running = await startTestServer({ steps: [hangingStep('never')] });
    await using slow = await authenticatedSocket(running.server);
    const frame = Array.from({ length: 65 }, (_, i) => ({ id: i + 1, method: 'subscription', params: { path: 'chat.stream', input: { sessionId: `many-${i}`, runId: `many-run-${i}`, message: 'go' } } }));
    slow.socket.send(JSON.stringify(frame));
    expect(await slow.closed).toStrictEqual({ code: 1008, reason: 'at most 64 requests per message' });
    await using other = connectClient(running.server);
    expect(await other.client.sessions.list.query()).toStrictEqual({ sessions: [], nextCursor: null });
  });

  it('is closed with 1008 and a reason once its send buffer has not drained within the stall limit', async () => {
    await using running = await startTestServer({ steps: [bigStep(4000, 2048)], sendWindow: { highWaterBytes: 64 * 1024, stallMs: 100 } });
    // The only client: the stall limit is short enough to catch any client of a busy machine.
    await using slow = await authenticatedSocket(running.server);

    // Paused below ws, at the TCP socket, so that nothing of ws's own pausing is in play when reading resumes.
    const tcp = (slow.socket as unknown as { _socket: Duplex })._socket;
    slow.socket.send(JSON.stringify({ id: 1, method: 'subscription', params: { path: 'chat.stream', input: { sessionId: 'big', runId: 'big-run', message: 'go' } } }));
    tcp.pause();
    await vi.waitFor(() => expect(running.lines.some((line) => line.startsWith('Closed a connection that read nothing for 0.1 s'))).toBe(true), { timeout: 30_000 });
    tcp.resume();

    expect(await slow.closed).toStrictEqual({ code: 1008, reason: 'send buffer not drained in 0.1 s' });
  }, 60_000);
});

describe('a client that sends pings and reads nothing', () => {
  it('is cut once its pongs wait unwritten, with or without the token: what it makes the server hold stays small', async () => {
    await using running = await startTestServer({ capacity: { authTimeoutMs: 60_000 } });
    await using stranger = await quietSocket(running.server);
    // Answered, to a client that reads.
    const pong = new Promise<string>((resolve) => stranger.socket.once('pong', (data: Buffer) => resolve(data.toString('utf8'))));
    stranger.socket.ping('are you there');
    expect(await pong).toBe('are you there');
    const tcp = (stranger.socket as unknown as { _socket: Duplex })._socket;
    tcp.pause();
    // 38 MB of pings, each answered with a pong of the same 125 bytes: more than the kernel's buffers take. `ws` cuts
    // the socket once 60 of its pongs wait (its maxPendingAutoPongs), long before the send window would close it.
    const payload = Buffer.alloc(125, 1);
    for (let i = 0; i < 300_000; i++) stranger.socket.ping(payload);
    // Still reading nothing: the cut reaches it as its next write fails.
    expect(await stranger.closed).toStrictEqual({ code: 1006 });
  }, 60_000);
});

describe('subscriptions per connection', () => {
  it('refuses the one over the configured cap with TOO_MANY_REQUESTS, starts no run for it, and frees a place when one stops', async () => {
    await using dir = await tempDir('airlock-limits-');
    const config = loadConfig(['--port', '0', '--subscriptions-per-connection', '2'], { AIRLOCK_TOKEN: TOKEN }, dir.path);
    expect(config.capacity.subscriptionsPerConnection).toBe(2);
    await using running = await startTestServer({ steps: [hangingStep('a'), hangingStep('b')], capacity: config.capacity });
    await using connection = connectClient(running.server);
    const { client } = connection;
    const firstEvent = (subscribe: (handlers: { onData: (value: unknown) => void; onError: (error: unknown) => void }) => { unsubscribe(): void }) => {
      const first = deferred<unknown>();
      const subscription = subscribe({ onData: (value) => first.resolve(value), onError: (error) => first.reject(error) });
      return { first: first.promise, subscription };
    };
    const watch = firstEvent((handlers) => client.sessions.watch.subscribe(undefined, handlers));
    const run = firstEvent((handlers) => client.chat.stream.subscribe({ sessionId: 's1', runId: 'r1', message: 'hi' }, handlers));
    await watch.first;
    await run.first;

    const refused = firstEvent((handlers) => client.chat.stream.subscribe({ sessionId: 's2', runId: 'r2', message: 'hi' }, handlers));
    const error = await refused.first.then(
      () => undefined,
      (cause: unknown) => cause,
    );
    expect(error).toBeInstanceOf(TRPCClientError);
    expect([(error as TRPCClientError<AppRouter>).data?.code, (error as Error).message]).toStrictEqual([
      'TOO_MANY_REQUESTS',
      'limit exceeded: at most 2 subscriptions open at once per connection',
    ]);
    expect((await client.sessions.list.query()).sessions.map((session) => session.sessionId)).toStrictEqual(['s1']);

    watch.subscription.unsubscribe();
    await vi.waitFor(async () => {
      const again = firstEvent((handlers) => client.sessions.watch.subscribe(undefined, handlers));
      try {
        expect(await again.first).toStrictEqual({ type: 'ready' });
      } finally {
        again.subscription.unsubscribe();
      }
    });
    run.subscription.unsubscribe();
  });

  it('refuses session watches over the cap with TOO_MANY_REQUESTS, however many, and logs none of them', async () => {
    await using running = await startTestServer({ capacity: { subscriptionsPerConnection: 2 } });
    await using connection = connectClient(running.server);
    const { client } = connection;
    const watch = () => {
      const first = deferred<unknown>();
      const subscription = client.sessions.watch.subscribe(undefined, { onData: (value) => first.resolve(value), onError: (error) => first.reject(error) });
      return { first: first.promise, subscription };
    };
    const kept = [watch(), watch()];
    for (const { first } of kept) expect(await first).toStrictEqual({ type: 'ready' });
    const logged = running.lines.length;

    const refused = Array.from({ length: 50 }, watch);
    const errors = await Promise.all(refused.map(({ first }) => first.then(() => undefined, (cause: unknown) => cause)));
    expect(new Set(errors.map((error) => error instanceof TRPCClientError && `${String(error.data?.code)}: ${error.message}`))).toStrictEqual(
      new Set(['TOO_MANY_REQUESTS: limit exceeded: at most 2 subscriptions open at once per connection']),
    );
    expect(running.lines.slice(logged)).toStrictEqual([]);
    for (const { subscription } of [...kept, ...refused]) subscription.unsubscribe();
  });
});

describe('one client\'s watches and changes', () => {
  it('a connection holds 4 session watches at most: the fifth is refused with TOO_MANY_REQUESTS, well under the subscriptions cap', async () => {
    await using running = await startTestServer();
    await using connection = connectClient(running.server);
    const watch = () => {
      const first = deferred<unknown>();
      const subscription = connection.client.sessions.watch.subscribe(undefined, { onData: (value) => first.resolve(value), onError: (error) => first.reject(error) });
      return { first: first.promise, subscription };
    };
    const kept = [watch(), watch(), watch(), watch()];
    for (const { first } of kept) expect(await first).toStrictEqual({ type: 'ready' });
    const refused = watch();
    const error = await refused.first.then(
      () => undefined,
      (cause: unknown) => cause,
    );
    expect(error instanceof TRPCClientError && `${String(error.data?.code)}: ${error.message}`).toBe('TOO_MANY_REQUESTS: limit exceeded: at most 4 watches of the chat list open at once per connection');
    for (const { subscription } of [...kept, refused]) subscription.unsubscribe();
  });

  it('a message of 64 title changes makes 60 of them; the rest are refused with TOO_MANY_REQUESTS and change nothing', async () => {
    await using running = await startTestServer({ steps: [textStep('hi')] });
    await using connection = connectClient(running.server);
    await runToEnd(connection.client, 's1', 'r1');
    const titles = Array.from({ length: 64 }, (_, i) => `title ${i + 1}`);
    const outcomes = await changeTitles(running.server, 's1', titles);
    expect([outcomes.filter((code) => code === 'ok').length, outcomes.filter((code) => code === 'TOO_MANY_REQUESTS').length]).toStrictEqual([60, 4]);
    const made = titles.filter((_, i) => outcomes[i] === 'ok');
    const [session] = (await connection.client.sessions.list.query()).sessions;
    expect(made).toContain(session?.title);
  });
});

describe('a deeply nested message', () => {
  it('is closed with 1008 before anything parses it', async () => {
    await using running = await startTestServer();
    await using raw = await authenticatedSocket(running.server);
    const frame = '['.repeat(500_000) + ']'.repeat(500_000);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      raw.socket.send(frame);
      expect(await raw.closed).toStrictEqual({ code: 1008, reason: 'JSON nested deeper than 128 levels' });
      expect(parse.mock.calls.filter(([text]) => text.length === frame.length)).toStrictEqual([]);
    } finally {
      parse.mockRestore();
    }
  });

  it('passes with an edit of a call\'s arguments nested past their own bound: the schema refuses those, not the socket', async () => {
    await using running = await startTestServer();
    await using connection = connectClient(running.server);
    let nested: unknown = 'leaf';
    for (let level = 0; level < 65; level++) nested = { level: nested };
    const error = await connection.client.chat.confirmTool
      .mutate({ sessionId: 's1', approvalId: 'a1', decision: 'allow', arguments: nested as Record<string, unknown> })
      .then(
        () => undefined,
        (cause: unknown) => cause,
      );
    expect(error instanceof TRPCClientError && `${String(error.data?.code)}: ${error.message}`).toBe('BAD_REQUEST: arguments: at most 64 levels of nesting');
    // The socket is still open: another request on it is answered.
    expect(await connection.client.sessions.list.query()).toStrictEqual({ sessions: [], nextCursor: null });
  });
});

describe('runs of a closed connection', () => {
  it('count against the next connection that starts a run, until they end: reconnecting holds no more runs than one connection may', async () => {
    // One connection at a time: the second is let in only once the server has seen the first one close.
    await using running = await startTestServer({ steps: [hangingStep('a'), hangingStep('b'), textStep('c')], capacity: { runsPerConnection: 2, maxConnections: 1 } });
    const firstEvent = (client: ReturnType<typeof connectClient>['client'], n: number) => {
      const first = deferred<unknown>();
      client.chat.stream.subscribe({ sessionId: `s${n}`, runId: `r${n}`, message: 'go' }, { onData: (value) => first.resolve(value), onError: (error) => first.reject(error) });
      return first.promise;
    };
    {
      await using first = connectClient(running.server);
      for (const n of [1, 2]) await firstEvent(first.client, n);
    }
    expect([running.chat.isRunActive('r1'), running.chat.isRunActive('r2')]).toStrictEqual([true, true]);

    await using second = connectClient(running.server, { retryDelayMs: 20 });
    // Answered once the server has let this connection in, so after it saw the first one close.
    await vi.waitFor(() => second.client.sessions.list.query(), { timeout: 10_000 });
    const error = await firstEvent(second.client, 3).then(
      () => undefined,
      (cause: unknown) => cause,
    );
    expect(error instanceof TRPCClientError && `${String(error.data?.code)}: ${error.message}`).toBe(
      'TOO_MANY_REQUESTS: limit exceeded: at most 2 concurrent runs per connection (2 of them started on connections since closed, counted here until they end)',
    );
    expect(running.chat.isRunActive('r3')).toBe(false);

    await second.client.chat.cancel.mutate({ sessionId: 's1', runId: 'r1' });
    await vi.waitFor(() => expect(running.chat.isRunActive('r1')).toBe(false));
    expect(await firstEvent(second.client, 3)).toMatchObject({ data: { type: 'run-start', runId: 'r3' } });
  });
});

describe('the rates of a connection, carried over to the next one', () => {
  /** The first event of a new run, or why it was refused. */
  const startRun = (client: ReturnType<typeof connectClient>['client'], n: number) => {
    const first = deferred<unknown>();
    client.chat.stream.subscribe({ sessionId: `s${n}`, runId: `r${n}`, message: 'go' }, { onData: (value) => first.resolve(value), onError: (error) => first.reject(error) });
    return first.promise.then(
      (event) => event,
      (cause: unknown) => (cause instanceof TRPCClientError ? `${String(cause.data?.code)}: ${cause.message}` : cause),
    );
  };

  it('new runs: a connection opened after one closed takes over what it spent, and gets no fresh burst (found in review)', async () => {
    await using running = await startTestServer({ steps: [textStep('1'), textStep('2'), textStep('3'), textStep('4')], capacity: { runBurst: 2, runsPerMinute: 1 } });
    const refusal = /^TOO_MANY_REQUESTS: limit exceeded: at most 1 run per minute per connection, after a burst of 2; try again in \d+ s$/;
    // Open alongside the first: a budget of its own, as a backend's connections each have.
    await using alongside = connectClient(running.server);
    {
      await using first = connectClient(running.server);
      expect(await startRun(first.client, 1)).toMatchObject({ data: { type: 'run-start', runId: 'r1' } });
      expect(await startRun(first.client, 2)).toMatchObject({ data: { type: 'run-start', runId: 'r2' } });
      expect(await startRun(first.client, 3)).toMatch(refusal);
    }
    await using next = connectClient(running.server);
    expect(await startRun(next.client, 4)).toMatch(refusal);
    expect(await startRun(alongside.client, 5)).toMatchObject({ data: { type: 'run-start', runId: 'r5' } });
    expect([running.chat.isRunActive('r3'), running.chat.isRunActive('r4')]).toStrictEqual([false, false]);
    expect((await next.client.sessions.list.query()).sessions.map((session) => session.sessionId).sort()).toStrictEqual(['s1', 's2', 's5']);
  });

  it('changes every watch is told of: a new connection does not start its burst again (found in review)', async () => {
    await using running = await startTestServer({ steps: [textStep('hi')] });
    await using connection = connectClient(running.server);
    await runToEnd(connection.client, 's1', 'r1');
    expect(await changeTitles(running.server, 's1', Array.from({ length: 60 }, (_, i) => `title ${i}`))).toStrictEqual(Array.from({ length: 60 }, () => 'ok'));
    expect(await changeTitles(running.server, 's1', ['one more'])).toStrictEqual(['TOO_MANY_REQUESTS']);
    const refused = await connection.client.sessions.update.mutate({ sessionId: 's1', title: 'from the first' }).then(
      () => undefined,
      (cause: unknown) => cause,
    );
    // The connection open all along spent nothing of its own.
    expect(refused).toBeUndefined();
    expect((await connection.client.sessions.list.query()).sessions[0]?.title).toBe('from the first');
  });
});

describe('a message of many members', () => {
  const confirmFrame = (keys: number) => {
    const edited: Record<string, number> = {};
    for (let key = 0; key < keys; key++) edited[`k${key}`] = 0;
    const input = { sessionId: 's1', approvalId: 'a1', decision: 'allow', arguments: edited };
    return JSON.stringify({ id: 1, jsonrpc: '2.0', method: 'mutation', params: { path: 'chat.confirmTool', input } });
  };

  it('is refused before anything parses it, each request answered BAD_REQUEST under its id and the socket kept: a decision with 60,000 keys in its arguments', async () => {
    await using running = await startTestServer();
    await using raw = await authenticatedSocket(running.server);
    const frame = confirmFrame(60_000);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const answer = new Promise<unknown>((resolve) => raw.socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString('utf8')))));
      raw.socket.send(frame);
      expect(await answer).toStrictEqual({
        id: 1,
        error: {
          message: `more than ${MAX_MESSAGE_SEPARATORS} commas and colons in one message: nothing of it was applied`,
          code: -32600,
          data: { code: 'BAD_REQUEST', httpStatus: 400 },
        },
      });
      expect(parse.mock.calls.filter(([text]) => text.length === frame.length)).toStrictEqual([]);
    } finally {
      parse.mockRestore();
    }
    const next = new Promise<unknown>((resolve) => raw.socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString('utf8')))));
    raw.socket.send(JSON.stringify({ id: 2, method: 'query', params: { path: 'sessions.list', input: {} } }));
    expect(await next).toMatchObject({ id: 2, result: { type: 'data', data: { sessions: [] } } });
  });

  const manyNumbers = { arguments: { a: Array.from({ length: 40_000 }, () => 0) } };
  it.each([
    ['a request with no id', JSON.stringify({ method: 'mutation', params: { path: 'chat.confirmTool', input: manyNumbers } })],
    ['an id that is an object', JSON.stringify({ id: { n: 1 }, method: 'mutation', params: { path: 'chat.confirmTool', input: manyNumbers } })],
    ['a second value after the request', `${JSON.stringify({ id: 1, method: 'mutation', params: { path: 'chat.confirmTool', input: manyNumbers } })}{"id":2}`],
  ])('is closed with 1008 when the ids of its requests cannot be read without parsing it: %s', async (_, frame) => {
    await using running = await startTestServer();
    await using raw = await authenticatedSocket(running.server);
    raw.socket.send(frame);
    expect(await raw.closed).toStrictEqual({ code: 1008, reason: `more than ${MAX_MESSAGE_SEPARATORS} commas and colons in one message` });
  });

  it('answers each request of a batch over the bound with its own refusal, through the client', async () => {
    await using running = await startTestServer();
    await using connection = connectClient(running.server);
    const edited = { a: Array.from({ length: 20_000 }, () => 0) };
    const decide = () => connection.client.chat.confirmTool.mutate({ sessionId: 's1', approvalId: 'a1', decision: 'allow', arguments: edited }).catch((error: unknown) => error);
    const answers = await Promise.all([decide(), decide()]);
    for (const answer of answers) {
      expect(answer).toBeInstanceOf(TRPCClientError);
      expect((answer as TRPCClientError<AppRouter>).data?.code).toBe('BAD_REQUEST');
    }
    expect(await connection.client.sessions.list.query()).toStrictEqual({ sessions: [], nextCursor: null });
  });

  it('passes with an edit of a call\'s arguments of 1,000 keys: answered, the socket still open', async () => {
    await using running = await startTestServer();
    await using connection = connectClient(running.server);
    const edited: Record<string, number> = {};
    for (let key = 0; key < 1_000; key++) edited[`k${key}`] = 0;
    expect(await connection.client.chat.confirmTool.mutate({ sessionId: 's1', approvalId: 'a1', decision: 'allow', arguments: edited })).toStrictEqual({
      resolved: false,
      status: 'not-found',
    });
    expect(await connection.client.sessions.list.query()).toStrictEqual({ sessions: [], nextCursor: null });
  });

  it('passes with the most members an edit of a call\'s arguments may hold, 64 KiB of numbers: answered, the socket still open', async () => {
    // {"a":[0,0,…]} of 32,764 numbers is 65,535 bytes: the most items within MAX_EDITED_ARGUMENTS_BYTES.
    const edited = { a: Array.from({ length: 32_764 }, () => 0) };
    const input = { sessionId: 's1', approvalId: 'a1', decision: 'allow' as const, arguments: edited };
    expect(confirmInputSchema.safeParse(input).success).toBe(true);
    expect(confirmInputSchema.safeParse({ ...input, arguments: { a: [...edited.a, 0] } }).success).toBe(false);

    await using running = await startTestServer();
    await using connection = connectClient(running.server);
    expect(await connection.client.chat.confirmTool.mutate(input)).toStrictEqual({ resolved: false, status: 'not-found' });
    expect(await connection.client.sessions.list.query()).toStrictEqual({ sessions: [], nextCursor: null });
  });
});

describe('a subscription id already in use', () => {
  it('is refused without starting a run or taking a place, however often it is sent', async () => {
    await using running = await startTestServer({ steps: [hangingStep('first')], capacity: { subscriptionsPerConnection: 2 } });
    await using raw = await authenticatedSocket(running.server);
    const answers: WireMessage[] = [];
    const arrived = new Map<number, (message: WireMessage) => void>();
    raw.socket.on('message', (data: Buffer) => {
      const text = data.toString('utf8');
      if (text === 'PING') return;
      const message = JSON.parse(text) as WireMessage;
      answers.push(message);
      // The first data or error for an id settles its wait ("started" is not an answer to wait for).
      if (typeof message.id === 'number' && message.result?.type !== 'started') arrived.get(message.id)?.(message);
    });
    const answer = (id: number) => new Promise<WireMessage>((resolve) => arrived.set(id, resolve));
    const stream = (sessionId: string) => JSON.stringify({ id: 1, method: 'subscription', params: { path: 'chat.stream', input: { sessionId, runId: `${sessionId}-run`, message: 'go' } } });

    const first = answer(1);
    raw.socket.send(stream('kept'));
    expect((await first).result?.type).toBe('data');
    for (const sessionId of ['dup-1', 'dup-2', 'dup-3']) {
      const refused = answer(1);
      raw.socket.send(stream(sessionId));
      expect((await refused).error?.message).toBe('Duplicate id 1');
    }
    expect(answers.filter((message) => message.error).map((message) => message.error?.message)).toStrictEqual(['Duplicate id 1', 'Duplicate id 1', 'Duplicate id 1']);
    // No run for the refused ones, and the second of the two places is still free.
    const watched = answer(2);
    raw.socket.send(JSON.stringify({ id: 2, method: 'subscription', params: { path: 'sessions.watch' } }));
    expect((await watched).result).toMatchObject({ type: 'data' });
    await using other = connectClient(running.server);
    expect((await other.client.sessions.list.query()).sessions.map((session) => session.sessionId)).toStrictEqual(['kept']);
  });
});

describe('a request id over 128 characters', () => {
  it('is refused as a missing one is, answered under no id, and nothing of it starts or is kept: the socket goes on (found in review)', async () => {
    // An id is echoed in every answer and kept while its subscription lives: 1 MB ids on 32 watches per connection
    // held 32 MB per connection.
    await using running = await startTestServer();
    await using raw = await authenticatedSocket(running.server);
    const answers: WireMessage[] = [];
    raw.socket.on('message', (data: Buffer) => {
      const text = data.toString('utf8');
      if (text !== 'PING') answers.push(JSON.parse(text) as WireMessage);
    });
    raw.socket.send(JSON.stringify({ id: 'i'.repeat(129), method: 'subscription', params: { path: 'sessions.watch' } }));
    raw.socket.send(JSON.stringify({ id: 'k'.repeat(128), method: 'subscription', params: { path: 'sessions.watch' } }));
    await vi.waitFor(() => expect(answers.some((message) => message.id === 'k'.repeat(128) && message.result?.type === 'data')).toBe(true));
    expect(answers.filter((message) => message.error).map((message) => [message.id, message.error?.message])).toStrictEqual([[null, '`id` is longer than 128 characters']]);
    expect(answers.some((message) => typeof message.id === 'string' && message.id.startsWith('i'))).toBe(false);
  });
});

describe('a subscription stopped before the server said it started', () => {
  it('ends as it starts: no run, no place taken, and nothing more sent for its id', async () => {
    await using running = await startTestServer({ steps: [hangingStep('never')], capacity: { subscriptionsPerConnection: 1 } });
    await using raw = await authenticatedSocket(running.server);
    const answers: WireMessage[] = [];
    const watched = deferred<WireMessage>();
    const answered = deferred();
    raw.socket.on('message', (data: Buffer) => {
      const text = data.toString('utf8');
      if (text === 'PING') return;
      const message = JSON.parse(text) as WireMessage;
      answers.push(message);
      if (message.id === 2 && message.result?.type !== 'started') watched.resolve(message);
      if (message.id === 3) answered.resolve();
    });
    // In one message, so the stop is read while the subscription's procedure has yet to answer.
    raw.socket.send(
      JSON.stringify([
        { id: 1, method: 'subscription', params: { path: 'chat.stream', input: { sessionId: 'stopped', runId: 'stopped-run', message: 'go' } } },
        { id: 1, method: 'subscription.stop' },
      ]),
    );
    // A query answered after the stream's procedure has (before, the stream was reading and held the place by then).
    raw.socket.send(JSON.stringify({ id: 3, method: 'query', params: { path: 'model.info' } }));
    await answered.promise;
    // The one place is free: a watch sent now gets its first change, not TOO_MANY_REQUESTS.
    raw.socket.send(JSON.stringify({ id: 2, method: 'subscription', params: { path: 'sessions.watch' } }));
    expect((await watched.promise).result?.type).toBe('data');
    expect(answers.filter((message) => message.id === 1)).toStrictEqual([]);
    await using other = connectClient(running.server);
    expect(await other.client.sessions.list.query()).toStrictEqual({ sessions: [], nextCursor: null });
  });
});

describe('sockets without a token', () => {
  it('fill only their own places: clients with the token still connect, up to the cap, while 64 strangers keep trying', async () => {
    await using running = await startTestServer({ capacity: { maxConnections: 2, authGraceMs: 100 } });
    const strangers = Array.from({ length: 64 }, () => new WebSocket(`${running.server.wsUrl}?connectionParams=1`));
    let closedCount = 0;
    await Promise.all(
      strangers.map(
        (socket) =>
          new Promise<void>((resolve) => {
            socket.on('error', () => undefined);
            socket.once('open', () => resolve());
            socket.once('close', () => {
              closedCount++;
              resolve();
            });
          }),
      ),
    );
    try {
      // Refused while every stranger is in its grace, they try again, as the web app does, and take a stranger's place.
      await using first = connectClient(running.server, { retryDelayMs: 20 });
      await using second = connectClient(running.server, { retryDelayMs: 20 });
      // A query sent as a refused socket closes fails in the tRPC client ("Active connection is not open"); the web
      // app asks again, and so does this test: what matters is that each client gets in while the strangers try.
      for (const client of [first.client, second.client]) {
        await vi.waitFor(async () => expect(await client.model.info.query()).toStrictEqual(MODEL_INFO), { timeout: 10_000, interval: 50 });
      }
      await vi.waitFor(() => expect(closedCount).toBeGreaterThanOrEqual(64 - DEFAULT_CAPACITY.maxUnauthenticated), { timeout: 10_000 });
      // The strangers that gave way never counted against the cap on connections.
      expect(await upgradeStatus(running.server.wsUrl)).toBe(503);
    } finally {
      for (const socket of strangers) socket.terminate();
    }
  }, 30_000);

  it('are closed with 1009 on a message over 16 KiB, before anything reads it; with the token accepted, a large message right after it is read (found in review)', async () => {
    await using running = await startTestServer();
    await using stranger = await quietSocket(running.server);
    const reason = new Promise<string>((resolve) => stranger.socket.on('close', (_code, why: Buffer) => resolve(why.toString())));
    const frame = JSON.stringify({ method: 'connectionParams', data: { token: 'not the token', pad: '1,'.repeat(500_000) } });
    const parse = vi.spyOn(JSON, 'parse');
    try {
      stranger.socket.send(frame);
      expect([await stranger.closed, await reason]).toStrictEqual([{ code: 1009 }, '']);
      expect(parse.mock.calls.filter(([text]) => text.length === frame.length)).toStrictEqual([]);
    } finally {
      parse.mockRestore();
    }

    await using raw = await authenticatedSocket(running.server);
    const answer = new Promise<WireMessage>((resolve) => raw.socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString('utf8')) as WireMessage)));
    // Up to the limit of a socket whose token is accepted, 1 MiB.
    raw.socket.send(JSON.stringify({ id: 1, method: 'query', params: { path: 'sessions.list', input: { query: 'q'.repeat(1_000_000) } } }));
    expect((await answer).error?.data.code).toBe('BAD_REQUEST');
    expect(raw.socket.readyState).toBe(WebSocket.OPEN);
  });

  it('are closed with 1009 on a frame that says it is over 16 KiB, before its body is read: nothing of it is taken in (found in review)', async () => {
    await using running = await startTestServer();
    const { port } = running.server;
    await using tcp = await rawTcp(port);
    const bytes: Buffer[] = [];
    tcp.socket.on('data', (chunk: Buffer) => bytes.push(chunk));
    const upgraded = new Promise<void>((resolve) => tcp.socket.on('data', () => Buffer.concat(bytes).includes('\r\n\r\n') && resolve()));
    tcp.socket.write(
      `GET /trpc?connectionParams=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    await upgraded;
    // A masked text frame that says it holds 1 MiB, and none of it after: the server must not wait for the body.
    const header = Buffer.from([0x81, 0x80 | 127, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 2, 3, 4]);
    tcp.socket.write(header);
    await tcp.closed;
    const received = Buffer.concat(bytes);
    expect(received.subarray(0, 12).toString('latin1')).toBe('HTTP/1.1 101');
    const frame = received.subarray(received.indexOf('\r\n\r\n') + 4);
    // A close frame, and its code: 1009, a message too big; the auth timeout's would be 1008.
    expect([frame[0], frame.readUInt16BE(2)]).toStrictEqual([0x88, 1009]);
  });

  it('keep their place for the grace: a newcomer is refused with 503 rather than cut a socket whose token is on its way', async () => {
    await using running = await startTestServer({ capacity: { maxUnauthenticated: 2, authGraceMs: 60_000 } });
    await using first = await quietSocket(running.server);
    await using second = await quietSocket(running.server);

    expect(await upgradeStatus(running.server.wsUrl)).toBe(503);

    expect(await first.present()).toMatchObject({ result: { type: 'data' } });
    expect(await second.present()).toMatchObject({ result: { type: 'data' } });
  });

  it('give their place to a newcomer once their grace is over, the oldest first', async () => {
    await using running = await startTestServer({ capacity: { maxUnauthenticated: 2, authGraceMs: 0 } });
    await using first = await quietSocket(running.server);
    await using second = await quietSocket(running.server);

    expect(await upgradeStatus(running.server.wsUrl)).toBe(101);

    // With a code that tells its client nothing it sent reached a procedure: it sends it all again on a new connection.
    expect(await first.closed).toStrictEqual({ code: CLOSE_REPLACED_BEFORE_TOKEN });
    expect(await second.present()).toMatchObject({ result: { type: 'data' } });
  });

  it('refuses a token presented after the server is full with TOO_MANY_REQUESTS', async () => {
    await using running = await startTestServer({ capacity: { maxConnections: 1 } });
    const [first, second] = [0, 1].map(() => new WebSocket(`${running.server.wsUrl}?connectionParams=1`));
    const answers = [first!, second!].map(
      (socket) => new Promise<WireMessage>((resolve) => socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString('utf8')) as WireMessage))),
    );
    await Promise.all([first!, second!].map((socket) => new Promise<void>((resolve) => socket.once('open', () => resolve()))));
    try {
      first!.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));
      first!.send(JSON.stringify({ id: 1, method: 'query', params: { path: 'model.info' } }));
      expect((await answers[0])?.result).toMatchObject({ type: 'data' });

      second!.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));

      expect((await answers[1])?.error).toMatchObject({ data: { code: 'TOO_MANY_REQUESTS' }, message: 'the server holds its maximum of 1 connections' });
    } finally {
      first!.terminate();
      second!.terminate();
    }
  });
});

describe('plain HTTP sockets', () => {
  const PATIENT = { headersMs: 60_000, requestMs: 60_000, keepAliveMs: 60_000, idleMs: 60_000 };

  it('are at most the configured number at once: a newcomer takes the oldest one’s place, and a socket that upgrades leaves the count', async () => {
    await using running = await startTestServer({ capacity: { maxHttpConnections: 2 }, httpTimeouts: PATIENT });
    const { port } = running.server;
    await using upgraded = await quietSocket(running.server);
    expect(await upgraded.present()).toMatchObject({ result: { type: 'data' } });
    // Accepted in the order they connected: each is counted before the next one.
    await using oldest = await rawTcp(port);
    await using second = await rawTcp(port);
    for (const slow of [oldest, second]) slow.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);

    expect(await healthz(port)).toBe(200);

    expect(await oldest.closed).toBe(0);
    const answer = new Promise<string>((resolve) => second.socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))));
    second.socket.write('\r\n');
    expect(await answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(await upgraded.ask()).toMatchObject({ result: { type: 'data' } });
  }, 20_000);

  it('are closed when the request does not arrive in time, or nothing more comes, while WebSockets stay', async () => {
    await using running = await startTestServer({ httpTimeouts: { headersMs: 100, requestMs: 100, keepAliveMs: 100, idleMs: 100 } });
    const { port } = running.server;
    await using upgraded = connectClient(running.server);
    expect(await upgraded.client.model.info.query()).toStrictEqual(MODEL_INFO);
    await using slow = await rawTcp(port);
    await using silent = await rawTcp(port);
    await using answered = await rawTcp(port);

    slow.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    answered.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);

    await Promise.all([slow.closed, silent.closed, answered.closed]);
    // Older than every deadline by now, the WebSocket still answers.
    expect(await upgraded.client.model.info.query()).toStrictEqual(MODEL_INFO);
  }, 20_000);

  it('is closed once it stops reading an answer', async () => {
    await using dir = await tempDir('airlock-limits-');
    const size = 32 * 1024 * 1024;
    await mkdir(join(dir.path, 'web'));
    await writeFile(join(dir.path, 'web', 'big.bin'), '');
    // Sparse: larger than every buffer between the server and a client that reads nothing.
    await truncate(join(dir.path, 'web', 'big.bin'), size);
    await using running = await startTestServer({ httpTimeouts: { ...PATIENT, idleMs: 200 }, webRoot: join(dir.path, 'web') });
    const { port } = running.server;
    await using reader = await rawTcp(port, { paused: true });
    reader.socket.write(`GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);

    // The answer is cut short when the server gives up on the socket, which it logs.
    await vi.waitFor(() => expect(running.lines).toContainEqual(expect.stringMatching(/^Error serving GET request: /)), { timeout: 30_000, interval: 20 });

    reader.socket.resume();
    expect(await reader.closed).toBeLessThan(size);
  });

  it('is answered the requests it sends back to back one at a time: a client reading nothing has one file read for it, not one per request (found in review)', async () => {
    await using dir = await tempDir('airlock-limits-');
    const size = 1024 * 1024;
    // The one answered and every one that may wait.
    const requests = MAX_PIPELINED_REQUESTS + 1;
    const file = join(dir.path, 'web', 'big.bin');
    await mkdir(join(dir.path, 'web'));
    await writeFile(file, '');
    await truncate(file, size);
    await using running = await startTestServer({ httpTimeouts: PATIENT, webRoot: join(dir.path, 'web') });
    const { port } = running.server;
    await using reader = await rawTcp(port, { paused: true });
    reader.socket.write(`GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`.repeat(requests));
    await vi.waitFor(() => expect(openCopies(file)).toBeGreaterThan(0), { timeout: 10_000, interval: 10 });

    // As each part of an answer is read, the files the server holds open for the socket are counted: the one it sends, and the next.
    let received = 0;
    let most = 0;
    reader.socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      most = Math.max(most, openCopies(file));
    });
    reader.socket.resume();
    await vi.waitFor(() => expect(received).toBeGreaterThan(requests * size), { timeout: 20_000, interval: 20 });
    expect(most).toBeLessThanOrEqual(2);
  }, 30_000);

  it('is closed once more requests than the bound wait behind an answer it does not read; up to the bound, each is answered in order (found in review)', async () => {
    await using dir = await tempDir('airlock-limits-');
    const size = 32 * 1024 * 1024;
    await mkdir(join(dir.path, 'web'));
    await writeFile(join(dir.path, 'web', 'big.bin'), '');
    // Sparse: larger than every buffer between the server and a client that reads nothing, so the requests after it wait.
    await truncate(join(dir.path, 'web', 'big.bin'), size);
    await using running = await startTestServer({ httpTimeouts: PATIENT, webRoot: join(dir.path, 'web') });
    const { port } = running.server;
    const first = `GET /big.bin HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
    const next = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
    const last = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`;

    await using over = await rawTcp(port, { paused: true });
    over.socket.write(first + next.repeat(MAX_PIPELINED_REQUESTS) + last);
    over.socket.resume();
    expect(await over.closed).toBeLessThan(size);

    await using within = await rawTcp(port, { paused: true });
    const chunks: Buffer[] = [];
    within.socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    within.socket.write(first + next.repeat(MAX_PIPELINED_REQUESTS - 1) + last);
    within.socket.resume();
    await within.closed;
    const answers = Buffer.concat(chunks).toString('latin1').match(/HTTP\/1\.1 200 OK\r\n/g) ?? [];
    expect(answers).toHaveLength(MAX_PIPELINED_REQUESTS + 1);
    expect(await healthz(port)).toBe(200);
  }, 30_000);
});

/** How many descriptors this process holds open on `path`. */
function openCopies(path: string): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === path) count++;
    } catch {
      // Closed since it was listed.
    }
  }
  return count;
}

describe('capacity settings', () => {
  const load = async (argv: string[], env: Record<string, string> = {}) => {
    await using dir = await tempDir('airlock-limits-');
    return loadConfig(argv, env, dir.path);
  };

  it('default to 4096 connections, 16 without a token for 3 s (the oldest giving way to a newcomer), 128 plain HTTP sockets, 4 runs (30 a minute, 10 at once) and 32 subscriptions per connection, 64 model requests and 64 running tool calls', async () => {
    expect((await load([])).capacity).toStrictEqual({
      maxConnections: 4096,
      maxUnauthenticated: 16,
      authTimeoutMs: 3000,
      authGraceMs: 0,
      maxHttpConnections: 128,
      runsPerConnection: 4,
      runsPerMinute: 30,
      runBurst: 10,
      subscriptionsPerConnection: 32,
      maxModelRequests: 64,
      maxRunningCalls: 64,
      modelTimeoutMs: 600_000,
      modelIdleTimeoutMs: 300_000,
      modelTurnTimeoutMs: 7_200_000,
    });
  });

  it('are read from flags and the environment, flags first', async () => {
    const env = {
      AIRLOCK_MAX_CONNECTIONS: '100',
      AIRLOCK_MAX_UNAUTHENTICATED: '4',
      AIRLOCK_AUTH_TIMEOUT_MS: '500',
      AIRLOCK_AUTH_GRACE_MS: '0',
      AIRLOCK_MAX_HTTP_CONNECTIONS: '10',
      AIRLOCK_RUNS_PER_CONNECTION: '2',
      AIRLOCK_MAX_MODEL_REQUESTS: '9',
      AIRLOCK_MAX_RUNNING_CALLS: '7',
    };
    const argv = ['--max-connections', '200', '--max-http-connections', '32', '--runs-per-minute', '5', '--run-burst', '3', '--subscriptions-per-connection', '8', '--max-running-calls', '5'];

    expect((await load(argv, env)).capacity).toStrictEqual({
      maxConnections: 200,
      maxUnauthenticated: 4,
      authTimeoutMs: 500,
      authGraceMs: 0,
      maxHttpConnections: 32,
      runsPerConnection: 2,
      runsPerMinute: 5,
      runBurst: 3,
      subscriptionsPerConnection: 8,
      maxModelRequests: 9,
      maxRunningCalls: 5,
      modelTimeoutMs: 600_000,
      modelIdleTimeoutMs: 300_000,
      modelTurnTimeoutMs: 7_200_000,
    });
  });

  it('name a bad value', async () => {
    const problem = async (argv: string[], env: Record<string, string> = {}) => {
      const error = await load(argv, env).then(
        () => undefined,
        (cause: unknown) => cause,
      );
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).message;
    };
    expect(await problem(['--max-connections', '0'])).toBe('--max-connections: must be a whole number from 1 to 1000000');
    expect(await problem([], { AIRLOCK_AUTH_TIMEOUT_MS: '3s' })).toBe('AIRLOCK_AUTH_TIMEOUT_MS: must be a whole number from 100 to 60000');
    expect(await problem(['--subscriptions-per-connection=-1'])).toBe('--subscriptions-per-connection: must be a whole number from 1 to 10000');
    expect(await problem(['--max-http-connections', '0'])).toBe('--max-http-connections: must be a whole number from 1 to 100000');
    expect(await problem([], { AIRLOCK_MAX_RUNNING_CALLS: '0' })).toBe('AIRLOCK_MAX_RUNNING_CALLS: must be a whole number from 1 to 100000');
  });

  it('warn at start-up when the open-file limit is below what they allow', async () => {
    const limit = ownLimit('Max open files', 'soft');
    await using running = await startTestServer({ capacity: { maxConnections: 1_000_000 } });
    const warning = running.lines.find((line) => line.startsWith('Warning: this process may open'));
    expect(warning).toEqual(limit === undefined ? undefined : expect.stringContaining(`may open ${limit} files, fewer than the capacity settings allow: 1000336 sockets, 512 for running tool calls`));
  });
});
