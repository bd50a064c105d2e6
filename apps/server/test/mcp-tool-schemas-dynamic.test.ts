import { toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hostileServer } from '../src/mcp/fixtures/test-servers';
import { McpManager } from '../src/mcp/mcp-manager';
import { ended } from './support/always-allow';
import { chatWithMcpServer, putUpOrEnded } from './support/mcp-chat';

// A real stdio MCP server lists tools whose input schemas refer to a part by where a check came from: 2020-12's
// `$dynamicRef` to a `$dynamicAnchor` and 2019-09's `$recursiveRef`. Airlock must follow one where the part it names is
// the same whichever way a check came, and must not offer a tool whose schema it cannot follow so: never leave one unchecked.

vi.setConfig({ testTimeout: 60_000 });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const chatWith = (step: ReturnType<typeof toolCallStep>) => chatWithMcpServer('docs', 'dynamic', step, cleanups);

type Call = [name: string, given: Record<string, unknown>];

describe('an MCP tool whose input schema has a $dynamicRef or a $recursiveRef', () => {
  it.each<Call>(
    ['outline', 'nested'].flatMap((tool): Call[] => [
      [`docs__${tool}`, { name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] }],
      [`docs__${tool}`, { name: 'a', children: [] }],
    ]),
  )('puts up, exactly as given, and runs a call the schema accepts: %s %j', async (name, given) => {
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

  it.each<Call>(
    ['outline', 'nested'].flatMap((tool): Call[] => [
      [`docs__${tool}`, { name: 'a', children: [{ name: 'b', children: [{ name: 3 }] }] }],
      [`docs__${tool}`, { name: 'a', children: [{ children: [] }] }],
    ]),
  )('refuses before anyone is asked a call the schema refuses: %s %j', async (name, given) => {
    const chat = await chatWith(toolCallStep({ name, arguments: given }));
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await putUpOrEnded(chat, 's');
    expect(chat.pending('s')).toStrictEqual([]);
    const [call] = (await chat.getSession('s')).toolCalls;
    expect(call).toMatchObject({ outcome: 'error', arguments: given });
    expect(call!.result).toContain(`Error: invalid arguments for "${name}"`);
  });

  it('does not offer a tool whose dynamic reference names a part two of its documents declare, and says so in the log', async () => {
    const warnings: string[] = [];
    const mcp = new McpManager({ servers: new Map([['docs', hostileServer('dynamic')]]), logger: { info: () => undefined, warn: (line) => warnings.push(line) } });
    cleanups.push(() => mcp.close());
    await mcp.start();
    expect(mcp.tools().map((tool) => tool.name).sort()).toStrictEqual(['docs__nested', 'docs__outline']);
    expect(warnings).toContain(
      'MCP server "docs": left out extended (its input schema has a $dynamicRef Airlock cannot follow), doubly (its input schema has a $recursiveRef Airlock cannot follow)',
    );
  });
});
