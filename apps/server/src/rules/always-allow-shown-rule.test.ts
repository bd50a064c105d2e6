import { ChatService, MemoryStore } from '@airlock/api';
import { ApprovalRegistry, defineTool, type AnyTool } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { apiCaller, ended, waitingCall } from '../../test/support/always-allow';
import { RuleBook } from './rule-book';

// "Always allow" for a workspace or everywhere saves the rule its card showed. What the rules draft for a command
// depends on the workspace's files (a `.yarnrc.yml` naming code makes `yarn why x` exact, since a rule for `yarn why`
// would not cover it): a file changed between the card and the click must not have a wider rule saved than the one shown.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A terminal that keeps the commands it is given and runs none. */
function recordingTerminal(ran: string[]): AnyTool {
  return defineTool({
    name: 'terminal',
    description: 'Run a shell command',
    parameters: z.object({ command: z.string() }),
    annotations: { executesCode: true },
    execute: async ({ command }) => {
      ran.push(command);
      return 'ok';
    },
  });
}

async function serve(workspace: string, ran: string[]) {
  const store = new MemoryStore();
  const rules = await RuleBook.open({ store, workspace, log: () => undefined });
  const tools = () => [recordingTerminal(ran)];
  const model = new ScriptedModel([toolCallStep({ name: 'terminal', arguments: { command: 'yarn why lodash' } }), textStep('done')]);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools, store, rules });
  cleanups.push(() => chat.shutdown());
  await chat.open();
  return { chat, rules, api: apiCaller(chat, rules, tools) };
}

describe('"Always allow" saves the rule its card showed', () => {
  it('the .yarnrc.yml that made the rule exact removed before the click: nothing is saved or decided, and the rule shown again is the one saved', async () => {
    const workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'airlock-shown-rule-')));
    cleanups.push(() => rm(workspace, { recursive: true, force: true }));
    await writeFile(path.join(workspace, '.yarnrc.yml'), 'yarnPath: ./yarn.cjs\n');
    const ran: string[] = [];
    const { chat, rules, api } = await serve(workspace, ran);
    await chat.startRun({ sessionId: 'a', runId: 'r1', message: 'why lodash' });
    const waiting = await waitingCall(chat, 'a');
    const shown = await api.rules.propose({ sessionId: 'a', approvalId: waiting.approvalId, scope: 'workspace' });
    expect(shown.draft.match).toStrictEqual({ kind: 'command-prefix', tokens: ['yarn', 'why', 'lodash'], exact: true });

    await rm(path.join(workspace, '.yarnrc.yml'));
    const decision = { sessionId: 'a', approvalId: waiting.approvalId, decision: 'allow', always: true, scope: 'workspace' } as const;
    await expect(api.chat.confirmTool({ ...decision, rule: shown.draft })).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/no longer the one shown/) });
    expect(await rules.list()).toStrictEqual([]);
    expect(ran).toStrictEqual([]);
    expect(chat.pending('a').map((call) => call.approvalId)).toStrictEqual([waiting.approvalId]);

    const again = await api.rules.propose({ sessionId: 'a', approvalId: waiting.approvalId, scope: 'workspace' });
    expect(again.draft.match).toStrictEqual({ kind: 'command-prefix', tokens: ['yarn', 'why'], exact: false });
    await api.chat.confirmTool({ ...decision, rule: again.draft });
    await ended(chat, 'a');
    expect(ran).toStrictEqual(['yarn why lodash']);
    expect((await rules.list()).map((view) => view.rule.match)).toStrictEqual([again.draft.match]);
  });
});
