import { ChatService, MemoryStore } from '@airlock/api';
import { ApprovalRegistry, toolResultText, toolVersion, type AnyTool } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { swappingNamesServer, until } from '../src/mcp/fixtures/test-servers';
import { McpManager } from '../src/mcp/mcp-manager';
import { ended, waitingCall } from './support/always-allow';
import { putUpOrEnded } from './support/mcp-chat';

// A real stdio MCP server lists `a.b` and `a_b_2e7336dc`, both offered as `swap__a_b_2e7336dc` (the first listed keeps
// the name), with the same description, schema and hints; then it lists them the other way round.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const NAME = 'swap__a_b_2e7336dc';
const call = toolCallStep({ name: NAME, arguments: { note: 'n' } });

function toolNamed(mcp: McpManager, name: string): AnyTool {
  const tool = mcp.tools().find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}; have ${mcp.tools().map((t) => t.name).join(', ')}`);
  return tool;
}

async function chatWith(steps: ConstructorParameters<typeof ScriptedModel>[0]) {
  const mcp = new McpManager({ servers: new Map([['swap', swappingNamesServer()]]), logger: { info: () => undefined, warn: () => undefined } });
  cleanups.push(() => mcp.close());
  await mcp.start();
  const model = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => mcp.tools(), store: new MemoryStore() });
  cleanups.push(() => chat.shutdown());
  await chat.open();
  return { mcp, chat };
}

/** Has the server list its tools the other way round, and resolves once the name means `a_b_2e7336dc`. */
async function swapNames(mcp: McpManager): Promise<void> {
  const swapped = until(mcp, () => toolNamed(mcp, NAME).remoteName === 'a_b_2e7336dc');
  await toolNamed(mcp, 'swap__swap_names').execute({}, { signal: new AbortController().signal, timeoutMs: 20_000, sessionId: 'x' });
  await swapped;
}

describe('two tools of one MCP server offered under one name, swapped by a tool-list change', () => {
  it('an allow given before the swap is refused, as for any other change of the tool', async () => {
    const { mcp, chat } = await chatWith([call, textStep('done')]);
    expect(toolNamed(mcp, NAME).remoteName).toBe('a.b');
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const waiting = await waitingCall(chat, 's');
    const shown = toolNamed(mcp, NAME);

    await swapNames(mcp);
    await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow' });
    await ended(chat, 's');
    expect((await chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'allow', outcome: 'error', result: toolResultText.toolChanged(NAME) }]);
    expect(toolVersion(toolNamed(mcp, NAME))).not.toBe(toolVersion(shown));
  });

  it('a chat\'s "Always allow" given for one tool does not run the other under its name unasked', async () => {
    const { mcp, chat } = await chatWith([call, textStep('one'), call, textStep('two')]);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const first = await waitingCall(chat, 's');
    await chat.confirm({ sessionId: 's', approvalId: first.approvalId, decision: 'allow', always: true });
    await ended(chat, 's');
    expect((await chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'allow', outcome: 'executed', result: 'a.b read n' }]);

    await swapNames(mcp);
    await chat.startRun({ sessionId: 's', runId: 'r2', message: 'read again' });
    await putUpOrEnded(chat, 's');
    const [asked] = chat.pending('s');
    expect(asked, (await chat.getSession('s')).toolCalls.map((c) => c.result).join(', ')).toBeDefined();
    await chat.confirm({ sessionId: 's', approvalId: asked!.approvalId, decision: 'deny' });
    await ended(chat, 's');
    const calls = (await chat.getSession('s')).toolCalls;
    expect(calls).toHaveLength(2);
    expect(calls[1]).toMatchObject({ decision: 'deny', source: 'user' });
  });
});
