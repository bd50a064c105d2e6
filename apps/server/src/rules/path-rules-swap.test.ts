import { ChatService, MemoryStore } from '@airlock/api';
import { ApprovalRegistry, type AnyTool, type ToolOutput } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { link, mkdir, mkdtemp, realpath, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createBuiltinTools } from '../tools';
import { RuleBook } from './rule-book';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A workspace with `secret/x` and `secret/dir`, `src/x` and `src/d`, and ready beside them what a process in the
 * workspace would swap in: `src/.h`, another name of `secret/x`.
 */
async function workspace(): Promise<string> {
  const ws = await realpath(await mkdtemp(path.join(tmpdir(), 'airlock-path-swap-')));
  cleanups.push(() => rm(ws, { recursive: true, force: true }));
  await mkdir(path.join(ws, 'secret', 'dir'), { recursive: true });
  await mkdir(path.join(ws, 'src', 'd'), { recursive: true });
  await mkdir(path.join(ws, 'other'));
  await writeFile(path.join(ws, 'secret', 'x'), 'SECRETDATA\n');
  await writeFile(path.join(ws, 'secret', 'dir', 'PAYROLL.txt'), 'y');
  await writeFile(path.join(ws, 'src', 'x'), 'plain\n');
  await writeFile(path.join(ws, 'src', 'd', 'ok.txt'), 'ok');
  await link(path.join(ws, 'secret', 'x'), path.join(ws, 'src', '.h'));
  return ws;
}

/** `src/x` becomes another name of `secret/x`, in one rename. */
const hardLinkSwap = (ws: string) => rename(path.join(ws, 'src', '.h'), path.join(ws, 'src', 'x'));
/** `src/d` becomes a symbolic link to `../secret/dir`. */
const folderLinkSwap = async (ws: string) => {
  await rm(path.join(ws, 'src', 'd'), { recursive: true });
  await symlink('../secret/dir', path.join(ws, 'src', 'd'));
};

interface Setup {
  /** Allow rules for `src/**` beside the deny rules for `secret/**`. */
  allowSrc: boolean;
  /** Run by each tool right before it executes: after the rules judged the call, before it opens anything. */
  beforeRun: Partial<Record<'read_file' | 'list_directory', () => Promise<void>>>;
}

/** The chat, with path rules for both file tools, the tools' results as they returned them, and the model. */
async function chatWith(ws: string, steps: ScriptStep[], setup: Setup) {
  const store = new MemoryStore();
  const rules = await RuleBook.open({ store, workspace: ws, log: () => undefined });
  const global = { kind: 'global' as const };
  for (const tool of ['read_file', 'list_directory']) {
    if (setup.allowSrc) await rules.add({ effect: 'allow', tool, match: { kind: 'path-glob', glob: 'src/**' }, scope: global, source: 'user' });
    await rules.add({ effect: 'deny', tool, match: { kind: 'path-glob', glob: 'secret/**' }, scope: global, source: 'user' });
  }
  const results: string[] = [];
  const builtin = createBuiltinTools({ workspace: ws, sandbox: 'none' });
  const hooked = (name: 'read_file' | 'list_directory'): AnyTool => {
    const tool = builtin.find((candidate) => candidate.name === name)!;
    return {
      ...tool,
      execute: async (args: unknown, context: Parameters<AnyTool['execute']>[1]) => {
        await setup.beforeRun[name]?.();
        const output: string | ToolOutput = await tool.execute(args, context);
        results.push(typeof output === 'string' ? output : output.content);
        return output;
      },
    };
  };
  const tools = [hooked('read_file'), hooked('list_directory')];
  const model = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => tools, store, rules });
  await chat.open();
  cleanups.push(() => chat.shutdown());
  return { chat, results, model };
}

async function ended(chat: ChatService, sessionId: string): Promise<void> {
  await vi.waitFor(() => expect(chat.listSessions().find((session) => session.sessionId === sessionId)?.activeRunId).toBeNull(), { timeout: 15_000 });
}

const readX = { name: 'read_file', arguments: { path: 'src/x' }, id: 'read' };
const listD = { name: 'list_directory', arguments: { path: 'src/d' }, id: 'list' };

describe('a path swapped between the rules\' check and the tool\'s run', () => {
  it('a file a rule allowed, then made another name of a file a deny rule names, is not read', async () => {
    const ws = await workspace();
    const { chat, results, model } = await chatWith(ws, [toolCallStep(readX), textStep('done')], { allowSrc: true, beforeRun: { read_file: () => hardLinkSwap(ws) } });
    await chat.startRun({ sessionId: 's', runId: 'r', message: 'go' });
    await ended(chat, 's');
    model.assertConsumed();
    expect(results).toHaveLength(1);
    expect(results[0]).not.toContain('SECRETDATA');
    expect(results[0]).toMatch(/^Refused: "src\/x" changed since a rule allowed it/);
    expect((await chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'allow', source: 'rule', outcome: 'error' }]);
  });

  it('a folder a rule allowed, then made a link to a folder a deny rule names, is not listed', async () => {
    const ws = await workspace();
    const { chat, results } = await chatWith(ws, [toolCallStep(listD), textStep('done')], { allowSrc: true, beforeRun: { list_directory: () => folderLinkSwap(ws) } });
    await chat.startRun({ sessionId: 's', runId: 'r', message: 'go' });
    await ended(chat, 's');
    expect(results).toHaveLength(1);
    expect(results[0]).not.toContain('PAYROLL');
    expect(results[0]).toMatch(/^Refused: "src\/d" is covered by a deny rule/);
  });

  it('with confirmation off, a call no rule decides is refused once what it opened is one a deny rule names or may name', async () => {
    const ws = await workspace();
    const { chat, results } = await chatWith(ws, [toolCallStep(readX, listD), textStep('done')], {
      allowSrc: false,
      beforeRun: { read_file: () => hardLinkSwap(ws), list_directory: () => folderLinkSwap(ws) },
    });
    await chat.startRun({ sessionId: 's', runId: 'r', message: 'go', options: { confirmToolCalls: false } });
    await ended(chat, 's');
    expect(results).toHaveLength(2);
    expect(results.join('\n')).not.toMatch(/SECRETDATA|PAYROLL/);
    expect(results[0]).toMatch(/^Refused: "src\/x" changed since the rules judged it/);
    expect(results[1]).toMatch(/^Refused: "src\/d" is covered by a deny rule/);
  });

  it("the person's allow of a file with another name, asked about because of the deny rule, still reads it", async () => {
    const ws = await workspace();
    await writeFile(path.join(ws, 'other', 'h'), 'shared\n');
    await link(path.join(ws, 'other', 'h'), path.join(ws, 'src', 'h'));
    const { chat, results } = await chatWith(ws, [toolCallStep({ name: 'read_file', arguments: { path: 'src/h' } }), textStep('done')], { allowSrc: true, beforeRun: {} });
    await chat.startRun({ sessionId: 's', runId: 'r', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1), { timeout: 15_000 });
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await ended(chat, 's');
    expect(results).toStrictEqual(['shared\n']);
  });

  it("the person's allow does not reach a folder made a link to one a deny rule names after it was given", async () => {
    const ws = await workspace();
    const { chat, results } = await chatWith(ws, [toolCallStep(listD), textStep('done')], { allowSrc: false, beforeRun: { list_directory: () => folderLinkSwap(ws) } });
    await chat.startRun({ sessionId: 's', runId: 'r', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1), { timeout: 15_000 });
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await ended(chat, 's');
    expect(results).toHaveLength(1);
    expect(results[0]).not.toContain('PAYROLL');
    expect(results[0]).toMatch(/^Refused: "src\/d" is covered by a deny rule/);
  });

  it('a file and a folder a rule allowed, left as they were, are read and listed', async () => {
    const ws = await workspace();
    const { chat, results } = await chatWith(ws, [toolCallStep(readX, listD), textStep('done')], { allowSrc: true, beforeRun: {} });
    await chat.startRun({ sessionId: 's', runId: 'r', message: 'go' });
    await ended(chat, 's');
    expect(results).toStrictEqual(['plain\n', 'src/d: 1 entry\nfile     ok.txt  (2 bytes)']);
  });
});
