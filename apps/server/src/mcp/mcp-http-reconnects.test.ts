import type { ToolContext } from '@airlock/core';
import { describe, expect, test, vi } from 'vitest';
import { httpMcpServer, sizedTool } from './fixtures/http-mcp-server';
import { manualClock } from './fixtures/manual-clock';
import { McpManager, type McpManagerOptions } from './mcp-manager';
import { MAX_EMPTY_STREAMS_IN_A_ROW, MIN_STREAM_REOPEN_DELAY_MS, STREAM_REOPEN_STORM } from './stream-reopen-fetch';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

function manager(url: string, options: Omit<McpManagerOptions, 'servers'>) {
  const instance = new McpManager({ servers: new Map([['remote', { transport: 'http', url, headers: {} }]]), ...options });
  return Object.assign(instance, { [Symbol.asyncDispose]: () => instance.close() });
}

function context(): ToolContext {
  return { signal: new AbortController().signal, timeoutMs: 20_000, sessionId: 'session-1' };
}

describe('a Streamable HTTP server whose event stream ends at once, asking for no delay (retry: 0)', () => {
  // Found in review: the SDK opened the stream again at once after each end, for ever: a storm of requests, the
  // server shown ready.
  test('is disconnected once its stream ended empty past the bound in a row, the server shown with the reason', async () => {
    let gets = 0;
    await using remote = await httpMcpServer({
      json: true,
      tools: sizedTool,
      route: (request, response) => {
        if (request.method !== 'GET') return false;
        gets += 1;
        response.writeHead(200, { 'content-type': 'text/event-stream' }).end('retry: 0\n\n');
        return true;
      },
    });
    const warnings: string[] = [];
    const clock = manualClock();
    await using mcp = manager(remote.url, { restart: { maxAttempts: 0 }, logger: { info: () => undefined, warn: (line) => warnings.push(line) }, clock });
    await mcp.start();
    // Each reopening waits for the floor, on a clock the test moves on once the next one waits.
    while (mcp.status()[0]?.state !== 'error') {
      await vi.waitFor(() => expect(clock.pending().length > 0 || mcp.status()[0]?.state === 'error').toBe(true), { timeout: 20_000 });
      clock.advance(MIN_STREAM_REOPEN_DELAY_MS);
    }
    const reason = STREAM_REOPEN_STORM;
    expect(reason).toBe(`the server ended its event stream ${MAX_EMPTY_STREAMS_IN_A_ROW} times in a row, each soon after it was opened, with nothing in it`);
    expect(mcp.status()).toStrictEqual([{ name: 'remote', transport: 'http', state: 'error', error: reason, toolCount: 0 }]);
    expect(warnings).toStrictEqual([`MCP server "remote": ${reason}`]);
    expect(gets).toBe(MAX_EMPTY_STREAMS_IN_A_ROW);
  });

  test('with an event in each, is opened again the floor after the first end, then twice as late after each, by its clock, and stays usable', async () => {
    const clock = manualClock();
    const gets: number[] = [];
    await using remote = await httpMcpServer({
      json: true,
      tools: sizedTool,
      route: (request, response) => {
        if (request.method !== 'GET') return false;
        gets.push(clock.now());
        response.writeHead(200, { 'content-type': 'text/event-stream' }).end(`id: e${gets.length}\nretry: 0\ndata: \n\n`);
        return true;
      },
    });
    await using mcp = manager(remote.url, { logger: { info: () => undefined, warn: () => undefined }, clock });
    await mcp.start();
    // The clock stands still while each stream is opened and ends at once: the next waits from then.
    const delays = [MIN_STREAM_REOPEN_DELAY_MS, 2_000, 4_000, 8_000];
    for (const [index, delay] of delays.entries()) {
      await vi.waitFor(() => expect(clock.pending()).toStrictEqual([clock.now() + delay]), { timeout: 20_000 });
      expect(gets).toHaveLength(index + 1);
      clock.advance(delay - 1);
      expect(clock.pending()).toHaveLength(1);
      clock.advance(1);
    }
    await vi.waitFor(() => expect(gets).toHaveLength(5), { timeout: 20_000 });
    expect(gets).toStrictEqual([0, 1_000, 3_000, 7_000, 15_000]);
    const sized = mcp.tools().find((tool) => tool.name === 'remote__sized');
    await expect(sized?.execute({ bytes: 2 }, context())).resolves.toStrictEqual({ content: 'xx' });
    expect(mcp.status()).toStrictEqual([{ name: 'remote', transport: 'http', state: 'ready', toolCount: 1 }]);
  });

  // Found in review: a stream that brought two events brought the delay back to the floor, so a server that put two
  // events in each stream (a priming event and a notification) had it reopened every second for as long as it ran.
  test('with two events in each, is opened again later each time all the same: only a stream that lasted brings the floor back', async () => {
    const clock = manualClock();
    const gets: number[] = [];
    const notification = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } });
    await using remote = await httpMcpServer({
      json: true,
      tools: sizedTool,
      route: (request, response) => {
        if (request.method !== 'GET') return false;
        gets.push(clock.now());
        response.writeHead(200, { 'content-type': 'text/event-stream' }).end(`id: e${gets.length}\nretry: 0\ndata: \n\nid: f${gets.length}\ndata: ${notification}\n\n`);
        return true;
      },
    });
    await using mcp = manager(remote.url, { logger: { info: () => undefined, warn: () => undefined }, clock });
    await mcp.start();
    for (const delay of [MIN_STREAM_REOPEN_DELAY_MS, 2_000, 4_000, 8_000]) {
      await vi.waitFor(() => expect(clock.pending()).toStrictEqual([clock.now() + delay]), { timeout: 20_000 });
      clock.advance(delay);
    }
    await vi.waitFor(() => expect(gets).toHaveLength(5), { timeout: 20_000 });
    expect(gets).toStrictEqual([0, 1_000, 3_000, 7_000, 15_000]);
    expect(mcp.status()).toStrictEqual([{ name: 'remote', transport: 'http', state: 'ready', toolCount: 1 }]);
  });
});

describe('a Streamable HTTP server that has the client poll: each stream ends after an event id', () => {
  // A server that sends one event a stream had it reopened every second for ever; while it is idle the delay grows,
  // but the answer to a call it has the client poll for must come as soon as before.
  test('is polled for a call’s answer the floor after each end while the call waits, however long the idle delay had grown', async () => {
    const clock = manualClock();
    const polls: number[] = [];
    let idle = 0;
    let callId: unknown;
    await using remote = await httpMcpServer({
      json: true,
      tools: sizedTool,
      route: (request, response, message) => {
        const stream = (text: string) => {
          response.writeHead(200, { 'content-type': 'text/event-stream' }).end(text);
          return true;
        };
        if (message?.method === 'tools/call') {
          callId = message.id;
          return stream('id: call-0\nretry: 0\ndata: \n\n');
        }
        if (request.method !== 'GET') return false;
        if (!String(request.headers['last-event-id']).startsWith('call-')) return stream(`id: idle-${(idle += 1)}\nretry: 0\ndata: \n\n`);
        polls.push(clock.now());
        if (polls.length < 3) return stream(`id: call-${polls.length}\nretry: 0\ndata: \n\n`);
        const answer = { jsonrpc: '2.0', id: callId, result: { content: [{ type: 'text', text: 'polled' }] } };
        return stream(`id: call-done\ndata: ${JSON.stringify(answer)}\n\n`);
      },
    });
    await using mcp = manager(remote.url, { logger: { info: () => undefined, warn: () => undefined }, clock });
    await mcp.start();
    for (let reopened = 0; reopened < 3; reopened++) {
      await vi.waitFor(() => expect(clock.pending()).toHaveLength(1), { timeout: 20_000 });
      clock.advance(clock.pending()[0]! - clock.now());
    }
    await vi.waitFor(() => expect(clock.pending()).toStrictEqual([clock.now() + 8_000]), { timeout: 20_000 });
    const idleEnded = clock.now();
    const sized = mcp.tools().find((tool) => tool.name === 'remote__sized');
    const answered = sized?.execute({ bytes: 2 }, context());
    for (let poll = 1; poll <= 3; poll++) {
      await vi.waitFor(() => expect(clock.pending()).toContain(clock.now() + MIN_STREAM_REOPEN_DELAY_MS), { timeout: 20_000 });
      clock.advance(MIN_STREAM_REOPEN_DELAY_MS);
      await vi.waitFor(() => expect(polls).toHaveLength(poll), { timeout: 20_000 });
    }
    await expect(answered).resolves.toStrictEqual({ content: 'polled' });
    expect(polls).toStrictEqual([1, 2, 3].map((poll) => idleEnded + poll * MIN_STREAM_REOPEN_DELAY_MS));
    expect(idle).toBe(4);
    expect(mcp.status()).toStrictEqual([{ name: 'remote', transport: 'http', state: 'ready', toolCount: 1 }]);
  });

  // Found in review: while a call waited, the floor was the delay of every stream, so a server that left a call
  // unanswered had its own stream reopened every second as well, for as long as the call waited (up to 10 minutes).
  test('keeps its own stream’s delay growing while a call it leaves unanswered is polled for at the floor', async () => {
    const clock = manualClock();
    const idle: number[] = [];
    const polls: number[] = [];
    await using remote = await httpMcpServer({
      json: true,
      tools: sizedTool,
      route: (request, response, message) => {
        const stream = (text: string) => {
          response.writeHead(200, { 'content-type': 'text/event-stream' }).end(text);
          return true;
        };
        if (message?.method === 'tools/call') return stream('id: call-0\nretry: 0\ndata: \n\n');
        if (request.method !== 'GET') return false;
        if (String(request.headers['last-event-id']).startsWith('call-')) {
          polls.push(clock.now());
          return stream(`id: call-${polls.length}\nretry: 0\ndata: \n\n`);
        }
        idle.push(clock.now());
        return stream(`id: idle-${idle.length}\nretry: 0\ndata: \n\n`);
      },
    });
    await using mcp = manager(remote.url, { logger: { info: () => undefined, warn: () => undefined }, clock });
    await mcp.start();
    await vi.waitFor(() => expect(idle).toHaveLength(1), { timeout: 20_000 });
    const sized = mcp.tools().find((tool) => tool.name === 'remote__sized');
    const controller = new AbortController();
    const answered = sized?.execute({ bytes: 2 }, { ...context(), signal: controller.signal }).catch(() => 'stopped');
    const started = clock.now();
    while (clock.now() - started < 60_000) {
      await vi.waitFor(() => expect(clock.pending().length).toBeGreaterThanOrEqual(2), { timeout: 20_000 });
      clock.advance(clock.pending()[0]! - clock.now());
    }
    controller.abort();
    await answered;
    // Polled for the call about once a second, while its own stream, reopened each second before, was reopened later each
    // time: the short streams of both count toward its delay.
    expect(polls.length).toBeGreaterThanOrEqual(55);
    expect(idle.length).toBeLessThanOrEqual(6);
    expect(idle.slice(2).every((at, index) => at - idle[index + 1]! >= 2 * MIN_STREAM_REOPEN_DELAY_MS)).toBe(true);
  });
});
