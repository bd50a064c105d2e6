import { toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { chatWithMcpServer, putUpOrEnded } from './support/mcp-chat';
import { ended } from './support/always-allow';

// A real stdio MCP server lists tools whose input schema is a union of branches told apart by `kind`, each branch with
// `properties`, `required` and a `const` but no `type` of its own, as generated schemas (pydantic's discriminated
// unions, TypeScript-to-schema tools) write them. JSON Schema applies each branch to the object: the check before a
// call is put up, and again before it runs, must do the same.

vi.setConfig({ testTimeout: 60_000 });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const chatWith = (step: ReturnType<typeof toolCallStep>) => chatWithMcpServer('docs', 'unions', step, cleanups);

describe.each(['open', 'send'])('an MCP tool whose input schema is a union of untyped branches (%s)', (tool) => {
  it.each([{ kind: 'file', path: 'notes.txt' }, { kind: 'url', url: 'https://example.test/' }])('puts up and runs a call that fits one branch: %j', async (given) => {
    const chat = await chatWith(toolCallStep({ name: `docs__${tool}`, arguments: given }));
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

  it.each([{ kind: 'file' }, { kind: 'url', path: 'notes.txt' }, { kind: 'ftp', path: 'notes.txt', url: 'ftp://x' }])(
    'refuses before anyone is asked a call no branch accepts: %j',
    async (given) => {
      const chat = await chatWith(toolCallStep({ name: `docs__${tool}`, arguments: given }));
      await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
      await putUpOrEnded(chat, 's');
      expect(chat.pending('s')).toStrictEqual([]);
      const [call] = (await chat.getSession('s')).toolCalls;
      expect(call).toMatchObject({ outcome: 'error', arguments: given });
      expect(call!.result).toContain(`Error: invalid arguments for "docs__${tool}"`);
    },
  );
});
