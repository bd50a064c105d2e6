import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAIServer } from './support/fake-openai-server';
import { startServerProcess } from './support/server-process';
import { connectClient, watchRun } from './support/test-airlock';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a deny rule for rm -rf with "Confirm tool calls" off, through the real server', () => {
  // The probe's lines: each ran unasked and deleted its folder. The loader runs the program a pattern names; ninja
  // runs what a build file fed from printf says, where `\x72` is `r`.
  it.each([
    ['the dynamic loader and a pattern', 'ld.so /bin/r[m] -rf victim'],
    ['the loader by its path', '/lib64/ld-linux-x86-64.so.2 /usr/bin/r[m] -rf victim; ls'],
    ['cmake -E env and a pattern', 'cmake -E env /bin/r? -rf victim'],
    ['an escape fed to ninja', "printf 'rule r\\n command = \\x72m -rf victim\\nbuild x: r\\n' | ninja -f /dev/stdin"],
  ])('%s: the call is put up to the person, naming the rule, and nothing is deleted', async (_name, command) => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-deny-off-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, dataDir] = [join(folder, 'ws'), join(folder, 'data')];
    const victim = join(workspace, 'victim');
    await mkdir(victim, { recursive: true });
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    // A call no rule reads as dangerous first: it runs unasked, so confirmation is off.
    fake.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: 'ls' } }] }, { toolCalls: [{ name: 'terminal', arguments: { command } }] }, { text: 'done' });
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(
      ['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'],
      { AIRLOCK_TOKEN: token },
      cleanups,
    );
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());
    const { rule } = await client.trpc.rules.add.mutate({
      effect: 'deny',
      tool: 'terminal',
      match: { kind: 'command-prefix', tokens: ['rm', '-rf'], exact: false },
      scope: { kind: 'global' },
      source: 'user',
      reason: 'never delete trees',
    });
    const run = watchRun(client, { sessionId: 's', runId: 'run-1', message: 'go', options: { confirmToolCalls: false } });
    expect(await run.next('tool-decision')).toMatchObject({ decision: 'allow', source: 'confirmation-off' });
    const asked = await run.next('tool-start', (event) => event.arguments.command === command);
    expect(asked).toMatchObject({ awaitingConfirmation: true, askedBecause: { ruleId: rule.id } });
    await client.trpc.chat.confirmTool.mutate({ sessionId: 's', approvalId: asked.approvalId, decision: 'deny' });
    expect((await run.ended).reason).toBe('done');
    expect(existsSync(victim)).toBe(true);
  }, 90_000);
});
