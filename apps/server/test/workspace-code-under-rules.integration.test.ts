import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
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

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', ...args], { cwd });

/** A workspace repository whose commit holds `nested`, a repository of its own (a gitlink), and the file a planted program would make. */
function repositoryWithNested(workspace: string): { nested: string; marker: string } {
  mkdirSync(workspace);
  git(workspace, 'init', '-q');
  git(workspace, 'commit', '-q', '--allow-empty', '-m', 'init');
  const nested = join(workspace, 'nested');
  mkdirSync(nested);
  git(nested, 'init', '-q');
  writeFileSync(join(nested, 'f'), 'hi\n');
  git(nested, 'add', 'f');
  git(nested, 'commit', '-q', '-m', 'n');
  git(workspace, 'add', 'nested');
  git(workspace, 'commit', '-q', '-m', 'add nested');
  return { nested, marker: join(workspace, 'PWNED') };
}

/** A program that makes `marker`, for git to run as a core.fsmonitor. */
function plantedProgram(file: string, marker: string): void {
  writeFileSync(file, `#!/bin/sh\ntouch ${marker}\nexit 1\n`);
  chmodSync(file, 0o755);
}

/** Runs `command` through the real server under allow rules for `rules`' words, and expects the call put up to the person, who denies it. */
async function expectAsked(workspace: string, command: string, rules: { tokens: string[]; exact?: boolean }[]): Promise<void> {
  const fake = await startFakeOpenAIServer();
  cleanups.push(async () => {
    await fake[Symbol.asyncDispose]();
  });
  fake.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command } }] }, { text: 'done' });
  const token = randomBytes(16).toString('hex');
  const dataDir = join(workspace, '..', 'data');
  const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
  const client = connectClient(server.wsUrl, token);
  cleanups.push(() => client.close());
  for (const { tokens, exact = false } of rules) {
    await client.trpc.rules.add.mutate({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens, exact }, scope: { kind: 'global' }, source: 'user' });
  }
  const run = watchRun(client, { sessionId: 's', runId: 'run-1', message: 'go' });
  const asked = await run.next('tool-start', (event) => event.arguments.command === command);
  expect(asked).toMatchObject({ awaitingConfirmation: true });
  await client.trpc.chat.confirmTool.mutate({ sessionId: 's', approvalId: asked.approvalId, decision: 'deny' });
  expect((await run.ended).reason).toBe('done');
}

describe('code a call may have put in the workspace, which a call a rule names would run, through the real server', () => {
  it('git status in a repository nested in the workspace whose own .git/config sets core.fsmonitor is asked about', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-nested-git-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const workspace = join(folder, 'ws');
    const { nested, marker } = repositoryWithNested(workspace);
    plantedProgram(join(nested, '.git', 'm.sh'), marker);
    git(nested, 'config', 'core.fsmonitor', join(nested, '.git', 'm.sh'));
    await expectAsked(workspace, 'cd nested && git status', [{ tokens: ['cd'] }, { tokens: ['git', 'status'] }]);
    expect(existsSync(marker)).toBe(false);
  }, 90_000);

  it('git status after a command that copies a Git directory into .git/modules, not there before, is asked about', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-nested-git-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const workspace = join(folder, 'ws');
    const { nested, marker } = repositoryWithNested(workspace);
    // An earlier call left a Git directory at evil/nested and a gitfile nested/.git naming .git/modules/nested.
    mkdirSync(join(workspace, 'evil'));
    renameSync(join(nested, '.git'), join(workspace, 'evil', 'nested'));
    writeFileSync(join(nested, '.git'), 'gitdir: ../.git/modules/nested\n');
    plantedProgram(join(workspace, 'evil', 'nested', 'm.sh'), marker);
    const config = join(workspace, 'evil', 'nested', 'config');
    execFileSync('git', ['config', '-f', config, 'core.worktree', '../../../nested']);
    execFileSync('git', ['config', '-f', config, 'core.fsmonitor', join(workspace, '.git', 'modules', 'nested', 'm.sh')]);
    await expectAsked(workspace, 'cp -r evil .git/modules && git status', [{ tokens: ['cp'] }, { tokens: ['git', 'status'] }]);
    expect(existsSync(marker)).toBe(false);
  }, 90_000);

  it('python3 -m pytest under an exact rule, with a pluggy.py in the folder (pytest imports pluggy), is asked about', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-python-import-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const workspace = join(folder, 'ws');
    mkdirSync(workspace);
    const marker = join(workspace, 'PWNED');
    writeFileSync(join(workspace, 'pluggy.py'), `open(${JSON.stringify(marker)}, 'w').write('x')\n`);
    await expectAsked(workspace, 'python3 -m pytest --version', [{ tokens: ['python3', '-m', 'pytest', '--version'], exact: true }]);
    expect(existsSync(marker)).toBe(false);
  }, 90_000);
});
