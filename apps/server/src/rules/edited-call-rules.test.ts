import { ChatService, MemoryStore } from '@airlock/api';
import { ApprovalRegistry, defineTool, type AnyTool } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { RuleBook } from './rule-book';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function terminal(ran: string[]): AnyTool {
  return defineTool({
    name: 'terminal',
    description: 'runs a command',
    parameters: z.object({ command: z.string() }),
    annotations: { executesCode: true },
    execute: async ({ command }) => {
      ran.push(command);
      return `ran ${command}`;
    },
  });
}

async function chatWithRules(steps: ScriptStep[], ran: string[]) {
  const workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'airlock-edit-rules-')));
  cleanups.push(() => rm(workspace, { recursive: true, force: true }));
  const store = new MemoryStore();
  const rules = await RuleBook.open({ store, workspace, log: () => undefined });
  const model = new ScriptedModel(steps);
  const tools = [terminal(ran)];
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => tools, store, rules });
  cleanups.push(() => chat.shutdown());
  await chat.open();
  return { chat, rules, model };
}

describe('rules and a call edited before it is allowed', () => {
  it('a deny rule refuses the edited call though the proposal matched no rule, and the ledger keeps both versions', async () => {
    const ran: string[] = [];
    const { chat, rules, model } = await chatWithRules([toolCallStep({ name: 'terminal', arguments: { command: 'ls build' } }), textStep('ok')], ran);
    const deny = await rules.add({
      effect: 'deny',
      tool: 'terminal',
      match: { kind: 'command-prefix', tokens: ['rm', '-rf'], exact: false },
      scope: { kind: 'global' },
      source: 'user',
      reason: 'never delete recursively',
    });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'tidy up' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    const waiting = chat.pending('s')[0]!;
    expect(await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'allow', arguments: { command: 'rm -rf build' } })).toMatchObject({ resolved: true });
    await vi.waitFor(() => expect(chat.listSessions()[0]?.activeRunId).toBeNull());

    model.assertConsumed();
    expect(ran).toStrictEqual([]);
    expect((await chat.getSession('s')).toolCalls).toMatchObject([
      { arguments: { command: 'ls build' }, editedArguments: { command: 'rm -rf build' }, decision: 'deny', source: 'rule', decidedByRule: deny.rule.id, outcome: 'denied' },
    ]);
    const told = model.requests[1]?.messages.at(-1);
    expect(told).toMatchObject({ role: 'tool', content: expect.stringMatching(/^The person edited the arguments before allowing this call, to: \{"command":"rm -rf build"\}\n\n/) });
    expect(told).toMatchObject({ content: expect.stringContaining('never delete recursively') });
  });
});
