// Start-up time (launch → /healthz answers) and idle RSS of the server process, as `npm start` runs it: the build
// (made first, as start.sh does) started by the launcher, shipped settings, no model configured (the launcher's
// probe of local model servers finds none and the demo model answers), a fresh data folder and workspace.
// Run: pnpm --filter @airlock/server exec tsx bench/start-up.ts [runs]   (default 5)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildServer } from './support/shipped-server';

const LAUNCHER = fileURLToPath(new URL('../bin/airlock.mjs', import.meta.url));
const BUILT = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const runs = Number(process.argv[2] ?? (process.env.AIRLOCK_BENCH_QUICK === '1' ? 1 : 5));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
const children = (pid: number) => readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);

async function once() {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-start-up-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'start-up-bench-token-0123456789abcdef', { mode: 0o600 });
  const started = performance.now();
  const launcher = spawn(process.execPath, [LAUNCHER, '--port', '0', '--workspace', dir, '--data-dir', join(dir, 'data'), '--token-file', tokenFile], {
    env: Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AIRLOCK_'))),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => launcher.once('exit', resolve));
  // The port is printed once the server listens; /healthz answering is the moment it serves.
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    launcher.stdout.on('data', (data: Buffer) => {
      out += data.toString();
      const found = /Airlock is running at http:\/\/[^:\s]+:(\d+)\//.exec(out);
      if (found) resolve(Number(found[1]));
    });
    void exited.then(() => reject(new Error(`the server exited:\n${out}`)));
  });
  let ready = 0;
  while (ready === 0) {
    if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) ready = performance.now() - started;
  }
  const [server] = children(launcher.pid!);
  const command = readFileSync(`/proc/${server}/cmdline`, 'utf8').split('\0');
  if (!command.includes(BUILT)) throw new Error(`the server does not run ${BUILT} but: ${command.join(' ')}`);
  await sleep(3_000);
  const rss = rssKiB(server!);
  launcher.kill('SIGTERM');
  await exited;
  rmSync(dir, { recursive: true, force: true });
  return { ready, rss };
}

console.log(`Machine: ${cpus().length} cores, Node ${process.version}, load average ${loadavg().map((v) => v.toFixed(2)).join(' ')}.`);
buildServer();
const results: { ready: number; rss: number }[] = [];
for (let i = 0; i < runs; i++) results.push(await once());
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
console.log(`start-up (launch → /healthz), ms: ${results.map((r) => r.ready.toFixed(0)).join(', ')}; median ${median(results.map((r) => r.ready)).toFixed(0)}`);
console.log(`idle RSS of the server process after 3 s, MiB: ${results.map((r) => (r.rss / 1024).toFixed(1)).join(', ')}; median ${(median(results.map((r) => r.rss)) / 1024).toFixed(1)}`);
