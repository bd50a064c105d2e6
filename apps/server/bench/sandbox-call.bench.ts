// A sandboxed terminal call of `true`, in-process through the built-in terminal tool: what starting bubblewrap costs
// a call, with the namespace around it that bounds its inotify limits and the files of its /tmp and /dev/shm (as
// the server starts calls where that namespace can be made) and without it (as where it cannot). The two take turns,
// call by call, so a change in the machine's load falls on both alike. Not part of `pnpm bench`.
// Run: npx tsx bench/sandbox-call.bench.ts [calls]   (default 200 each)
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBuiltinTools } from '../src/tools';
import { probeBubblewrap } from '../src/tools/sandbox/probe-bubblewrap';
import type { ToolSandbox } from '../src/tools/sandbox/tool-sandbox';

const calls = Number(process.argv[2] ?? 200);
const probe = await probeBubblewrap(true);
if (!probe.available) throw new Error(`bubblewrap cannot start here: ${probe.reason}`);
if (!('unshare' in probe)) throw new Error(`the namespace around bubblewrap cannot be made here: ${probe.unbounded}`);
const root = mkdtempSync(join(tmpdir(), 'airlock-sandbox-bench-'));
const workspace = join(root, 'workspace');
mkdirSync(workspace);
const base = { kind: 'bubblewrap', bwrap: probe.bwrap, network: true } as const;
const designs: { name: string; sandbox: ToolSandbox }[] = [
  { name: 'bubblewrap in its namespace (the shipped way)', sandbox: { ...base, unshare: probe.unshare } },
  { name: 'bubblewrap alone (where the namespace cannot be made)', sandbox: { ...base, unbounded: 'bench' } },
];
const runs = designs.map(({ name, sandbox }) => {
  const terminal = createBuiltinTools({ workspace, sandbox }).find((tool) => tool.name === 'terminal')!;
  return { name, terminal, times: [] as number[] };
});

console.log(`node ${process.version}, load average ${loadavg()[0]!.toFixed(2)} at the start, ${calls} calls each after 5 of warm-up`);
for (let i = -5; i < calls; i++) {
  for (const run of runs) {
    const started = performance.now();
    const result = await run.terminal.execute({ command: 'true' }, { signal: new AbortController().signal, timeoutMs: 60_000, sessionId: 'bench' });
    if (i >= 0) run.times.push(performance.now() - started);
    if (!JSON.stringify(result).includes('exit code: 0')) throw new Error(`${run.name}: the call did not run: ${JSON.stringify(result).slice(0, 300)}`);
  }
}
for (const run of runs) {
  run.times.sort((a, b) => a - b);
  const at = (p: number) => run.times[Math.min(run.times.length - 1, Math.floor((p / 100) * run.times.length))]!.toFixed(1);
  console.log(`${run.name}: p50 ${at(50)} ms, p90 ${at(90)} ms`);
}
rmSync(root, { recursive: true, force: true });
