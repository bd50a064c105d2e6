import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { probeBubblewrap } from '../src/tools/sandbox/probe-bubblewrap';
import { startFakeOpenAIServer } from './support/fake-openai-server';
import { startServerProcess } from './support/server-process';
import { connectClient, watchRun } from './support/test-airlock';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sandboxes = (await probeBubblewrap(true)).available ? ['none', 'bubblewrap'] : ['none'];

/**
 * A first call, which the person allows, writes a Git config that runs a program; the second, `command`, is judged
 * under rules that allow `cd` and `git status`: it must be asked about, and its program must not run. `home`: the
 * workspace itself, or a folder beside it whose `.gitconfig` includes the workspace's `shared.gitconfig`.
 */
async function plantedThenRun(sandbox: string, plant: (marker: string) => string, command: string, home: 'workspace' | 'includes' | 'own') {
  const folder = await mkdtemp(join(tmpdir(), 'airlock-git-directories-'));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  const workspace = join(folder, 'workspace');
  mkdirSync(workspace);
  execFileSync('git', ['init', '-q'], { cwd: workspace });
  const marker = join(workspace, 'RAN');
  const planting = plant(marker);
  const fake = await startFakeOpenAIServer();
  cleanups.push(async () => {
    await fake[Symbol.asyncDispose]();
  });
  fake.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: planting } }] }, { toolCalls: [{ name: 'terminal', arguments: { command } }] }, { text: 'done' });
  const token = randomBytes(16).toString('hex');
  const env: Record<string, string> = { AIRLOCK_TOKEN: token };
  if (home === 'workspace') env.HOME = workspace;
  if (home === 'includes') {
    env.HOME = join(folder, 'home');
    mkdirSync(env.HOME);
    writeFileSync(join(env.HOME, '.gitconfig'), `[include]\n\tpath = ${join(workspace, 'shared.gitconfig')}\n`);
  }
  // A workspace that is the home folder is refused unless asked for.
  const asked = home === 'workspace' ? ['--allow-home-workspace'] : [];
  const server = await startServerProcess(['--workspace', workspace, ...asked, '--data-dir', join(folder, 'data'), '--model-url', fake.url, '--tool-sandbox', sandbox], env, cleanups);
  const client = connectClient(server.wsUrl, token);
  cleanups.push(() => client.close());
  for (const tokens of [['cd'], ['git', 'status']]) {
    await client.trpc.rules.add.mutate({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens, exact: false }, scope: { kind: 'global' }, source: 'user' });
  }
  const run = watchRun(client, { sessionId: 's', runId: 'run-1', message: 'go' });
  const first = await run.next('tool-start', (event) => event.arguments.command === planting);
  await client.trpc.chat.confirmTool.mutate({ sessionId: 's', approvalId: first.approvalId, decision: 'allow' });
  const second = await run.next('tool-start', (event) => event.arguments.command === command);
  if (second.awaitingConfirmation) await client.trpc.chat.confirmTool.mutate({ sessionId: 's', approvalId: second.approvalId, decision: 'deny' });
  await run.ended;
  return { asked: second.awaitingConfirmation, ran: existsSync(marker) };
}

const script = (file: string, marker: string) => `printf '#!/bin/sh\\ntouch ${marker}\\nexit 1\\n' > ${file} && chmod +x ${file}`;

for (const sandbox of sandboxes) {
  it(`[${sandbox}] a repository a call makes inside the workspace's .git: git started there runs its core.fsmonitor, so it is asked`, async () => {
    const plant = (marker: string) => `git init -q .git/x && ${script('.git/x/.git/m.sh', marker)} && git -C .git/x config core.fsmonitor "$PWD/.git/x/.git/m.sh"`;
    expect(await plantedThenRun(sandbox, plant, 'cd .git/x && git status', 'own')).toStrictEqual({ asked: true, ran: false });
  }, 90_000);

  it(`[${sandbox}] a workspace that is the home folder: a call writes ~/.gitconfig with core.fsmonitor, so git status is asked`, async () => {
    const plant = (marker: string) => `${script('m.sh', marker)} && printf '[core]\\n\\tfsmonitor = %s/m.sh\\n' "$PWD" > .gitconfig`;
    expect(await plantedThenRun(sandbox, plant, 'git status', 'workspace')).toStrictEqual({ asked: true, ran: false });
  }, 90_000);

  it(`[${sandbox}] a workspace the person's ~/.gitconfig includes a file of: a call writes core.fsmonitor there, so git status is asked`, async () => {
    const plant = (marker: string) => `${script('m.sh', marker)} && printf '[core]\\n\\tfsmonitor = %s/m.sh\\n' "$PWD" > shared.gitconfig`;
    expect(await plantedThenRun(sandbox, plant, 'git status', 'includes')).toStrictEqual({ asked: true, ran: false });
  }, 90_000);
}
