import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
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

// Found in review, with the real programs: under "commands starting with jq" (what "Always allow" on `jq .
// package.json` saves), `jq -n --argfile --indent FILE '$ARGS'` (jq 1.6) and `jq --run-tests FILE` printed a file
// outside the workspace unasked; under a rule for `file`, `file -f FILE` and `file -m FILE README.md` printed its lines
// in errors and warnings.
describe('prefix rules for jq and file, through the real server without the sandbox', () => {
  it('the saved rules run the plain calls unasked and ask about the options that print a file outside', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-printing-rules-'));
    cleanups.push(() => rm(folder, { recursive: true, force: true }));
    const [workspace, dataDir, outside] = [join(folder, 'ws'), join(folder, 'data'), join(folder, 'home')];
    await mkdir(workspace, { recursive: true });
    await mkdir(outside);
    await writeFile(join(workspace, 'package.json'), '{"name":"x"}\n');
    await writeFile(join(workspace, 'README.md'), 'hi\n');
    const secret = `s3cret-${randomBytes(8).toString('hex')}`;
    const credentials = join(outside, '.git-credentials');
    await writeFile(credentials, `https://me:${secret}@example.com\n`);
    const printing = [
      `jq -n --argfile --indent ${credentials} '$ARGS'`,
      `jq --run-tests ${credentials}`,
      `file -f ${credentials}`,
      `file -m ${credentials} README.md`,
    ];
    const fake = await startFakeOpenAIServer();
    cleanups.push(async () => {
      await fake[Symbol.asyncDispose]();
    });
    fake.enqueue(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'jq . package.json' } }] },
      { text: 'one' },
      { toolCalls: [{ name: 'terminal', arguments: { command: 'file README.md' } }] },
      ...printing.map((command) => ({ toolCalls: [{ name: 'terminal', arguments: { command } }] })),
      { text: 'two' },
    );
    const token = randomBytes(16).toString('hex');
    const server = await startServerProcess(['--workspace', workspace, '--data-dir', dataDir, '--model-url', fake.url, '--tool-sandbox', 'none'], { AIRLOCK_TOKEN: token }, cleanups);
    const client = connectClient(server.wsUrl, token);
    cleanups.push(() => client.close());

    const first = watchRun(client, { sessionId: 's-jq', runId: 'run-1', message: 'read package.json' });
    const asked = await first.next('tool-start');
    expect(asked).toMatchObject({ awaitingConfirmation: true, arguments: { command: 'jq . package.json' } });
    await client.trpc.chat.confirmTool.mutate({ sessionId: 's-jq', approvalId: asked.approvalId, decision: 'allow', always: true, scope: 'workspace' });
    expect((await first.ended).reason).toBe('done');
    await client.trpc.rules.add.mutate({ effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['file'], exact: false }, scope: { kind: 'workspace', path: workspace }, source: 'user' });

    const second = watchRun(client, { sessionId: 's-jq2', runId: 'run-2', message: 'again' });
    expect(await second.next('tool-start', (event) => event.arguments.command === 'file README.md')).toMatchObject({ awaitingConfirmation: false });
    expect(await second.next('tool-decision')).toMatchObject({ decision: 'allow', source: 'rule' });
    for (const command of printing) {
      const start = await second.next('tool-start', (event) => event.arguments.command === command);
      expect(start, command).toMatchObject({ awaitingConfirmation: true });
      await client.trpc.chat.confirmTool.mutate({ sessionId: 's-jq2', approvalId: start.approvalId, decision: 'deny' });
      const end = await second.next('tool-end', (event) => event.toolCallId === start.toolCallId);
      expect(JSON.stringify(end.result), command).not.toContain(secret);
    }
    expect((await second.ended).reason).toBe('done');
  }, 120_000);
});
