// Start-up time (launch → /healthz answers) and idle RSS of the server process, through the launcher as `npm start`
// runs it. Run: node apps/server/bench/start-up.mjs [runs]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const LAUNCHER = fileURLToPath(new URL('../bin/airlock.mjs', import.meta.url));
const runs = Number(process.argv[2] ?? 5);
const port = 7790;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
const children = (pid: number) => readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);

async function once() {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-start-up-'));
  const started = performance.now();
  const launcher = spawn(process.execPath, [LAUNCHER, '--port', String(port), '--workspace', dir, '--data-dir', join(dir, 'data')], {
    env: { ...process.env, AIRLOCK_TOKEN: 'start-up-bench-token-0123456789abcdef' },
    stdio: 'ignore',
  });
  let ready = 0;
  while (ready === 0) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) ready = performance.now() - started;
    } catch {
      await sleep(5);
    }
  }
  await sleep(3_000);
  const [server] = children(launcher.pid!);
  const rss = rssKiB(server!);
  const exited = new Promise((resolve) => launcher.once('exit', resolve));
  launcher.kill('SIGTERM');
  await exited;
  rmSync(dir, { recursive: true, force: true });
  return { ready, rss };
}

const results: { ready: number; rss: number }[] = [];
for (let i = 0; i < runs; i++) results.push(await once());
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
console.log(`start-up (launch → /healthz), ms: ${results.map((r) => r.ready.toFixed(0)).join(', ')}; median ${median(results.map((r) => r.ready)).toFixed(0)}`);
console.log(`idle RSS of the server process after 3 s, MiB: ${results.map((r) => (r.rss / 1024).toFixed(1)).join(', ')}; median ${(median(results.map((r) => r.rss)) / 1024).toFixed(1)}`);
