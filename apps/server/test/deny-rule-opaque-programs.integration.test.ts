import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAIServer } from './support/fake-openai-server';
import { startServerProcess } from './support/server-process';
import { connectClient, watchRun } from './support/test-airlock';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `rm -rf victim`, base64: what a pipe feeds the program, which no word of the line shows. */
const RM_VICTIM = 'cm0gLXJmIHZpY3RpbQ==';
/** A program no table knows, put on the server's PATH: it runs what its input says with sh. */
const UNKNOWN_READER = 'feed-runner';

function installed(program: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;
}

// Each ran unasked and deleted its folder with a deny rule for `rm -rf` and confirmation off.
const cases: [name: string, program: string, command: string][] = [
  ['an unknown program running what a pipe feeds it', UNKNOWN_READER, `echo ${RM_VICTIM} | base64 -d | ${UNKNOWN_READER}`],
  ['an unknown program given sh -c', UNKNOWN_READER, `${UNKNOWN_READER} sh -c 'x=r; \${x}m -rf victim'`],
  ['erl reading a piped line', 'erl', 'echo b3M6Y21kKCJybSAtcmYgdmljdGltIiksIGhhbHQoKS4= | base64 -d | erl'],
  ['erl -eval', 'erl', `erl -noshell -eval 'os:cmd([114,109]++" -rf victim"), halt().'`],
  ['fakeroot-sysv reading a piped line', 'fakeroot-sysv', `echo ${RM_VICTIM} | base64 -d | fakeroot-sysv`],
  ['fakeroot-sysv running sh -c', 'fakeroot-sysv', "fakeroot-sysv -- sh -c 'x=r; ${x}m -rf victim'"],
  ['capsh -- reading a piped line', 'capsh', `echo ${RM_VICTIM} | base64 -d | capsh --`],
  ['socat running a SYSTEM: address', 'socat', "socat /dev/null 'SYSTEM:x=r; ${x}m -rf victim'"],
  ['socat running an exec: address', 'socat', "socat - 'exec:find victim -delete'"],
  ['gio launching a desktop file', 'gio', 'gio launch evil.desktop'],
  ['make running a Makefile a call wrote', 'make', 'make'],
];
const present = cases.filter(([, program]) => program === UNKNOWN_READER || installed(program));
const missing = cases.filter((entry) => !present.includes(entry)).map(([name, program]): [string, string] => [name, program]);

describe('a deny rule for rm -rf with "Confirm tool calls" off, through the real server: programs no table knows', () => {
  it.each(present)('%s: the call is put up to the person, naming the rule, and nothing is deleted', async (_name, _program, command) => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-deny-opaque-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, dataDir, bin] = [join(folder, 'ws'), join(folder, 'data'), join(folder, 'bin')];
    const victim = join(workspace, 'victim');
    await mkdir(victim, { recursive: true });
    await mkdir(bin);
    // Files an earlier call may have written, which the line only names (or not even that: make's Makefile).
    await writeFile(join(workspace, 'evil.desktop'), `[Desktop Entry]\nType=Application\nName=x\nExec=rm -rf ${victim}\nTerminal=false\n`);
    await writeFile(join(workspace, 'Makefile'), 'all:\n\tx=r; $${x}m -rf victim\n');
    await writeFile(join(bin, UNKNOWN_READER), '#!/bin/sh\nif [ "$#" -gt 0 ]; then exec "$@"; fi\nexec sh\n');
    await chmod(join(bin, UNKNOWN_READER), 0o755);
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    // A call no rule reads as dangerous first: it runs unasked, so confirmation is off.
    fake.enqueue({ toolCalls: [{ name: 'terminal', arguments: { command: 'ls' } }] }, { toolCalls: [{ name: 'terminal', arguments: { command } }] }, { text: 'done' });
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(
      ['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'],
      { AIRLOCK_TOKEN: token, PATH: `${bin}${delimiter}${process.env.PATH ?? ''}` },
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

  // A line whose program this machine lacks cannot run here; the unit tests judge it all the same.
  it.skipIf(missing.length === 0).each(missing)('%s: skipped, `%s` is not installed here', () => {});
});
