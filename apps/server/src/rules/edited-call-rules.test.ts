import { MemoryStore } from '@airlock/api';
import { textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, afterEach, describe, expect, it, vi } from 'vitest';
import { readCommandLine } from './command-line-reader';
import { chatWithRuleBook } from './test-chat';

// The command reader's worker loads the grammar once per file, here rather than inside a test's short waits.
beforeAll(() => readCommandLine('true'));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function chatWithRules(steps: ScriptStep[], ran: string[]) {
  const workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'airlock-edit-rules-')));
  cleanups.push(() => rm(workspace, { recursive: true, force: true }));
  const services = await chatWithRuleBook(new MemoryStore(), workspace, steps, ran);
  cleanups.push(() => services.chat.shutdown());
  return services;
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
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1), { timeout: 15_000 });
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
