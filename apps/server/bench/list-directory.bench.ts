// The built-in list_directory alone, in-process, on an empty folder: the tool both designs of the round-trip bench
// run, with its checks (the descriptor's proof, the hidden paths, the browsers' folders). Not part of `pnpm bench`.
// Run: npx tsx bench/list-directory.bench.ts [calls]   (default 3,000; sandbox none, as the seed design's process)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBuiltinTools } from '../src/tools';

const calls = Number(process.argv[2] ?? 3_000);
const root = mkdtempSync(join(tmpdir(), 'airlock-list-bench-'));
const workspace = join(root, 'workspace');
const dataDir = join(root, 'data');
mkdirSync(workspace);
mkdirSync(dataDir);
const tokenFile = join(root, 'token');
writeFileSync(tokenFile, 'token', { mode: 0o600 });
// The server's own hidden paths, as it gives them (its data folder, the token file, a key file not made).
const tools = createBuiltinTools({ workspace, sandbox: 'none', hiddenPaths: [dataDir, tokenFile, join(root, 'key')] });
const tool = tools.find((candidate) => candidate.name === 'list_directory')!;

const times: number[] = [];
const cpuBefore = process.cpuUsage();
for (let i = 0; i < calls; i++) {
  const started = performance.now();
  await tool.execute({ path: '.' }, { signal: new AbortController().signal, timeoutMs: 60_000, sessionId: 'bench' });
  times.push(performance.now() - started);
}
const cpu = process.cpuUsage(cpuBefore);
times.sort((a, b) => a - b);
const at = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))]!.toFixed(3);
console.log(`list_directory, empty folder, ${calls} calls: p50 ${at(50)} ms, p90 ${at(90)} ms; CPU per call (all threads) ${((cpu.user + cpu.system) / calls).toFixed(0)} µs`);
rmSync(root, { recursive: true, force: true });
