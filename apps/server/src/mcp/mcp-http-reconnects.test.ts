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

  test('with an event in each, is opened again no sooner than the floor after each end, by its clock, and stays usable', async () => {
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
    // The clock stands still while each stream is opened and ends at once: the next waits for the floor from then.
    for (let opened = 1; opened <= 4; opened++) {
      await vi.waitFor(() => expect(clock.pending()).toStrictEqual([clock.now() + MIN_STREAM_REOPEN_DELAY_MS]), { timeout: 20_000 });
      expect(gets).toHaveLength(opened);
      clock.advance(MIN_STREAM_REOPEN_DELAY_MS - 1);
      expect(clock.pending()).toHaveLength(1);
      clock.advance(1);
    }
    await vi.waitFor(() => expect(gets).toHaveLength(5), { timeout: 20_000 });
    expect(gets).toStrictEqual([0, 1, 2, 3, 4].map((index) => index * MIN_STREAM_REOPEN_DELAY_MS));
    const sized = mcp.tools().find((tool) => tool.name === 'remote__sized');
    await expect(sized?.execute({ bytes: 2 }, context())).resolves.toStrictEqual({ content: 'xx' });
    expect(mcp.status()).toStrictEqual([{ name: 'remote', transport: 'http', state: 'ready', toolCount: 1 }]);
  });
});
