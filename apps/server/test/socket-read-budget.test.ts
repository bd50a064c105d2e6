import { ChatService, type ModelInfo } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel } from '@airlock/core/testing';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { DEFAULT_READ_BUDGET } from '../src/http/socket-read-budget';
import { manualClock } from '../src/mcp/fixtures/manual-clock';
import { startServer, type StartServerOptions } from '../src/start-server';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
const MODEL_INFO: ModelInfo = { provider: 'demo', baseURL: null, model: 'demo', demo: true };

async function startTestServer(options: Pick<StartServerOptions, 'readBudget' | 'readBudgetClock'> = {}) {
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [] });
  const lines: string[] = [];
  const server = await startServer({
    config: { host: '127.0.0.1', port: 0, token: TOKEN, allowedOrigins: [], capacity: {} },
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => MODEL_INFO },
    webRoot: join(tmpdir(), 'airlock-no-such-web-root'),
    log: (line) => lines.push(line),
    ...options,
  });
  return { server, lines, [Symbol.asyncDispose]: () => server.close() };
}

/** A raw socket that has presented the token, and the ids of the answers it has been sent, in order. */
async function authenticatedSocket(url: string) {
  const socket = new WebSocket(`${url}?connectionParams=1`);
  const answered: unknown[] = [];
  let closed = false;
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString()) as { id?: unknown };
    if (message.id !== undefined) answered.push(message.id);
  });
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));
  return { socket, answered, closed: () => closed, [Symbol.asyncDispose]: async () => socket.terminate() };
}

const MESSAGE_BYTES = 1_000_000;

/** A query of exactly MESSAGE_BYTES, its input a search over its bound: answered BAD_REQUEST under its id. */
function bigQuery(id: number): string {
  const frame = (query: string) => JSON.stringify({ id, method: 'query', params: { path: 'sessions.list', input: { query } } });
  return frame('x'.repeat(MESSAGE_BYTES - frame('').length));
}

describe('a socket sending more than its byte budget', () => {
  it('is not read further once it has spent it, so another socket is answered meanwhile; it is kept, and read again as its budget refills', async () => {
    // 4 MB back to back, then 1 MB every 4 s: the fifth message owes 1 MB, and the socket is not read until it is paid.
    const clock = manualClock();
    await using started = await startTestServer({ readBudget: { burstBytes: 4 * MESSAGE_BYTES, bytesPerSecond: MESSAGE_BYTES / 4 }, readBudgetClock: clock });
    await using flood = await authenticatedSocket(started.server.wsUrl);
    await using other = await authenticatedSocket(started.server.wsUrl);
    expect(bigQuery(1).length).toBe(MESSAGE_BYTES);
    for (let id = 1; id <= 12; id++) flood.socket.send(bigQuery(id));
    // The token's message and four spend the burst and a few bytes past it; a millisecond pays them, and the fifth is read.
    await vi.waitFor(() => expect(flood.answered).toStrictEqual([1, 2, 3, 4]), { timeout: 10_000 });
    clock.advance(1);
    await vi.waitFor(() => expect(flood.answered).toHaveLength(5), { timeout: 10_000 });

    // Sent once the flood has spent its budget, with 7 MB of it still coming: answered, and none more of it read, the
    // budget's clock standing still however long that took.
    other.socket.send(JSON.stringify({ id: 'mine', method: 'query', params: { path: 'sessions.list' } }));
    await vi.waitFor(() => expect(other.answered).toStrictEqual(['mine']), { timeout: 10_000 });
    expect(flood.answered).toStrictEqual([1, 2, 3, 4, 5]);

    // Paused, not closed: read again as its budget refills, in order, a message for each 4 s of the clock.
    clock.advance(4_000);
    await vi.waitFor(() => expect(flood.answered).toStrictEqual([1, 2, 3, 4, 5, 6]), { timeout: 10_000 });
    other.socket.send(JSON.stringify({ id: 'again', method: 'query', params: { path: 'sessions.list' } }));
    await vi.waitFor(() => expect(other.answered).toStrictEqual(['mine', 'again']), { timeout: 10_000 });
    expect(flood.answered).toStrictEqual([1, 2, 3, 4, 5, 6]);
    expect(flood.closed()).toBe(false);
  });
});

describe('a socket sending empty messages back to back', () => {
  it('spends its budget on them too: it is not read further once spent, other sockets are answered, and it is read again as the budget refills (found in review)', async () => {
    // The server's own burst and cost of a message; a slower refill (100 empty messages a second) than the server's.
    // Before, an empty message cost nothing, and such a flood delayed others' queries by seconds.
    const budget = { ...DEFAULT_READ_BUDGET, bytesPerSecond: 100 * DEFAULT_READ_BUDGET.messageBytes! };
    const clock = manualClock();
    await using started = await startTestServer({ readBudget: budget, readBudgetClock: clock });
    await using flood = await authenticatedSocket(started.server.wsUrl);
    await using other = await authenticatedSocket(started.server.wsUrl);
    let refusals = 0;
    flood.socket.on('message', (data: Buffer) => {
      if ((JSON.parse(data.toString()) as { id?: unknown }).id === null) refusals++;
    });
    const sent = 20_000;
    for (let count = 0; count < sent; count++) flood.socket.send('');
    // Each is a parse error answered under no id; 8,192 of them spend the burst, and the one after overspends it.
    const burst = budget.burstBytes / budget.messageBytes!;
    await vi.waitFor(() => expect(refusals).toBeGreaterThanOrEqual(burst - 2), { timeout: 10_000 });
    other.socket.send(JSON.stringify({ id: 'mine', method: 'query', params: { path: 'model.info' } }));
    await vi.waitFor(() => expect(other.answered).toStrictEqual(['mine']), { timeout: 10_000 });
    // At most what the burst pays for (the token's message besides), the budget's clock standing still.
    const seen = refusals;
    expect(seen).toBeLessThanOrEqual(burst + 1);
    // Kept, and read again as the budget refills: a second of the clock pays for 100 more.
    clock.advance(1_000);
    await vi.waitFor(() => expect(refusals).toBeGreaterThanOrEqual(seen + 99), { timeout: 10_000 });
    other.socket.send(JSON.stringify({ id: 'again', method: 'query', params: { path: 'model.info' } }));
    await vi.waitFor(() => expect(other.answered).toStrictEqual(['mine', 'again']), { timeout: 10_000 });
    expect(refusals).toBeLessThanOrEqual(seen + 101);
    expect(flood.closed()).toBe(false);
  }, 30_000);
});
