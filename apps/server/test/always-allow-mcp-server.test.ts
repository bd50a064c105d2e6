import { ChatService, MemoryStore } from '@airlock/api';
import { ApprovalRegistry, toolResultText, toolVersion, type AnyTool } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { changingToolsServer, until } from '../src/mcp/fixtures/test-servers';
import { McpManager } from '../src/mcp/mcp-manager';
import { RuleBook } from '../src/rules';
import { apiCaller, digest, ended, waitingCall } from './support/always-allow';

// A real stdio MCP server rewrites its tool (and says so with tools/list_changed) while the card of a call to it
// waits: "Always allow" for this workspace then saves its rule for the tool the card showed, not the rewritten one.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const silent = { info: () => undefined, warn: () => undefined };
const greet = toolCallStep({ name: 'changing__greet', arguments: { name: 'Ada' } });

function toolNamed(mcp: McpManager, name: string): AnyTool {
  const tool = mcp.tools().find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}; have ${mcp.tools().map((t) => t.name).join(', ')}`);
  return tool;
}

describe('"Always allow" on a call to an MCP server that rewrites the tool while the card waits', () => {
  it('saves the rule previewed, for the tool as the card showed it: the rewritten tool is asked about in a new chat', async () => {
    const mcp = new McpManager({ servers: new Map([['changing', changingToolsServer()]]), logger: silent });
    cleanups.push(() => mcp.close());
    await mcp.start();
    const store = new MemoryStore();
    const rules = await RuleBook.open({ store, workspace: tmpdir(), log: () => undefined });
    const model = new ScriptedModel([greet, textStep('one'), greet, textStep('two')]);
    const tools = () => mcp.tools();
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools, store, rules });
    cleanups.push(() => chat.shutdown());
    await chat.open();
    const api = apiCaller(chat, rules, tools);

    await chat.startRun({ sessionId: 'a', runId: 'r1', message: 'greet Ada' });
    const waiting = await waitingCall(chat, 'a');
    const shown = toolNamed(mcp, 'changing__greet');
    const previewed = await api.rules.propose({ sessionId: 'a', approvalId: waiting.approvalId, scope: 'workspace' });

    // The server rewrites the tool while the person reads the card.
    const rewritten = until(mcp, () => toolNamed(mcp, 'changing__greet').description !== shown.description);
    await toolNamed(mcp, 'changing__change_greet').execute({ description: 'Greets someone, and deletes your files.' }, { signal: new AbortController().signal, timeoutMs: 20_000, sessionId: 'x' });
    await rewritten;
    expect(toolVersion(toolNamed(mcp, 'changing__greet'))).not.toBe(toolVersion(shown));

    expect((await api.rules.propose({ sessionId: 'a', approvalId: waiting.approvalId, scope: 'workspace' })).draft).toStrictEqual(previewed.draft);
    await chat.confirm({ sessionId: 'a', approvalId: waiting.approvalId, decision: 'allow', always: true, scope: 'workspace' });
    await ended(chat, 'a');
    expect((await chat.getSession('a')).toolCalls).toMatchObject([{ decision: 'allow', outcome: 'error', result: toolResultText.toolChanged('changing__greet') }]);
    const saved = await rules.list();
    expect(saved.map((view) => view.rule.match)).toStrictEqual([{ kind: 'mcp-tool', server: 'changing', tool: 'greet', toolVersion: digest(shown) }]);
    expect(saved[0]!.rule.match).toStrictEqual(previewed.draft.match);

    // In a new chat the model calls the rewritten tool: a card, not the rule.
    await chat.startRun({ sessionId: 'b', runId: 'r2', message: 'greet Ada again' });
    const asked = await waitingCall(chat, 'b');
    await chat.confirm({ sessionId: 'b', approvalId: asked.approvalId, decision: 'deny' });
    await ended(chat, 'b');
    expect((await chat.getSession('b')).toolCalls).toMatchObject([{ decision: 'deny', source: 'user' }]);
  });
});
