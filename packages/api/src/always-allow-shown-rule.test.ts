import { ApprovalRegistry, ConflictError, type AnyTool } from '@airlock/core';
import { mcpReadTool, ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ChatService } from './chat-service';
import { ConnectionState, type RuleService, type RuleView } from './context';
import { appRouter, createCallerFactory } from './router';
import type { RuleDraft } from './rules/rule';

// "Always allow" beyond the chat saves the rule the card showed, or none: what it would draft can change between the
// card and the click (a config file of the workspace written or removed meanwhile makes a command's rule exact or not).

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((chat) => chat.shutdown()));
});

const exact: RuleDraft = { effect: 'allow', tool: 'files__read', match: { kind: 'exact-arguments', arguments: { path: 'a' } }, scope: { kind: 'workspace', path: '/w' }, source: 'user' };
const wider: RuleDraft = { effect: 'allow', tool: 'mcp', match: { kind: 'mcp-server', server: 'files' }, scope: { kind: 'workspace', path: '/w' }, source: 'user' };

/** Rules whose proposal is `proposing.draft` at the moment asked, and that keep what they are given to save. */
function changingRules(proposing: { draft: RuleDraft }) {
  const added: RuleDraft[] = [];
  const rules = {
    evaluate: () => Promise.resolve(undefined),
    propose: () => Promise.resolve({ draft: proposing.draft, description: [{ text: JSON.stringify(proposing.draft.match) }] }),
    add: (draft: RuleDraft) => {
      added.push(draft);
      return Promise.resolve({} as RuleView);
    },
  } as Partial<RuleService> as RuleService;
  return { rules, added };
}

function setup(proposing: { draft: RuleDraft }) {
  const ran: string[] = [];
  const tools = (): readonly AnyTool[] => [mcpReadTool('reads a file', ran)];
  const { rules, added } = changingRules(proposing);
  const model = new ScriptedModel([toolCallStep({ name: 'files__read', arguments: { path: 'a' } }), textStep('done')]);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools, rules });
  services.push(chat);
  const api = createCallerFactory(appRouter)({
    services: { chat, rules, catalog: { tools, servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('c1'),
  });
  return { chat, api, added, ran };
}

async function waitingCall(chat: ChatService, sessionId: string) {
  await vi.waitFor(() => expect(chat.pending(sessionId)).toHaveLength(1), { timeout: 10_000 });
  return chat.pending(sessionId)[0]!;
}

describe('"Always allow" saves the rule the card showed', () => {
  it('a rule that would now be another than the one shown is refused as a conflict: nothing is decided or saved, and the call waits on', async () => {
    const proposing = { draft: exact };
    const { chat, api, added, ran } = setup(proposing);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const waiting = await waitingCall(chat, 's');
    const shown = await api.rules.propose({ sessionId: 's', approvalId: waiting.approvalId, scope: 'workspace' });
    expect(shown.draft).toStrictEqual(exact);

    proposing.draft = wider;
    const decision = { sessionId: 's', approvalId: waiting.approvalId, decision: 'allow', always: true, scope: 'workspace', rule: shown.draft } as const;
    await expect(api.chat.confirmTool(decision)).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(chat.confirm(decision)).rejects.toBeInstanceOf(ConflictError);
    expect(added).toStrictEqual([]);
    expect(ran).toStrictEqual([]);
    expect(chat.pending('s').map((call) => call.approvalId)).toStrictEqual([waiting.approvalId]);

    // Shown again, the rule as it is now is the one saved.
    const again = await api.rules.propose({ sessionId: 's', approvalId: waiting.approvalId, scope: 'workspace' });
    await api.chat.confirmTool({ ...decision, rule: again.draft });
    await vi.waitFor(() => expect(ran).toStrictEqual(['reads a file: a']), { timeout: 10_000 });
    expect(added).toStrictEqual([wider]);
  });

  it('the rule shown, still the one drafted, is saved', async () => {
    const { chat, api, added } = setup({ draft: exact });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'read' });
    const waiting = await waitingCall(chat, 's');
    const shown = await api.rules.propose({ sessionId: 's', approvalId: waiting.approvalId, scope: 'global' });
    await api.chat.confirmTool({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow', always: true, scope: 'global', rule: shown.draft });
    await vi.waitFor(() => expect(added).toStrictEqual([exact]), { timeout: 10_000 });
  });
});
