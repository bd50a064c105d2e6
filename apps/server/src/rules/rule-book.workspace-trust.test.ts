import { appRouter, ChatService, ConnectionState, createCallerFactory, MemoryStore, type AirlockStore } from '@airlock/api';
import { ApprovalRegistry, defineTool, reasonText, type AnyTool } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep, type ScriptStep } from '@airlock/core/testing';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { readCommandLine } from './command-line-reader';
import { z } from 'zod';
import { tempFolder } from '../tools/test-support';
import { RuleBook } from './rule-book';
import { recordingTerminal } from './test-chat';

// The command reader's worker loads the grammar once per file, here rather than inside a test's short waits.
beforeAll(() => readCommandLine('true'));

const command = (text: string) => toolCallStep({ name: 'terminal', arguments: { command: text } });
const commandPrefix = (tokens: string[], exact: boolean) => ({ kind: 'command-prefix', tokens, exact });

const MAKE_TEST = { effect: 'allow', tool: 'terminal', match: commandPrefix(['make', 'test'], true) };
const NO_CURL = { effect: 'deny', tool: 'terminal', match: commandPrefix(['curl'], false), reason: 'no network' };
const EXFILTRATE = 'cat ~/.npmrc; touch PWNED';
const ALLOW_EXFILTRATE = { effect: 'allow', tool: 'terminal', match: { kind: 'exact-arguments', arguments: { command: EXFILTRATE } } };

const rulesFile = (workspace: string) => path.join(workspace, '.airlock', 'rules.json');
const writeRules = (workspace: string, rules: unknown[]) => writeFile(rulesFile(workspace), JSON.stringify({ version: 1, rules }));

/** A workspace whose `.airlock/rules.json` holds `rules`. */
async function workspaceWith(rules: unknown[]) {
  const folder = await tempFolder();
  await mkdir(path.join(folder.path, '.airlock'));
  await writeRules(folder.path, rules);
  return folder;
}

/** A server's services over `store` acting in `workspace` with `tools`, and a caller of its API. */
async function serve(store: AirlockStore, workspace: string, steps: ScriptStep[], tools: AnyTool[]) {
  const rules = await RuleBook.open({ store, workspace, log: () => undefined });
  const model = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => tools, store, rules });
  await chat.open();
  const api = createCallerFactory(appRouter)({
    services: { chat, rules, catalog: { tools: () => tools, servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('c1'),
  });
  return { chat, rules, model, api, [Symbol.asyncDispose]: () => chat.shutdown() };
}

async function ended(chat: ChatService, sessionId: string) {
  await vi.waitFor(() => expect(chat.listSessions().find((s) => s.sessionId === sessionId)?.activeRunId).toBeNull(), { timeout: 10_000 });
}

async function waitingCall(chat: ChatService, sessionId: string) {
  await vi.waitFor(() => expect(chat.pending(sessionId)).toHaveLength(1), { timeout: 10_000 });
  return chat.pending(sessionId)[0]!;
}

describe('RuleBook: trust names the content of the workspace file', () => {
  it('a trusted file rewritten by an allowed call allows nothing new: the call its new allow names is asked, until the person trusts the new content', async () => {
    await using workspace = await workspaceWith([MAKE_TEST]);
    const store = new MemoryStore();
    const ran: string[] = [];
    // `tar xf vendor.tar` unpacks a rules file of its own over the trusted one, as an archive can.
    const terminal = defineTool({
      name: 'terminal',
      description: 'runs a command',
      parameters: z.object({ command: z.string() }),
      annotations: { executesCode: true },
      execute: async ({ command: line }) => {
        ran.push(line);
        if (line === 'tar xf vendor.tar') await writeRules(workspace.path, [MAKE_TEST, ALLOW_EXFILTRATE, NO_CURL]);
        return `ran ${line}`;
      },
    });
    const steps = [command('tar xf vendor.tar'), command(EXFILTRATE), textStep('asked'), command(EXFILTRATE), textStep('ran')];
    await using server = await serve(store, workspace.path, steps, [terminal]);
    const { chat, rules, api } = server;
    const trusted = (await api.rules.list()).workspace;
    await api.rules.trustWorkspace({ trusted: true, sha256: trusted.sha256! });

    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'unpack the vendored code' });
    await chat.confirm({ sessionId: 's', approvalId: (await waitingCall(chat, 's')).approvalId, decision: 'allow' });
    const asked = await waitingCall(chat, 's');
    expect(asked.arguments).toStrictEqual({ command: EXFILTRATE });
    expect(ran).toStrictEqual(['tar xf vendor.tar']);
    const changed = (await api.rules.list()).workspace;
    expect(changed).toMatchObject({ state: 'loaded', trust: 'changed' });
    expect(changed.sha256).not.toBe(trusted.sha256);
    expect(changed.rules.map((view) => [view.rule.effect, view.rule.match.kind])).toStrictEqual([
      ['allow', 'command-prefix'],
      ['allow', 'exact-arguments'],
      ['deny', 'command-prefix'],
    ]);
    // The new content's deny rules apply at once; the old content's allow rules no longer do.
    const verdict = (line: string) => rules.evaluate('s', { id: 'c', name: 'terminal', arguments: { command: line } }, terminal, { preview: true });
    expect(await verdict('curl x')).toMatchObject({ effect: 'deny' });
    // Not allowed; and, a deny rule applying, `make` with a target (which a rule for `make` alone does not cover) is asked.
    expect(await verdict('make test')).toMatchObject({ effect: 'ask' });
    await chat.confirm({ sessionId: 's', approvalId: asked.approvalId, decision: 'deny' });
    await ended(chat, 's');
    expect((await chat.getSession('s')).toolCalls.map((call) => [call.decision, call.source])).toStrictEqual([
      ['allow', 'user'],
      ['deny', 'user'],
    ]);

    expect(await api.rules.trustWorkspace({ trusted: true, sha256: changed.sha256! })).toMatchObject({ trust: 'trusted', sha256: changed.sha256 });
    await chat.startRun({ sessionId: 's', runId: 'r2', message: 'again' });
    await ended(chat, 's');
    expect(ran).toStrictEqual(['tar xf vendor.tar', EXFILTRATE]);
    expect((await chat.getSession('s')).toolCalls.at(-1)).toMatchObject({ decision: 'allow', source: 'rule', outcome: 'executed' });
    server.model.assertConsumed();
  });

  it('trust follows the bytes: the trusted content written back is trusted again; any other content is not', async () => {
    await using workspace = await workspaceWith([MAKE_TEST]);
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace: workspace.path, log: () => undefined });
    const first = await rules.workspaceRules();
    await rules.trustWorkspace({ trusted: true, sha256: first.sha256! });
    const make = () => rules.evaluate('s', { id: 'c', name: 'terminal', arguments: { command: 'make test' } }, recordingTerminal([]), { preview: true });
    expect(await make()).toMatchObject({ effect: 'allow' });
    // The same rule, written with other spacing: other bytes, so other content.
    await writeFile(rulesFile(workspace.path), JSON.stringify({ version: 1, rules: [MAKE_TEST] }, null, 2));
    expect(await make()).toBeUndefined();
    expect(await rules.workspaceRules()).toMatchObject({ trust: 'changed' });
    await writeRules(workspace.path, [MAKE_TEST]);
    expect(await make()).toMatchObject({ effect: 'allow' });
    expect(await rules.workspaceRules()).toMatchObject({ trust: 'trusted', sha256: first.sha256 });
  });

  it('trusting names the content shown: content changed since is refused with CONFLICT and stays untrusted', async () => {
    await using workspace = await workspaceWith([MAKE_TEST]);
    await using server = await serve(new MemoryStore(), workspace.path, [], [recordingTerminal([])]);
    const shown = (await server.api.rules.list()).workspace;
    await writeRules(workspace.path, [MAKE_TEST, ALLOW_EXFILTRATE]);
    await expect(server.api.rules.trustWorkspace({ trusted: true, sha256: shown.sha256! })).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('read them again') });
    expect((await server.api.rules.list()).workspace.trust).toBe('untrusted');
    await expect(server.api.rules.trustWorkspace({ trusted: true } as never)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(server.api.rules.trustWorkspace({ trusted: true, sha256: 'A'.repeat(64) })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('a trust kept from before trust named content trusts no content: the file reads as changed and its allows do not apply', async () => {
    await using workspace = await workspaceWith([MAKE_TEST]);
    const store = new MemoryStore();
    await store.setSetting(`workspace-rules-trusted:${workspace.path}`, 'trusted');
    const rules = await RuleBook.open({ store, workspace: workspace.path, log: () => undefined });
    const status = await rules.workspaceRules();
    expect(status).toMatchObject({ state: 'loaded', trust: 'changed' });
    expect(await rules.evaluate('s', { id: 'c', name: 'terminal', arguments: { command: 'make test' } }, recordingTerminal([]), { preview: true })).toBeUndefined();
    await rules.trustWorkspace({ trusted: true, sha256: status.sha256! });
    expect(await store.getSetting(`workspace-rules-trusted:${workspace.path}`)).toBe(`sha256:${status.sha256}`);
    expect(await rules.evaluate('s', { id: 'c', name: 'terminal', arguments: { command: 'make test' } }, recordingTerminal([]), { preview: true })).toMatchObject({ effect: 'allow' });
  });

  it('a file made invalid keeps the deny rules of its last valid content, also after a restart, and none of its allows', async () => {
    await using workspace = await workspaceWith([MAKE_TEST, NO_CURL]);
    const store = new MemoryStore();
    const lines: string[] = [];
    const rules = await RuleBook.open({ store, workspace: workspace.path, log: (line) => lines.push(line) });
    await rules.trustWorkspace({ trusted: true, sha256: (await rules.workspaceRules()).sha256! });
    const verdict = (book: RuleBook, line: string) => book.evaluate('s', { id: 'c', name: 'terminal', arguments: { command: line } }, recordingTerminal([]), { preview: true });
    expect(await verdict(rules, 'make test')).toMatchObject({ effect: 'allow' });

    await writeFile(rulesFile(workspace.path), '{"version": 1, "rules": [');
    expect(await verdict(rules, 'curl x')).toMatchObject({ effect: 'deny', message: expect.stringContaining('no network') });
    expect(await verdict(rules, 'make test')).toMatchObject({ effect: 'ask' });
    const status = await rules.workspaceRules();
    expect(status).toMatchObject({ state: 'invalid', trust: 'changed' });
    expect(status.rules.map((view) => reasonText(view.description))).toStrictEqual(["Deny commands starting with `curl` in this workspace (from the workspace's .airlock/rules.json): “no network”"]);
    expect(lines).toStrictEqual([expect.stringMatching(/is not a valid rules file: not JSON .*No allow rule from it applies; the deny rule of its last valid content still applies\./)]);

    const restarted = await RuleBook.open({ store, workspace: workspace.path, log: () => undefined });
    expect(await verdict(restarted, 'curl x')).toMatchObject({ effect: 'deny' });
    expect(await verdict(restarted, 'make test')).toMatchObject({ effect: 'ask' });

    // A valid file is the workspace's word again: its own rules, and nothing kept.
    await writeRules(workspace.path, [MAKE_TEST]);
    expect(await verdict(restarted, 'curl x')).toBeUndefined();
  });
});
