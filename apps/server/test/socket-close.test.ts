import { ChatService, type ModelInfo } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel } from '@airlock/core/testing';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import type { Capacity } from '../src/config';
import { CLOSE_ANSWER_MS } from '../src/http/close-answer-grace';
import { manualClock } from '../src/mcp/fixtures/manual-clock';
import { startServer, type StartServerOptions } from '../src/start-server';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
const MODEL_INFO: ModelInfo = { provider: 'demo', baseURL: null, model: 'demo', demo: true };
const WRONG_TOKEN = JSON.stringify({ method: 'connectionParams', data: { token: 'not-the-token-not-the-token-not-the-token' } });

async function startTestServer(options: { capacity?: Partial<Capacity> } & Pick<StartServerOptions, 'clock'> = {}) {
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [] });
  const server = await startServer({
    config: { host: '127.0.0.1', port: 0, token: TOKEN, allowedOrigins: [], capacity: options.capacity ?? {} },
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => MODEL_INFO },
    webRoot: join(tmpdir(), 'airlock-no-such-web-root'),
    log: () => undefined,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  return { server, [Symbol.asyncDispose]: () => server.close() };
}

/** A `ws` client that records what the server sends and how it closes the socket. */
async function wsClient(url: string) {
  const socket = new WebSocket(url);
  const messages: unknown[] = [];
  socket.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString('utf8'))));
  socket.on('error', () => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return { socket, messages, closed, [Symbol.asyncDispose]: async () => socket.terminate() };
}

/** A frame the server sent: its opcode and its payload. */
interface Frame {
  opcode: number;
  payload: Buffer;
}

/**
 * A WebSocket spoken by hand over TCP that never answers a close frame (nor anything else): `send` sends a text frame,
 * `upgraded` resolves once its upgrade is answered, `frames` holds what the server sent after, `closed` resolves when
 * the server lets go of the TCP socket.
 */
async function silentPeer(port: number) {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  let received = Buffer.alloc(0);
  let upgraded = false;
  let answered = () => {};
  const upgradeAnswered = new Promise<void>((resolve) => (answered = resolve));
  const frames: Frame[] = [];
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    if (!upgraded) {
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) return;
      expect(received.subarray(0, 12).toString('latin1')).toBe('HTTP/1.1 101');
      upgraded = true;
      answered();
      received = received.subarray(end + 4);
    }
    // Server frames are unmasked; these are all under 64 KiB.
    for (;;) {
      if (received.length < 2) break;
      const short = received[1]! & 0x7f;
      const header = short === 126 ? 4 : 2;
      if (received.length < header) break;
      const length = short === 126 ? received.readUInt16BE(2) : short;
      if (received.length < header + length) break;
      frames.push({ opcode: received[0]! & 0x0f, payload: received.subarray(header, header + length) });
      received = received.subarray(header + length);
    }
  });
  socket.write(
    `GET /trpc?connectionParams=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  const send = (text: string) => {
    const payload = Buffer.from(text);
    expect(payload.length).toBeLessThan(126);
    // FIN and text; masked, with a mask of zeros.
    socket.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length, 0, 0, 0, 0]), payload]));
  };
  return { socket, frames, send, closed, upgraded: upgradeAnswered, [Symbol.asyncDispose]: async () => void socket.destroy() };
}

const CLOSE = 0x8;

describe('a socket the server closes', () => {
  it('is cut once it has not answered the close within its grace, counted on the server clock, not kept for 30 s', async () => {
    const clock = manualClock();
    await using running = await startTestServer({ clock });
    await using peer = await silentPeer(running.server.port);

    peer.send(WRONG_TOKEN);
    await vi.waitFor(() => expect(peer.frames.map((frame) => frame.opcode)).toContain(CLOSE), { timeout: 10_000 });

    // The server waits for the close frame it will never get, for as long as its grace and no longer.
    expect(clock.pending()).toStrictEqual([CLOSE_ANSWER_MS]);
    clock.advance(CLOSE_ANSWER_MS - 1);
    expect(clock.pending()).toStrictEqual([CLOSE_ANSWER_MS]);
    clock.advance(1);
    await peer.closed;
    expect(clock.pending()).toStrictEqual([]);
  });

  it('is cut at the same grace when it gave its place to a newcomer before presenting its token (4001)', async () => {
    const clock = manualClock();
    await using running = await startTestServer({ clock, capacity: { maxUnauthenticated: 1, authGraceMs: 0 } });
    await using peer = await silentPeer(running.server.port);
    await peer.upgraded;
    await using newcomer = await wsClient(`${running.server.wsUrl}?connectionParams=1`);

    await vi.waitFor(() => expect(peer.frames.map((frame) => frame.opcode)).toStrictEqual([CLOSE]), { timeout: 10_000 });
    expect(peer.frames[0]!.payload.readUInt16BE(0)).toBe(4001);
    expect(clock.pending()).toStrictEqual([CLOSE_ANSWER_MS]);
    clock.advance(CLOSE_ANSWER_MS);
    await peer.closed;
    expect(newcomer.socket.readyState).toBe(WebSocket.OPEN);
  });

  it('leaves no timer behind for a peer that answers its close', async () => {
    const clock = manualClock();
    await using running = await startTestServer({ clock });
    await using client = await wsClient(`${running.server.wsUrl}?connectionParams=1`);

    client.socket.send(WRONG_TOKEN);

    expect((await client.closed).code).toBe(1008);
    await vi.waitFor(() => expect(clock.pending()).toStrictEqual([]), { timeout: 10_000 });
  });
});

describe('a socket refused before its token was accepted', () => {
  it('is closed with 1008 and a reason after tRPC’s refusal, for a wrong token', async () => {
    await using running = await startTestServer();
    await using client = await wsClient(`${running.server.wsUrl}?connectionParams=1`);

    client.socket.send(WRONG_TOKEN);

    expect(await client.closed).toStrictEqual({ code: 1008, reason: 'no valid token presented' });
    expect(client.messages).toMatchObject([{ id: null, error: { message: 'a valid access token is required', data: { code: 'UNAUTHORIZED' } } }]);
  });

  it('is closed with 1008 and a reason when its first message is no connection parameters', async () => {
    await using running = await startTestServer();
    for (const first of ['not json', JSON.stringify({ id: 1, method: 'query', params: { path: 'model.info' } })]) {
      await using client = await wsClient(`${running.server.wsUrl}?connectionParams=1`);
      client.socket.send(first);
      expect(await client.closed).toStrictEqual({ code: 1008, reason: 'the first message was not connection parameters' });
    }
  });

  it('is closed with 1008 when it connects without connection parameters, where none can carry the token', async () => {
    await using running = await startTestServer();
    await using client = await wsClient(running.server.wsUrl);
    expect(await client.closed).toStrictEqual({ code: 1008, reason: 'no valid token presented' });
  });

  it('is closed with 1013, try again later, when the server holds its most connections by the time its token comes', async () => {
    await using running = await startTestServer({ capacity: { maxConnections: 1 } });
    await using first = await wsClient(`${running.server.wsUrl}?connectionParams=1`);
    await using second = await wsClient(`${running.server.wsUrl}?connectionParams=1`);
    first.socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));
    first.socket.send(JSON.stringify({ id: 1, method: 'query', params: { path: 'model.info' } }));
    await vi.waitFor(() => expect(first.messages).toStrictEqual([{ id: 1, result: { type: 'data', data: MODEL_INFO } }]), { timeout: 10_000 });

    second.socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));

    expect(await second.closed).toStrictEqual({ code: 1013, reason: 'not accepted now: try again later' });
    expect(second.messages).toMatchObject([{ id: null, error: { data: { code: 'TOO_MANY_REQUESTS' } } }]);
  });
});
