import { appRouter, ChatService, ConnectionState, createCallerFactory, MemoryStore } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';

/** Why a write completing the Git layout in the workspace folder is asked, under an allow rule for `**`. */
const GIT_LAYOUT_ASKED = [
  {
    text:
      'This write would make the workspace folder a Git repository, or change one (with it, the folder holds a HEAD file and objects/ and refs/ folders): ' +
      'a git command run there later, in your own shell, runs what its config names, outside any sandbox. The rule Allow writing files matching ',
  },
  { code: '**' },
  { text: ' in this workspace does not cover that' },
];
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { access, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { gitLayoutWrite } from './git-layout-write';
import { RuleBook } from './rule-book';
import { rule, SESSION } from './rule-fixtures';
import { createBuiltinTools } from '../tools';
import { runTool, tempFolder, toolNamed } from '../tools/test-support';

/** The four writes that make a folder a bare repository whose `config` git runs at the next `git status` there. */
const PLANT = ['HEAD', 'objects/README', 'refs/README', 'config'] as const;
const CONTENT: Record<(typeof PLANT)[number], string> = {
  HEAD: 'ref: refs/heads/main\n',
  'objects/README': 'x\n',
  'refs/README': 'x\n',
  config: '[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = "touch PWNED; false"\n',
};

function orders<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, index) => orders([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]));
}

const everything = rule({ tool: 'write_file', match: { kind: 'path-glob', glob: '**' } });

/** What the rules decide for writing `relative` in `workspace` under `rules`, the file system looked up. */
async function decide(workspace: string, relative: string, rules = [everything]) {
  return (await evaluateRules({ tool: 'write_file', arguments: { path: relative, content: 'x\n' } }, rules, { sessionId: SESSION, workspace, gitLayoutWrite: gitLayoutWrite(workspace) })).decision;
}

/** A package folder of a monorepo, with no `.git` of its own, as the workspace. */
async function packageWorkspace() {
  const folder = await tempFolder();
  const workspace = path.join(folder.path, 'mono', 'packages', 'app');
  await mkdir(path.join(folder.path, 'mono', '.git'), { recursive: true });
  await mkdir(workspace, { recursive: true });
  await writeFile(path.join(workspace, 'index.js'), 'console.log(1)\n');
  return { folder, workspace };
}

describe('a write rule does not cover a write that makes a folder a Git repository', () => {
  it.each(orders(PLANT).map((order) => [order.join(', '), order] as const))('writes %s under `**`: the one that completes the layout, and any after it, are asked', async (_, order) => {
    const { folder, workspace } = await packageWorkspace();
    await using _folder = folder;
    const write = toolNamed(createBuiltinTools({ workspace, sandbox: 'none' }), 'write_file');
    const decisions: string[] = [];
    for (const relative of order) {
      decisions.push(await decide(workspace, relative));
      // As the person allowing it on its card would have it written.
      expect(await runTool(write, { path: relative, content: CONTENT[relative] })).toMatchObject({ isError: false });
    }
    // A folder with objects, refs and a config is the common part a `commondir` elsewhere may name: asked too.
    const holds = (index: number, parts: readonly (typeof PLANT)[number][]) => parts.every((part) => order.slice(0, index + 1).includes(part));
    const complete = order.findIndex((_, index) => holds(index, ['HEAD', 'objects/README', 'refs/README']) || holds(index, ['config', 'objects/README', 'refs/README']));
    expect(decisions).toStrictEqual(order.map((_, index) => (index < complete ? 'allow' : 'ask')));
    expect(decisions.at(-1)).toBe('ask');
  });

  it('asks about writing into a repository layout a clone brought, in any folder, and into a `.git` a rule names (names in any case: a file system that ignores case finds `Config` as `config`)', async () => {
    await using folder = await tempFolder();
    const workspace = folder.path;
    for (const git of ['vendor/tool', '.git']) {
      await mkdir(path.join(workspace, git, 'objects', 'ab'), { recursive: true });
      await mkdir(path.join(workspace, git, 'refs', 'heads'), { recursive: true });
      await writeFile(path.join(workspace, git, 'HEAD'), 'ref: refs/heads/main\n');
    }
    const rules = [everything, rule({ tool: 'write_file', match: { kind: 'path-glob', glob: '.git/**' } })];
    const asked = ['vendor/tool/config', 'vendor/tool/HEAD', 'vendor/tool/packed-refs', 'vendor/tool/commondir', 'vendor/tool/objects/ab/cdef', 'vendor/tool/refs/heads/main', 'vendor/tool/hooks/post-checkout', 'vendor/tool/Config', 'vendor/tool/OBJECTS/x', '.git/refs/heads/main', '.git/HEAD'];
    const allowed = ['vendor/tool/README.md', 'vendor/tool/src/config', 'vendor/tool/info/exclude', '.git/description', 'config', 'vendor/config'];
    const answers = await Promise.all([...asked, ...allowed].map(async (relative) => [relative, await decide(workspace, relative, rules)] as const));
    expect(Object.fromEntries(answers)).toStrictEqual(Object.fromEntries([...asked.map((relative) => [relative, 'ask']), ...allowed.map((relative) => [relative, 'allow'])]));
  });

  it('still allows ordinary files named like a repository’s where no layout forms', async () => {
    await using folder = await tempFolder();
    const workspace = folder.path;
    await mkdir(path.join(workspace, 'src', 'config'), { recursive: true });
    await mkdir(path.join(workspace, 'app', 'refs'), { recursive: true });
    await mkdir(path.join(workspace, 'lib', 'objects'), { recursive: true });
    await writeFile(path.join(workspace, 'lib', 'HEAD'), 'a file a project happens to call HEAD\n');
    const paths = ['src/config/index.ts', 'app/config', 'config', 'app/HEAD', 'app/refs/index.ts', 'lib/config', 'lib/objects/user.ts', 'objects/README', 'refs/README', 'HEAD'];
    const answers = await Promise.all(paths.map(async (relative) => [relative, await decide(workspace, relative)] as const));
    expect(Object.fromEntries(answers)).toStrictEqual(Object.fromEntries(paths.map((relative) => [relative, 'allow'])));
  });

  it('an exact rule for the file’s path does not cover it either; one for the very arguments the person saw does', async () => {
    await using folder = await tempFolder();
    const workspace = folder.path;
    await mkdir(path.join(workspace, 'objects'));
    await mkdir(path.join(workspace, 'refs'));
    await writeFile(path.join(workspace, 'HEAD'), 'ref: refs/heads/main\n');
    const call = { tool: 'write_file', arguments: { path: 'config', content: '[core]\n' } };
    const exactPath = rule({ tool: 'write_file', match: { kind: 'path-glob', glob: 'config' } });
    const exactArguments = rule({ tool: 'write_file', match: { kind: 'exact-arguments', arguments: call.arguments } });
    const context = { sessionId: SESSION, workspace, gitLayoutWrite: gitLayoutWrite(workspace) };
    expect(await evaluateRules(call, [exactPath], context)).toStrictEqual({ decision: 'ask', covering: exactPath, gitDirectory: [] });
    expect(await evaluateRules(call, [exactPath, exactArguments], context)).toStrictEqual({ decision: 'allow', rule: exactArguments, rules: [exactArguments] });
    // Without the file system looked up (pure tests), the path rule answers as before.
    expect(await evaluateRules(call, [exactPath], { sessionId: SESSION, workspace })).toStrictEqual({ decision: 'allow', rule: exactPath, rules: [exactPath] });
  });

  it('the server’s rule book looks the folder up and asks, saying why, even with confirmation off', async () => {
    const { folder, workspace } = await packageWorkspace();
    await using _folder = folder;
    await mkdir(path.join(workspace, 'objects'));
    await mkdir(path.join(workspace, 'refs'));
    await writeFile(path.join(workspace, 'HEAD'), 'ref: refs/heads/main\n');
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
    const added = await rules.add({ effect: 'allow', tool: 'write_file', match: { kind: 'path-glob', glob: '**' }, scope: { kind: 'workspace', path: workspace }, source: 'user' });
    const tool = toolNamed(createBuiltinTools({ workspace, sandbox: 'none' }), 'write_file');
    const verdict = (relative: string) => rules.evaluate(SESSION, { id: 'c1', name: 'write_file', arguments: { path: relative, content: CONTENT.config } }, tool, { preview: true });
    expect(await verdict('config')).toStrictEqual({
      effect: 'ask',
      ruleId: added.rule.id,
      description: GIT_LAYOUT_ASKED,
    });
    expect(await verdict('src/config')).toMatchObject({ effect: 'allow', ruleId: added.rule.id });
  });

  it('through the chat, with confirmation off: the write that completes the layout is put up, saying why, and denied it is not written', async () => {
    const { folder, workspace } = await packageWorkspace();
    await using _folder = folder;
    const store = new MemoryStore();
    const rules = await RuleBook.open({ store, workspace, log: () => undefined });
    await rules.add({ effect: 'allow', tool: 'write_file', match: { kind: 'path-glob', glob: '**' }, scope: { kind: 'workspace', path: workspace }, source: 'user' });
    const model = new ScriptedModel([...PLANT.map((relative) => toolCallStep({ name: 'write_file', arguments: { path: relative, content: CONTENT[relative] } })), textStep('done')]);
    const tools = createBuiltinTools({ workspace, sandbox: 'none' });
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => tools, store, rules });
    await chat.open();
    try {
      await chat.startRun({ sessionId: 's', runId: 'r1', message: 'set it up', options: { confirmToolCalls: false } });
      await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
      const waiting = chat.pending('s')[0]!;
      expect(waiting.arguments).toStrictEqual({ path: 'refs/README', content: CONTENT['refs/README'] });
      const events = await store.loadEvents('r1', 0);
      expect(events.filter((event) => event.type === 'tool-start').map((event) => event.awaitingConfirmation)).toStrictEqual([false, false, true]);
      expect(events.filter((event) => event.type === 'status' && event.text.includes('Git repository')).map((event) => event.type === 'status' && event.text)).toStrictEqual([
        expect.stringMatching(/^Calling: write_file\. This write would make the workspace folder a Git repository, or change one .* asked, though confirmation is off$/),
      ]);

      await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'deny' });
      await vi.waitFor(() => expect(chat.listSessions().find((session) => session.sessionId === 's')?.activeRunId).toBeNull());
      model.assertConsumed();
      // Without refs/ the folder is no repository, so the config that follows is an ordinary file: it runs unasked.
      expect((await chat.getSession('s')).toolCalls).toMatchObject([
        { arguments: { path: 'HEAD' }, decision: 'allow', source: 'confirmation-off', outcome: 'executed' },
        { arguments: { path: 'objects/README' }, decision: 'allow', source: 'confirmation-off', outcome: 'executed' },
        { arguments: { path: 'refs/README' }, decision: 'deny', source: 'user', outcome: 'denied' },
        { arguments: { path: 'config' }, decision: 'allow', source: 'confirmation-off', outcome: 'executed' },
      ]);
      await expect(access(path.join(workspace, 'refs'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await chat.shutdown();
    }
  });

  it.each([true, false])('through the chat, with confirmation %s: the card of the write the rule does not cover says why, naming the rule', async (confirmToolCalls) => {
    const { folder, workspace } = await packageWorkspace();
    await using _folder = folder;
    const store = new MemoryStore();
    const rules = await RuleBook.open({ store, workspace, log: () => undefined });
    const added = await rules.add({ effect: 'allow', tool: 'write_file', match: { kind: 'path-glob', glob: '**' }, scope: { kind: 'workspace', path: workspace }, source: 'user' });
    const model = new ScriptedModel([...PLANT.map((relative) => toolCallStep({ name: 'write_file', arguments: { path: relative, content: CONTENT[relative] } })), textStep('done')]);
    const tools = createBuiltinTools({ workspace, sandbox: 'none' });
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => tools, store, rules });
    await chat.open();
    try {
      await chat.startRun({ sessionId: 's', runId: 'r1', message: 'set it up', options: { confirmToolCalls } });
      await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
      const waiting = chat.pending('s')[0]!;
      expect(waiting.arguments).toStrictEqual({ path: 'refs/README', content: CONTENT['refs/README'] });
      await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'deny' });
      await vi.waitFor(() => expect(chat.listSessions().find((session) => session.sessionId === 's')?.activeRunId).toBeNull());
      model.assertConsumed();
      const starts = (await store.loadEvents('r1', 0)).flatMap((event) => (event.type === 'tool-start' ? [event] : []));
      expect(starts.map((start) => [start.arguments.path, start.awaitingConfirmation, start.askedBecause])).toStrictEqual([
        ['HEAD', false, undefined],
        ['objects/README', false, undefined],
        [
          'refs/README',
          true,
          {
            ruleId: added.rule.id,
            reason: GIT_LAYOUT_ASKED,
          },
        ],
        ['config', false, undefined],
      ]);
      expect((await chat.getSession('s')).toolCalls.map((call) => [call.decision, call.source])).toStrictEqual([
        ['allow', confirmToolCalls ? 'rule' : 'confirmation-off'],
        ['allow', confirmToolCalls ? 'rule' : 'confirmation-off'],
        ['deny', 'user'],
        ['allow', confirmToolCalls ? 'rule' : 'confirmation-off'],
      ]);
    } finally {
      await chat.shutdown();
    }
  });

  it('the rule editor’s preview does not list a past write the rule would not cover now: one into a repository layout', async () => {
    const { folder, workspace } = await packageWorkspace();
    await using _folder = folder;
    await mkdir(path.join(workspace, 'objects'));
    await mkdir(path.join(workspace, 'refs'));
    await writeFile(path.join(workspace, 'HEAD'), 'ref: refs/heads/main\n');
    await mkdir(path.join(workspace, 'src'));
    const store = new MemoryStore();
    const rules = await RuleBook.open({ store, workspace, log: () => undefined });
    const writes = ['src/config', 'config'];
    const model = new ScriptedModel([...writes.map((relative) => toolCallStep({ name: 'write_file', arguments: { path: relative, content: CONTENT.config } })), textStep('done')]);
    const tools = createBuiltinTools({ workspace, sandbox: 'none' });
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => tools, store, rules });
    await chat.open();
    try {
      // No rule yet, confirmation off: both ran unasked, and the ledger holds them.
      await chat.startRun({ sessionId: 's', runId: 'r1', message: 'set it up', options: { confirmToolCalls: false } });
      await vi.waitFor(() => expect(chat.listSessions().find((session) => session.sessionId === 's')?.activeRunId).toBeNull());
      model.assertConsumed();
      const api = createCallerFactory(appRouter)({
        services: { chat, rules, catalog: { tools: () => tools, servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
        connection: new ConnectionState('c1'),
      });
      const draft = { effect: 'allow' as const, tool: 'write_file', match: { kind: 'path-glob' as const, glob: '**' }, scope: { kind: 'workspace' as const, path: workspace }, source: 'user' as const };
      const { matches } = await api.rules.preview(draft);
      expect(matches.map((call) => call.arguments)).toStrictEqual([{ path: 'src/config', content: CONTENT.config }]);
      // As evaluation answers for the same calls now: the rule allows the one, and the other is asked.
      const added = await rules.add(draft);
      const verdicts = await Promise.all(writes.map((relative) => rules.evaluate(SESSION, { id: 'c', name: 'write_file', arguments: { path: relative, content: CONTENT.config } }, toolNamed(tools, 'write_file'), { preview: true })));
      expect(verdicts.map((verdict) => verdict?.effect)).toStrictEqual(['allow', 'ask']);
      expect(verdicts.map((verdict) => verdict?.ruleId)).toStrictEqual([added.rule.id, added.rule.id]);
    } finally {
      await chat.shutdown();
    }
  });
});
