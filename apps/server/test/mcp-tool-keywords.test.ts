import { toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chatWithMcpServer, putUpOrEnded } from './support/mcp-chat';
import { ended } from './support/always-allow';

// A real stdio MCP server lists `tally`, whose input schema holds one keyword zod cannot express (a `not` on `label`)
// beside an integer `n` and `additionalProperties: false`, and `pick`, whose `oneOf` branches are told apart only by
// the `pattern`s Airlock leaves out. The one keyword must not leave the rest unchecked, and what Airlock leaves out
// must not make it refuse a call the schema accepts.

vi.setConfig({ testTimeout: 60_000 });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const chatWith = (step: ReturnType<typeof toolCallStep>) => chatWithMcpServer('docs', 'unions', step, cleanups);

describe('an MCP tool whose input schema holds a keyword Airlock does not check', () => {
  it.each([
    ['docs__tally', { n: 'oops', extra: 1 }],
    ['docs__tally', { n: 2, extra: 1 }],
    ['docs__tally', { label: 'x' }],
  ])('refuses before anyone is asked a call the rest of the schema refuses: %s %j', async (name, given) => {
    const chat = await chatWith(toolCallStep({ name, arguments: given }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await putUpOrEnded(chat, 's');
    expect(chat.pending('s')).toStrictEqual([]);
    const [call] = (await chat.getSession('s')).toolCalls;
    expect(call).toMatchObject({ outcome: 'error', arguments: given });
    expect(call!.result).toContain(`Error: invalid arguments for "${name}"`);
  });

  it.each([
    ['docs__tally', { n: 2, label: 'apples' }],
    ['docs__pick', { choice: 'apple' }],
    ['docs__pick', { choice: 'banana' }],
  ])('puts up and runs a call the schema accepts: %s %j', async (name, given) => {
    const chat = await chatWith(toolCallStep({ name, arguments: given }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await putUpOrEnded(chat, 's');
    const [waiting] = chat.pending('s');
    expect(waiting?.arguments).toStrictEqual(given);
    await chat.confirm({ sessionId: 's', approvalId: waiting!.approvalId, decision: 'allow' });
    await ended(chat, 's');
    const [call] = (await chat.getSession('s')).toolCalls;
    expect(call).toMatchObject({ decision: 'allow', outcome: 'executed' });
    expect(JSON.parse(call!.result!)).toStrictEqual({ received: given });
  });
});
