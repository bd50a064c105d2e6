import { ChatService, MemoryStore, type AirlockStore, type ToolCallRecord } from '@airlock/api';
import { ApprovalRegistry, defineTool, reasonText, toolResultText, type PolicyVerdict } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { link, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, afterEach, describe, expect, it, vi } from 'vitest';
import { readCommandLine } from './command-line-reader';
import { walkCount } from './submodule-configs';
import { z } from 'zod';
import { createBuiltinTools } from '../tools';
import { toolNamed } from '../tools/test-support';
import { RuleBook } from './rule-book';
import { chatWithRuleBook, recordingTerminal } from './test-chat';
import { startChange, undecidedRecord } from '../store/test-support';

// The command reader's worker loads the grammar once per file, here rather than inside a test's short waits.
beforeAll(() => readCommandLine('true'));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function workspaceFolder(): Promise<string> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'airlock-rules-ws-')));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A verdict with its description as one sentence (a word of a call or rule as a code span). */
const sentence = (verdict: PolicyVerdict | undefined) => verdict && { ...verdict, description: reasonText(verdict.description) };
const command = (text: string) => toolCallStep({ name: 'terminal', arguments: { command: text } });

/** A server's services over `store` acting in `workspace`. */
async function serverFor(store: AirlockStore, workspace: string, steps: ScriptStep[], ran: string[]) {
  const services = await chatWithRuleBook(store, workspace, steps, ran);
  cleanups.push(() => services.chat.shutdown());
  return services;
}

async function ended(chat: ChatService, sessionId: string) {
  await vi.waitFor(() => expect(chat.listSessions().find((s) => s.sessionId === sessionId)?.activeRunId).toBeNull());
}

describe('RuleBook with ChatService', () => {
  it('"Always allow" for this workspace, chosen on a card in one chat, allows the call in another chat of the workspace but not in another workspace', async () => {
    const store = new MemoryStore();
    const workspace = await workspaceFolder();
    const ran: string[] = [];
    const { chat, rules, model } = await serverFor(store, workspace, [command('npm test --silent'), textStep('one'), command('npm test'), textStep('two')], ran);
    await chat.startRun({ sessionId: 'a', runId: 'r1', message: 'test it' });
    await vi.waitFor(() => expect(chat.pending('a')).toHaveLength(1));
    const waiting = chat.pending('a')[0]!;
    const preview = await rules.propose('a', { toolName: waiting.toolName, arguments: waiting.arguments }, 'workspace');
    expect(reasonText(preview.description)).toBe('Allow commands starting with `npm test` in this workspace');
    await chat.confirm({ sessionId: 'a', approvalId: waiting.approvalId, decision: 'allow', always: true, scope: 'workspace' });
    await ended(chat, 'a');

    await chat.startRun({ sessionId: 'b', runId: 'r2', message: 'again' });
    await ended(chat, 'b');
    model.assertConsumed();
    expect(ran).toStrictEqual(['npm test --silent', 'npm test']);
    expect((await chat.getSession('b')).toolCalls).toMatchObject([{ decision: 'allow', source: 'rule', decidedByRule: expect.stringMatching(/^rule_/) }]);
    expect((await rules.list()).map((r) => [reasonText(r.description), r.hits])).toStrictEqual([['Allow commands starting with `npm test` in this workspace', 1]]);
    // No chat grant was made: the rule is what covers it.
    expect(chat.listGrants('a')).toStrictEqual([]);

    const elsewhere = await serverFor(store, await workspaceFolder(), [command('npm test')], []);
    await elsewhere.chat.startRun({ sessionId: 'c', runId: 'r3', message: 'there' });
    await vi.waitFor(() => expect(elsewhere.chat.pending('c')).toHaveLength(1));
  });

  it('a command line allowed by two rules names both on its card and counts a use of each', async () => {
    const store = new MemoryStore();
    const workspace = await workspaceFolder();
    const ran: string[] = [];
    const { chat, rules } = await serverFor(store, workspace, [command('echo hi && pwd'), textStep('ok')], ran);
    await rules.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['echo'], exact: false }, scope: { kind: 'global' }, source: 'user' });
    await rules.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['pwd'], exact: true }, scope: { kind: 'global' }, source: 'user' });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await ended(chat, 's');
    expect(ran).toStrictEqual(['echo hi && pwd']);
    const decision = (await store.loadEvents('r1', 0)).find((event) => event.type === 'tool-decision');
    expect(decision).toMatchObject({ source: 'rule', rule: [{ text: 'Allow commands starting with ' }, { code: 'echo' }, { text: ' everywhere; and Allow the command ' }, { code: 'pwd' }, { text: ' exactly everywhere' }] });
    expect((await rules.list()).map((r) => r.hits)).toStrictEqual([1, 1]);
  });

  it('a deny rule wins over an allow rule and a grant, and the model is told the rule', async () => {
    const store = new MemoryStore();
    const workspace = await workspaceFolder();
    const ran: string[] = [];
    const { chat, rules, model } = await serverFor(store, workspace, [command('npm test && rm -rf /'), textStep('ok')], ran);
    await rules.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['npm', 'test'], exact: false }, scope: { kind: 'global' }, source: 'user' });
    await rules.add({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm'], exact: false }, scope: { kind: 'global' }, source: 'user' });
    const deny = await rules.add({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm', '-rf'], exact: false }, scope: { kind: 'workspace', path: workspace }, source: 'user', reason: 'never delete recursively' });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await ended(chat, 's');
    expect(ran).toStrictEqual([]);
    const message = model.requests[1]?.messages.at(-1);
    expect(message).toMatchObject({ role: 'tool', content: expect.stringContaining('never delete recursively') });
    expect((message as { content: string }).content.startsWith(toolResultText.deniedByRule('terminal', '').split(':')[0]!)).toBe(true);
    // The person's own rule is not said to come from the workspace's file.
    expect((message as { content: string }).content).not.toContain('rules file');
    expect((await chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'deny', source: 'rule', decidedByRule: deny.rule.id, outcome: 'denied' }]);
  });

  it('a workspace file can deny, its allows count only once its content is trusted, and a bad file keeps only its last valid denies', async () => {
    const store = new MemoryStore();
    const workspace = await workspaceFolder();
    await mkdir(path.join(workspace, '.airlock'));
    const file = path.join(workspace, '.airlock', 'rules.json');
    await writeFile(
      file,
      JSON.stringify({
        version: 1,
        rules: [
          { effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['make'], exact: false } },
          { effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['curl'], exact: false }, reason: 'no network from scripts' },
        ],
      }),
    );
    const ran: string[] = [];
    const { chat, rules, model } = await serverFor(store, workspace, [command('curl x'), textStep('a'), command('make'), textStep('b'), command('make'), textStep('c')], ran);
    const status = await rules.workspaceRules();
    expect(status).toMatchObject({ state: 'loaded', trust: 'untrusted', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'one' });
    await ended(chat, 's');
    expect((await chat.getSession('s')).toolCalls.at(-1)).toMatchObject({ source: 'rule', outcome: 'denied' });
    // The model is told where the rule came from, and not that the person set it: the file's reason is not their word.
    const told = (model.requests[1]?.messages.at(-1) as { content: string }).content;
    expect(told).toContain("Deny commands starting with `curl` in this workspace (from the workspace's .airlock/rules.json): “no network from scripts”");
    expect(told).not.toMatch(/the person set/);
    expect(told).toContain("This rule comes from the workspace's rules file (.airlock/rules.json): it was written into the workspace, not set by the person");

    await chat.startRun({ sessionId: 's', runId: 'r2', message: 'two' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'deny' });
    await ended(chat, 's');

    await rules.trustWorkspace({ trusted: true, sha256: status.sha256! });
    await chat.startRun({ sessionId: 's', runId: 'r3', message: 'three' });
    await ended(chat, 's');
    expect(ran).toStrictEqual(['make']);
    expect((await rules.list()).filter((r) => !r.editable)).toHaveLength(2);
    // The trust is kept: a server started again on the same store trusts the file still.
    expect((await (await RuleBook.open({ store, workspace, log: () => undefined })).workspaceRules()).trust).toBe('trusted');

    await writeFile(file, '{"version": 1, "rules": [{"effect": "allow", "tool": "terminal", "match": {"kind": "command-prefix", "tokens": ["bash"], "exact": false}}]}');
    const invalid = await rules.workspaceRules();
    expect(invalid).toMatchObject({ state: 'invalid', trust: 'changed' });
    expect(invalid.error).toMatch(/bash/);
    expect((await rules.list()).filter((r) => !r.editable).map((r) => reasonText(r.description))).toStrictEqual([
      "Deny commands starting with `curl` in this workspace (from the workspace's .airlock/rules.json): “no network from scripts”",
    ]);
  });
});

describe('RuleBook with a deny rule of the workspace file that cannot decide a call', () => {
  it('says in its ask that the rule came from the file, as its deny does, so an allow the ask refuses is told to the model as the file\'s (as the call\'s ledger row tells it); an ask of the person\'s own rule does not', async () => {
    const store = new MemoryStore();
    const workspace = await workspaceFolder();
    await mkdir(path.join(workspace, '.airlock'));
    const file = { version: 1, rules: [{ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm', '-rf'], exact: false }, reason: 'keep the files' }] };
    await writeFile(path.join(workspace, '.airlock', 'rules.json'), JSON.stringify(file));
    const rules = await RuleBook.open({ store, workspace, log: () => undefined });
    const asked = await rules.evaluate('s', { id: 'c', name: 'terminal', arguments: { command: '{rm,-rf,victim}' } }, recordingTerminal([]));
    expect(asked).toMatchObject({ effect: 'ask', ruleId: expect.stringMatching(/^workspace-file:/), fromWorkspaceFile: true });
    // A rule of the person's own is not said to come from the file.
    const elsewhere = await RuleBook.open({ store: new MemoryStore(), workspace: await workspaceFolder(), log: () => undefined });
    const own = await elsewhere.add({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm', '-rf'], exact: false }, scope: { kind: 'global' }, source: 'user' });
    const ownAsked = await elsewhere.evaluate('s', { id: 'c', name: 'terminal', arguments: { command: '{rm,-rf,victim}' } }, recordingTerminal([]));
    expect(ownAsked).toMatchObject({ effect: 'ask', ruleId: own.rule.id });
    expect(ownAsked).not.toHaveProperty('fromWorkspaceFile');
  });
});

describe('RuleBook with confirmation off', () => {
  it('a line a deny rule cannot read whole is put up to the person, not run; a plain line still runs unasked and a denied one is still denied', async () => {
    const store = new MemoryStore();
    const workspace = await workspaceFolder();
    const ran: string[] = [];
    const steps = [command('ls -la'), command('rm -rf victim'), command('{rm,-rf,victim}'), textStep('done')];
    const { chat, rules, model } = await serverFor(store, workspace, steps, ran);
    const deny = await rules.add({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm', '-rf'], exact: false }, scope: { kind: 'global' }, source: 'user' });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'clean up', options: { confirmToolCalls: false } });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    const waiting = chat.pending('s')[0]!;
    expect(waiting.arguments).toStrictEqual({ command: '{rm,-rf,victim}' });
    expect(ran).toStrictEqual(['ls -la']);
    const events = await store.loadEvents('r1', 0);
    expect(events.filter((event) => event.type === 'tool-start').map((event) => event.awaitingConfirmation)).toStrictEqual([false, false, true]);

    await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'deny' });
    await ended(chat, 's');
    model.assertConsumed();
    expect(ran).toStrictEqual(['ls -la']);
    expect((await chat.getSession('s')).toolCalls).toMatchObject([
      { arguments: { command: 'ls -la' }, decision: 'allow', source: 'confirmation-off', outcome: 'executed' },
      { arguments: { command: 'rm -rf victim' }, decision: 'deny', source: 'rule', decidedByRule: deny.rule.id, outcome: 'denied' },
      { arguments: { command: '{rm,-rf,victim}' }, decision: 'deny', source: 'user', outcome: 'denied' },
    ]);
    // Asked about, not denied by the rule: no use of it is counted.
    expect((await rules.list()).map((view) => view.hits)).toStrictEqual([1]);
    expect(sentence(await rules.evaluate('s', { id: 'c', name: 'terminal', arguments: { command: '{rm,-rf,victim}' } }, recordingTerminal([])))).toStrictEqual({
      effect: 'ask',
      ruleId: deny.rule.id,
      description: 'A deny rule applies (Deny commands starting with `rm -rf` everywhere) and this command line could not be read whole (shell syntax the parser could not make sense of)',
    });
  });
});

describe('RuleBook with confirmation off and a program the deny rules did not know', () => {
  it('a wrapper, a runner spelling and an option that runs a line are denied; a denied name in another program\'s word is put up to the person; nothing of them runs', async () => {
    const store = new MemoryStore();
    const workspace = await workspaceFolder();
    const ran: string[] = [];
    const lines = ['linux64 rm -rf victim', 'npm exe git push origin main', "scp -o 'ProxyCommand=rm -rf victim' h:x .", "lighttpd-angel --httpd='rm -rf victim lighttpd'"];
    const { chat, rules, model } = await serverFor(store, workspace, [command('ls -la'), ...lines.map((line) => command(line)), textStep('done')], ran);
    const noDelete = await rules.add({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm', '-rf'], exact: false }, scope: { kind: 'global' }, source: 'user' });
    const noPush = await rules.add({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['git', 'push'], exact: false }, scope: { kind: 'global' }, source: 'user' });
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'clean up', options: { confirmToolCalls: false } });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    const waiting = chat.pending('s')[0]!;
    expect(waiting.arguments).toStrictEqual({ command: lines[3] });
    expect(ran).toStrictEqual(['ls -la']);

    await chat.confirm({ sessionId: 's', approvalId: waiting.approvalId, decision: 'deny' });
    await ended(chat, 's');
    model.assertConsumed();
    expect(ran).toStrictEqual(['ls -la']);
    expect((await chat.getSession('s')).toolCalls).toMatchObject([
      { arguments: { command: 'ls -la' }, decision: 'allow', source: 'confirmation-off', outcome: 'executed' },
      { arguments: { command: lines[0] }, decision: 'deny', source: 'rule', decidedByRule: noDelete.rule.id, outcome: 'denied' },
      { arguments: { command: lines[1] }, decision: 'deny', source: 'rule', decidedByRule: noPush.rule.id, outcome: 'denied' },
      { arguments: { command: lines[2] }, decision: 'deny', source: 'rule', decidedByRule: noDelete.rule.id, outcome: 'denied' },
      { arguments: { command: lines[3] }, decision: 'deny', source: 'user', outcome: 'denied' },
    ]);
    expect(sentence(await rules.evaluate('s', { id: 'c', name: 'terminal', arguments: { command: lines[3]! } }, recordingTerminal([])))).toStrictEqual({
      effect: 'ask',
      ruleId: noDelete.rule.id,
      description:
        'A deny rule applies (Deny commands starting with `rm -rf` everywhere) and this command line could not be read whole (`rm`, which a deny rule names, stands in a word given to `lighttpd-angel`)',
    });
    // A plain line, with deny rules that apply, is no verdict of the rules: with confirmation off it runs.
    expect(await rules.evaluate('s', { id: 'c', name: 'terminal', arguments: { command: 'git status' } }, recordingTerminal([]))).toBeUndefined();
  });
});

describe('RuleBook with an MCP tool', () => {
  it('"Always allow" everywhere on an MCP call saves a rule for that server\'s tool as it is, which allows its later calls with other arguments, and not the tool its server rewrote', async () => {
    const store = new MemoryStore();
    const workspace = await workspaceFolder();
    const ran: string[] = [];
    const mcpTool = (description: string) =>
      defineTool({
        name: 'files__read',
        description,
        parameters: z.object({ path: z.string() }),
        source: 'mcp:files',
        remoteName: 'read',
        annotations: { exactGrants: true },
        execute: async ({ path: file }) => {
          ran.push(file);
          return 'content';
        },
      });
    let current = mcpTool('reads a file (MCP)');
    const rules = await RuleBook.open({ store, workspace, log: () => undefined });
    const model = new ScriptedModel([
      toolCallStep({ name: 'files__read', arguments: { path: 'a' } }),
      textStep('one'),
      toolCallStep({ name: 'files__read', arguments: { path: 'b' } }),
      textStep('two'),
      toolCallStep({ name: 'files__read', arguments: { path: 'c' } }),
      textStep('three'),
    ]);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [current], store, rules });
    cleanups.push(() => chat.shutdown());
    await chat.startRun({ sessionId: 'a', runId: 'r1', message: 'read a' });
    await vi.waitFor(() => expect(chat.pending('a')).toHaveLength(1));
    await chat.confirm({ sessionId: 'a', approvalId: chat.pending('a')[0]!.approvalId, decision: 'allow', always: true, scope: 'global' });
    await ended(chat, 'a');
    const [saved] = await rules.list();
    expect(saved!.rule.match).toStrictEqual({ kind: 'mcp-tool', server: 'files', tool: 'read', toolVersion: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(reasonText(saved!.description)).toBe('Allow the MCP tool `read` of the server `files` as it is now everywhere');
    await chat.startRun({ sessionId: 'b', runId: 'r2', message: 'read b' });
    await ended(chat, 'b');
    expect(ran).toStrictEqual(['a', 'b']);
    // The server rewrites the tool: the rule no longer covers it, and the person is asked.
    current = mcpTool('deletes everything (MCP)');
    await chat.startRun({ sessionId: 'c', runId: 'r3', message: 'read c' });
    await vi.waitFor(() => expect(chat.pending('c')).toHaveLength(1));
    await chat.confirm({ sessionId: 'c', approvalId: chat.pending('c')[0]!.approvalId, decision: 'deny' });
    await ended(chat, 'c');
    expect(ran).toStrictEqual(['a', 'b']);
  });
});

describe('RuleBook path rules', () => {
  /** A workspace whose `src` holds a file and links into `secrets` and out of the workspace; rules for both folders. */
  async function linkedWorkspace() {
    const workspace = await workspaceFolder();
    const outside = await workspaceFolder();
    await mkdir(path.join(workspace, 'src'));
    await mkdir(path.join(workspace, 'secrets'));
    await writeFile(path.join(workspace, 'src', 'a.ts'), 'a\n');
    await writeFile(path.join(workspace, 'secrets', 'key'), 'secret\n');
    await symlink('../secrets/key', path.join(workspace, 'src', 'key'));
    await symlink('../secrets', path.join(workspace, 'src', 'vault'));
    await symlink(outside, path.join(workspace, 'src', 'away'));
    const store = new MemoryStore();
    const rules = await RuleBook.open({ store, workspace, log: () => undefined });
    const scope = { kind: 'workspace' as const, path: workspace };
    await rules.add({ effect: 'allow', tool: 'write_file', match: { kind: 'path-glob', glob: 'src/**' }, scope, source: 'user' });
    await rules.add({ effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secrets/**' }, scope, source: 'user' });
    const tools = createBuiltinTools({ workspace, sandbox: 'none' });
    return { workspace, store, rules, tools };
  }

  it('match the file the file tools would really touch: an allow does not reach through a link, a deny catches its target', async () => {
    const { rules, tools } = await linkedWorkspace();
    const verdict = async (toolName: string, file: string) =>
      (await rules.evaluate('s', { id: 'c1', name: toolName, arguments: { path: file, content: 'x' } }, toolNamed(tools, toolName)))?.effect;
    expect(await verdict('write_file', 'src/a.ts')).toBe('allow');
    expect(await verdict('write_file', 'src/new/b.ts')).toBe('allow');
    expect(await verdict('write_file', 'src/key')).toBeUndefined();
    expect(await verdict('write_file', 'src/vault/new.txt')).toBeUndefined();
    expect(await verdict('write_file', 'src/away/x.txt')).toBeUndefined();
    expect(await verdict('read_file', 'src/key')).toBe('deny');
    expect(await verdict('read_file', 'src/vault/key')).toBe('deny');
    expect(await verdict('read_file', 'src/a.ts')).toBeUndefined();
  });

  it('a file with another name (a hard link) is allowed by no path rule while a path deny rule applies: it is asked about, naming the rule', async () => {
    const workspace = await workspaceFolder();
    await mkdir(path.join(workspace, 'secret'));
    await mkdir(path.join(workspace, 'src'));
    await writeFile(path.join(workspace, 'secret', 'x'), 'SECRETDATA\n');
    await writeFile(path.join(workspace, 'src', 'a.ts'), 'a\n');
    await link(path.join(workspace, 'secret', 'x'), path.join(workspace, 'src', 'hard'));
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
    const tools = createBuiltinTools({ workspace, sandbox: 'none' });
    const verdict = (file: string) => rules.evaluate('s', { id: 'c1', name: 'read_file', arguments: { path: file } }, toolNamed(tools, 'read_file'));
    await rules.add({ effect: 'allow', tool: 'read_file', match: { kind: 'path-glob', glob: '**' }, scope: { kind: 'global' }, source: 'user' });
    expect(await verdict('src/hard')).toMatchObject({ effect: 'allow' });
    const { rule: deny } = await rules.add({ effect: 'deny', tool: 'read_file', match: { kind: 'path-glob', glob: 'secret/**' }, scope: { kind: 'global' }, source: 'user' });
    expect(sentence(await verdict('src/hard'))).toStrictEqual({
      effect: 'ask',
      ruleId: deny.id,
      description: 'A deny rule applies (Deny reading files matching `secret/**` everywhere) and it cannot tell whether it names this file (a file with more than one name (a hard link): another of its names may be one the rule denies)',
    });
    expect(await verdict('secret/x')).toMatchObject({ effect: 'deny', ruleId: deny.id });
    expect(await verdict('src/a.ts')).toMatchObject({ effect: 'allow' });
    expect(await verdict('src')).toMatchObject({ effect: 'allow' });
  });

  it('the preview of a rule judges links as evaluation does: a write through a link out of its folder is not listed', async () => {
    const { workspace, rules } = await linkedWorkspace();
    const record = (file: string): ToolCallRecord =>
      undecidedRecord('r', 's', { ...startChange(file, 0, 'write_file'), arguments: { path: file, content: 'x' }, approvalId: file, executesCode: false, toolVersion: 'v', expiresAt: null });
    const draft = { effect: 'allow' as const, tool: 'write_file', match: { kind: 'path-glob' as const, glob: 'src/**' }, scope: { kind: 'workspace' as const, path: workspace }, source: 'user' as const };
    const matched = await rules.preview(draft, [record('src/a.ts'), record('src/key'), record('src/away/x.txt')]);
    expect(matched.map((call) => call.arguments.path)).toStrictEqual(['src/a.ts']);
  });

  // Found in review: each git call judged walks the workspace (a few hundred ms in a large one, on the server's only
  // thread), and a preview judged up to 500 past calls one after another: minutes with every client held.
  it('the preview of a rule walks the workspace once for all its git calls, and still finds a nested repository', async () => {
    const { workspace, rules } = await linkedWorkspace();
    await mkdir(path.join(workspace, 'nested', '.git'), { recursive: true });
    await writeFile(path.join(workspace, 'nested', '.git', 'config'), '[core]\n\tfsmonitor = touch PWNED\n');
    const record = (index: number): ToolCallRecord =>
      undecidedRecord('r', 's', { ...startChange(`call-${index}`, index, 'terminal'), arguments: { command: 'git status' }, approvalId: `a${index}`, executesCode: true, toolVersion: 'v', expiresAt: null });
    const draft = { effect: 'allow' as const, tool: 'terminal', match: { kind: 'command-prefix' as const, tokens: ['git', 'status'], exact: false }, scope: { kind: 'workspace' as const, path: workspace }, source: 'user' as const };
    const before = walkCount.walks;
    expect(await rules.preview(draft, Array.from({ length: 20 }, (_, index) => record(index)))).toStrictEqual([]);
    expect(walkCount.walks - before).toBe(1);
    // A call that may run is judged with a walk of its own, one for its rules and both their sides.
    await rules.preview(draft, [record(20)]);
    await rules.preview(draft, [record(21)]);
    expect(walkCount.walks - before).toBe(3);
  });

  it('a write through a link into a folder the rule does not cover waits for the person, and nothing is written meanwhile', async () => {
    const { workspace, store, rules, tools } = await linkedWorkspace();
    const model = new ScriptedModel([
      toolCallStep({ name: 'write_file', arguments: { path: 'src/a.ts', content: 'b\n' } }),
      toolCallStep({ name: 'write_file', arguments: { path: 'src/key', content: 'overwritten\n' } }),
      textStep('done'),
    ]);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => tools, store, rules });
    cleanups.push(() => chat.shutdown());
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'write' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    expect(chat.pending('s')[0]).toMatchObject({ toolName: 'write_file', arguments: { path: 'src/key' } });
    expect(await readFile(path.join(workspace, 'src', 'a.ts'), 'utf8')).toBe('b\n');
    expect(await readFile(path.join(workspace, 'secrets', 'key'), 'utf8')).toBe('secret\n');
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'deny' });
    await ended(chat, 's');
    model.assertConsumed();
    expect(await readFile(path.join(workspace, 'secrets', 'key'), 'utf8')).toBe('secret\n');
    expect((await chat.getSession('s')).toolCalls).toMatchObject([
      { arguments: { path: 'src/a.ts' }, source: 'rule', outcome: 'executed' },
      { arguments: { path: 'src/key' }, source: 'user', outcome: 'denied' },
    ]);
  });
});

describe('RuleBook and a waiting call', () => {
  it('a deny rule the person adds while a call waits refuses a plain allow of it, and the model is told the rule', async () => {
    const store = new MemoryStore();
    const ran: string[] = [];
    const { chat, rules } = await serverFor(store, await workspaceFolder(), [command('rm -rf build'), textStep('ok')], ran);
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'clean' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1));
    await rules.add({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm'], exact: false }, scope: { kind: 'global' }, source: 'user', reason: 'no rm' });
    await chat.confirm({ sessionId: 's', approvalId: chat.pending('s')[0]!.approvalId, decision: 'allow' });
    await ended(chat, 's');
    expect(ran).toStrictEqual([]);
    expect((await chat.getSession('s')).toolCalls).toMatchObject([{ decision: 'deny', source: 'rule', outcome: 'denied' }]);
  });
});

describe('exact-arguments rules and the defaults a tool declares', () => {
  // The loop fills a call's left-out arguments with its tool's declared defaults before the rules see it, so the card
  // shows what the tool acts on; a rule written for the call as given (`{}`) is for that same call.
  const deploy = defineTool({
    name: 'ops__deploy',
    description: 'deploys',
    parameters: z.object({ environment: z.enum(['staging', 'production']).default('production'), dry_run: z.boolean().default(false) }),
    execute: async () => 'deployed',
  });
  const filled = { environment: 'production', dry_run: false };
  const exact = (effect: 'allow' | 'deny', args: Record<string, unknown>) => ({ effect, tool: 'ops__deploy', match: { kind: 'exact-arguments' as const, arguments: args }, scope: { kind: 'global' as const }, source: 'user' as const });

  it('a deny rule written for the call with its defaults left out refuses the call as filled in, and not one that names others', async () => {
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace: await workspaceFolder(), log: () => undefined });
    await rules.add(exact('deny', {}));
    expect(await rules.evaluate('s', { id: 'c', name: 'ops__deploy', arguments: filled }, deploy)).toMatchObject({ effect: 'deny' });
    expect(await rules.evaluate('s', { id: 'c', name: 'ops__deploy', arguments: { ...filled, dry_run: true } }, deploy)).toBeUndefined();
  });

  it('an allow rule written either way covers the same call', async () => {
    for (const written of [{}, { dry_run: false }, filled]) {
      const rules = await RuleBook.open({ store: new MemoryStore(), workspace: await workspaceFolder(), log: () => undefined });
      await rules.add(exact('allow', written));
      expect(await rules.evaluate('s', { id: 'c', name: 'ops__deploy', arguments: filled }, deploy)).toMatchObject({ effect: 'allow' });
      expect(await rules.evaluate('s', { id: 'c', name: 'ops__deploy', arguments: { ...filled, environment: 'staging' } }, deploy)).toBeUndefined();
    }
  });

  it('the preview of a rule written either way lists the calls the check would decide, their defaults filled as the loop filled them', async () => {
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace: await workspaceFolder(), log: () => undefined });
    const record = (approvalId: string, args: Record<string, unknown>): ToolCallRecord =>
      undecidedRecord('r', 's', { ...startChange('x', 0, 'ops__deploy'), arguments: args, approvalId, executesCode: false, toolVersion: 'v', expiresAt: null });
    const calls = [record('on-defaults', filled), record('dry', { ...filled, dry_run: true })];
    for (const written of [{}, { dry_run: false }, filled]) {
      const previewed = await rules.preview(exact('deny', written), calls, [deploy]);
      expect(previewed.map((call) => call.approvalId)).toStrictEqual(['on-defaults']);
      expect(await rules.evaluate('s', { id: 'c', name: 'ops__deploy', arguments: filled }, deploy)).toBeUndefined();
    }
    const fromServer = defineTool({ ...deploy, source: 'mcp:ops', remoteName: 'deploy' });
    const serverRule = { effect: 'deny' as const, tool: 'mcp', match: { kind: 'mcp-server' as const, server: 'ops' }, scope: { kind: 'global' as const }, source: 'user' as const };
    expect((await rules.preview(serverRule, calls, [fromServer])).map((call) => call.approvalId)).toStrictEqual(['on-defaults', 'dry']);
  });
});

describe('RuleBook limits', () => {
  /** `{"command": [[[…"x"…]]]}`, nested `depth` arrays deep. */
  const nested = (depth: number) => ({ command: Array.from({ length: depth }).reduce<unknown>((inner) => [inner], 'x') });
  const exactRule = (args: Record<string, unknown>) => ({ effect: 'allow' as const, tool: 'python', match: { kind: 'exact-arguments' as const, arguments: args }, scope: { kind: 'global' as const }, source: 'user' as const });

  it('refuses an exact-arguments rule nested too deep or too large, and keeps nothing of it', async () => {
    const store = new MemoryStore();
    const rules = await RuleBook.open({ store, workspace: await workspaceFolder(), log: () => undefined });
    await expect(rules.add(exactRule(nested(3000)))).rejects.toThrow(/nested more than 32 levels deep/);
    await expect(rules.add(exactRule({ code: 'x'.repeat(70_000) }))).rejects.toThrow(/too large to keep as a rule/);
    expect(await store.listRules()).toStrictEqual([]);
    expect(await rules.list()).toStrictEqual([]);
  });

  it('refuses a command rule whose token holds a lone surrogate, saying where, and keeps nothing of it', async () => {
    const store = new MemoryStore();
    const rules = await RuleBook.open({ store, workspace: await workspaceFolder(), log: () => undefined });
    const tokens = ['git', 'push\uD800'];
    const draft = { effect: 'deny' as const, tool: 'terminal', match: { kind: 'command-prefix' as const, tokens, exact: false }, scope: { kind: 'global' as const }, source: 'user' as const };
    await expect(rules.add(draft)).rejects.toThrow('holds a lone UTF-16 surrogate (U+D800 at character 5), which is not text: write the character whole');
    await expect(rules.add({ ...draft, match: { ...draft.match, tokens: ['\uDC00git'] } })).rejects.toThrow('U+DC00 at character 1');
    expect(await store.listRules()).toStrictEqual([]);
    // A pair is one character (U+1F600), whole.
    await rules.add({ ...draft, match: { ...draft.match, tokens: ['echo', '\uD83D\uDE00'] } });
    expect(await store.listRules()).toHaveLength(1);
  });

  it('sets aside a rule stored before the limits (nested 3,000 deep): the others work, and it can be removed by its id', async () => {
    const store = new MemoryStore();
    const workspace = await workspaceFolder();
    await store.saveRule({ ...exactRule(nested(3000)), id: 'rule_deep', createdAt: new Date().toISOString() });
    await store.saveRule({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['rm'], exact: false }, scope: { kind: 'global' }, source: 'user', id: 'rule_rm', createdAt: new Date().toISOString() });
    const said: string[] = [];
    const rules = await RuleBook.open({ store, workspace, log: (line) => said.push(line) });
    expect(said).toStrictEqual([expect.stringMatching(/^Set aside the stored rule rule_deep: nested more than 32 levels deep/)]);
    expect((await rules.list()).map((view) => view.rule.id)).toStrictEqual(['rule_rm']);
    const terminal = toolNamed(createBuiltinTools({ workspace, sandbox: 'none' }), 'terminal');
    expect(await rules.evaluate('s', { id: 'c1', name: 'terminal', arguments: { command: 'rm -rf x' } }, terminal)).toMatchObject({ effect: 'deny', ruleId: 'rule_rm' });
    expect(await rules.remove('rule_deep')).toBe(true);
    expect((await store.listRules()).map((stored) => stored.rule.id)).toStrictEqual(['rule_rm']);
  });

  it('keeps at most 1,000 rules: the next one is refused with the limit named', async () => {
    const store = new MemoryStore();
    const rules = await RuleBook.open({ store, workspace: await workspaceFolder(), log: () => undefined });
    for (let index = 0; index < 1000; index++) await rules.add(exactRule({ code: `print(${index})` }));
    await expect(rules.add(exactRule({ code: 'one more' }))).rejects.toThrow('limit exceeded: at most 1000 rules (remove some first)');
    expect(await store.listRules()).toHaveLength(1000);
  });

  it('keeps at most 4 Mi characters of rules together: past that a rule is refused, and a removal makes room', async () => {
    const store = new MemoryStore();
    const rules = await RuleBook.open({ store, workspace: await workspaceFolder(), log: () => undefined });
    const big = (index: number) => exactRule({ code: `${index}`.padEnd(60_000, 'x') });
    const added = [];
    for (let index = 0; index < 69; index++) added.push(await rules.add(big(index)));
    await expect(rules.add(big(70))).rejects.toThrow('limit exceeded: at most 4194304 characters of rules together (remove some first)');
    await rules.remove(added[0]!.rule.id);
    await expect(rules.add(big(70))).resolves.toMatchObject({ editable: true });
  });

  it('refuses "Always allow" as a rule for a call too large to keep as one before anything is decided', async () => {
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace: await workspaceFolder(), log: () => undefined });
    const python = defineTool({ name: 'python', description: 'runs', parameters: z.object({ code: z.string() }), execute: async () => 'ok' });
    await expect(rules.propose('s', { toolName: 'python', arguments: { code: 'x'.repeat(70_000) } }, 'workspace', python)).rejects.toThrow(/too large to keep as a rule/);
  });
});
