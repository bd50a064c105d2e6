import { build } from 'esbuild';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startFakeOpenAIServer } from './support/fake-openai-server';
import { recordingTool, startTestAirlock } from './support/test-airlock';

const EXAMPLE = fileURLToPath(new URL('../../../examples/auto-allow-read-only.ts', import.meta.url));
const OWN_MODULES = fileURLToPath(new URL('../node_modules', import.meta.url));

type Msg = { role: string; content?: unknown };
const lastMessage = (body: Record<string, unknown> | undefined) => (body?.messages as Msg[] | undefined)?.at(-1);

/** How the example asks about a call on stderr. */
const QUESTION = 'allow? y = yes, anything else = no';

/**
 * Bundles the example (its packages resolved from this package, as a workspace install would) and runs it, giving
 * each answer once its question is shown: the example takes no line typed before a call is asked about.
 */
async function runExample(dir: string, env: Record<string, string>, args: string[], answers: readonly string[]) {
  const outfile = join(dir, 'example.mjs');
  await build({
    entryPoints: [EXAMPLE],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    nodePaths: [OWN_MODULES], external: ['bufferutil', 'utf-8-validate'],
    // ws is CommonJS: its require() calls of Node's modules need a require in the ES module bundle.
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    logLevel: 'silent',
  });
  const child = spawn(process.execPath, [outfile, ...args], { env: { ...process.env, AIRLOCK_DECISION_GUARD_MS: '0', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let answered = 0;
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    const asked = stderr.split(QUESTION).length - 1;
    for (; answered < asked && answered < answers.length; answered++) child.stdin.write(`${answers[answered]}\n`);
    if (answered === answers.length) child.stdin.end();
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

describe('examples/auto-allow-read-only.ts', () => {
  it('allows the read-only call by itself, asks on stdin for the rest, and writes the ledger', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'airlock-example-'));
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    const terminal = recordingTool('terminal', { executesCode: true });
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool, terminal.tool] });
    try {
      fake.enqueue(
        { toolCalls: [{ name: 'echo', arguments: { text: 'look' } }] },
        { toolCalls: [{ name: 'terminal', arguments: { text: 'rm -rf build' } }] },
        { toolCalls: [{ name: 'terminal', arguments: { text: 'ls' } }] },
        { text: 'Listed.' },
      );
      const link = `${airlock.server.url}/#token=${encodeURIComponent(airlock.server.token)}`;
      const { code, stdout, stderr } = await runExample(dir, { AIRLOCK_URL: link }, ['--session', 's-example', 'tidy up'], ['keep the build folder', 'y']);

      expect(code, stderr).toBe(0);
      const ledger = stdout.trim().split('\n').map((line): unknown => JSON.parse(line));
      expect(ledger).toMatchObject([
        { sessionId: 's-example', toolName: 'echo', arguments: { text: 'look' }, decision: 'allow', by: 'read-only rule', status: 'resolved' },
        { toolName: 'terminal', arguments: { text: 'rm -rf build' }, decision: 'deny', by: 'person', reason: 'keep the build folder', status: 'resolved' },
        { toolName: 'terminal', arguments: { text: 'ls' }, decision: 'allow', by: 'person', status: 'resolved' },
      ]);
      expect(echo.calls).toStrictEqual(['look']);
      expect(terminal.calls).toStrictEqual(['ls']);
      expect(String(lastMessage(fake.requests[2])?.content)).toContain('keep the build folder');
      expect(stderr).toContain('Listed.');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
