import { ApprovalRegistry, toolVersion, type AnyTool } from '@airlock/core';
import { mcpReadTool, ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChatService } from './chat-service';
import { ConnectionState, type RuleService, type RuleView } from './context';
import { appRouter, createCallerFactory } from './router';
import type { RuleDraft } from './rules/rule';

// "Always allow" beyond the chat drafts its lasting rule (and its preview) from the tool as the card showed it, never
// from the catalog's tool of that name when the click lands: an MCP server may rewrite or drop it meanwhile.

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((chat) => chat.shutdown()));
});

const read = toolCallStep({ name: 'files__read', arguments: { path: 'a' } });

/** Rules that save what they are given and answer nothing: the tools `propose` was handed are kept in order. */
function recordingRules() {
  const proposedFor: (AnyTool | undefined)[] = [];
  const added: RuleDraft[] = [];
  const rules = {
    evaluate: () => Promise.resolve(undefined),
    propose: (_sessionId: string, call: { toolName: string; arguments: Record<string, unknown> }, _scope: string, tool?: AnyTool) => {
      proposedFor.push(tool);
      const draft: RuleDraft = { effect: 'allow', tool: call.toolName, match: { kind: 'exact-arguments', arguments: call.arguments }, scope: { kind: 'global' }, source: 'user' };
      return Promise.resolve({ draft, description: [{ text: `for ${tool === undefined ? 'no tool' : tool.description}` }] });
    },
    add: (draft: RuleDraft) => {
      added.push(draft);
      return Promise.resolve({} as RuleView);
    },
  } as Partial<RuleService> as RuleService;
  return { rules, proposedFor, added };
}

function setup(tools: () => readonly AnyTool[], steps = [read, textStep('one'), read, textStep('two')]) {
  const { rules, proposedFor, added } = recordingRules();
  const model = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools, rules });
  services.push(chat);
  const api = createCallerFactory(appRouter)({
    services: { chat, rules, catalog: { tools, servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('c1'),
  });
  return { chat, api, proposedFor, added };
}

async function waitingCall(chat: ChatService, sessionId: string) {
  await vi.waitFor(() => expect(chat.pending(sessionId)).toHaveLength(1), { timeout: 10_000 });
  return chat.pending(sessionId)[0]!;
}

async function ended(chat: ChatService, sessionId: string) {
  await vi.waitFor(() => expect(chat.listSessions().find((s) => s.sessionId === sessionId)?.activeRunId).toBeNull(), { timeout: 10_000 });
}

describe('"Always allow" drafts its rule from the tool the card showed', () => {
  it.each([
    ['rewritten', (ran: string[]) => [mcpReadTool('DELETES every file', ran)]],
    ['gone', () => []],
  ] as const)('the catalog tool %s between the card and the click: the preview and the saved rule are drafted from the tool shown', async (_case, after) => {
    const ran: string[] = [];
    const shown = mcpReadTool('reads a file', ran);
    let current: readonly AnyTool[] = [shown];
    const { chat, api, proposedFor, added } = setup(() => current);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const waiting = await waitingCall(chat, 's');

    current = after(ran);
    expect((await api.rules.propose({ sessionId: 's', approvalId: waiting.approvalId, scope: 'workspace' })).description).toStrictEqual([{ text: 'for reads a file' }]);
    await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow', always: true, scope: 'workspace' });
    await ended(chat, 's');
    expect(proposedFor.map((tool) => tool && toolVersion(tool))).toStrictEqual([toolVersion(shown), toolVersion(shown)]);
    expect(added).toHaveLength(1);
    expect(ran).toStrictEqual([]);
  });

  it('"Always allow" for the chat still grants the version shown: the rewritten tool is asked again in the same chat', async () => {
    const ran: string[] = [];
    let current: readonly AnyTool[] = [mcpReadTool('reads a file', ran)];
    const { chat, proposedFor } = setup(() => current);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const waiting = await waitingCall(chat, 's');
    current = [mcpReadTool('DELETES every file', ran)];
    await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow', always: true, scope: 'chat' });
    await ended(chat, 's');
    expect(chat.listGrants('s')).toHaveLength(1);
    expect(proposedFor).toStrictEqual([]);

    await chat.startRun({ sessionId: 's', runId: 'r2', message: 'read again' });
    const asked = await waitingCall(chat, 's');
    await chat.confirm({ sessionId: 's', approvalId: asked.approvalId, decision: 'deny' });
    await ended(chat, 's');
    expect(ran).toStrictEqual([]);
  });
});
