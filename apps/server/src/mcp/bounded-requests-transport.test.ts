import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { expect, test, vi } from 'vitest';
import { BoundedRequestsTransport, MAX_ANSWERS_IN_FLIGHT, MAX_QUEUED_ANSWERS } from './bounded-requests-transport';
import { hostileServer } from './fixtures/test-servers';
import { SupervisedStdioTransport } from './supervised-stdio-transport';

vi.setConfig({ testTimeout: 60_000 });

const isAnswer = (message: JSONRPCMessage) => 'id' in message && !('method' in message);

// Found from outside: 1,000,000 pings from a server that had stopped reading took Airlock to 3.9 GB.
test('a server that stopped reading its input has at most the bounds of answers held for it, and is cut off', async () => {
  const config = hostileServer('ping-flood', { FLOOD_COUNT: '100000', PING_NOREAD: '1' });
  const stdio = new SupervisedStdioTransport({ command: config.command, args: config.args, env: config.env });
  // What the server's own transport was handed, and what of it the server has not taken.
  let handed = 0;
  let untaken = 0;
  let mostUntaken = 0;
  const send = stdio.send.bind(stdio);
  stdio.send = (message) => {
    if (!isAnswer(message)) return send(message);
    handed += 1;
    untaken += 1;
    mostUntaken = Math.max(mostUntaken, untaken);
    return send(message).finally(() => {
      untaken -= 1;
    });
  };
  let overflowed: (reason: string) => void = () => undefined;
  const overflow = new Promise<string>((resolve) => (overflowed = resolve));
  const transport = new BoundedRequestsTransport(stdio, (reason) => overflowed(reason));
  const client = new Client({ name: 'test', version: '1' }, { capabilities: {} });
  try {
    await client.connect(transport);
    // The requests the SDK was given, each answered at once: its answer is handed on or queued.
    let requests = 0;
    const toSdk = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if ('method' in message && 'id' in message) requests += 1;
      toSdk?.(message, extra);
    };
    void client.callTool({ name: 'flood', arguments: {} }).catch(() => undefined);
    await expect(overflow).resolves.toMatch(/^the server sent requests faster than it read their answers/);
    expect(mostUntaken).toBeLessThanOrEqual(MAX_ANSWERS_IN_FLIGHT);
    // Not handed on when it was cut off: the queue, one past its bound, and what the SDK had not answered yet of the
    // chunk read last (at most 64 KiB read at once, each ping at least 40 characters); then let go of.
    expect(requests - handed).toBeGreaterThan(MAX_QUEUED_ANSWERS);
    expect(requests - handed).toBeLessThanOrEqual(MAX_QUEUED_ANSWERS + 1 + Math.ceil(65_536 / 40));
    expect(transport.queuedAnswers).toBe(0);
  } finally {
    await client.close();
  }
});

// Whatever the SDK throws as it handles a message must not leave the inner transport's handler: for a stdio server
// that is a data handler of its output, and the throw would end Airlock's process.
test('a handler of the messages received that throws has what it threw reported as an error, and the next message handed on', () => {
  const inner: Transport = { start: () => Promise.resolve(), send: () => Promise.resolve(), close: () => Promise.resolve() };
  const transport = new BoundedRequestsTransport(inner, () => undefined);
  const seen: string[] = [];
  transport.onmessage = (message) => {
    seen.push(JSON.stringify(message));
    if (seen.length === 1) throw new RangeError('Maximum call stack size exceeded');
  };
  transport.onerror = (error) => seen.push(`error: ${error.message}`);
  const first = { jsonrpc: '2.0' as const, id: 987654, result: {} };
  const second = { jsonrpc: '2.0' as const, method: 'notifications/message' };
  expect(() => inner.onmessage?.(first)).not.toThrow();
  inner.onmessage?.(second);
  expect(seen).toStrictEqual([JSON.stringify(first), 'error: Maximum call stack size exceeded', JSON.stringify(second)]);
});
