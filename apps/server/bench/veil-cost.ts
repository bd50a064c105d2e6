// What veiling the home folder costs a sandboxed call (not part of `pnpm bench`): a terminal call of `true` in the
// bubblewrap sandbox, with a home folder of N entries, with and without a shell history in it (with one, the home
// folder is veiled: an empty tmpfs with its N other entries bound back, see src/tools/sandbox/veiled-folders.ts).
// With a third argument, the home folder also holds a ~/.docker of that many folders, each holding the fourth
// argument's number of files (Docker's contexts), which each call veils folder by folder or covers whole (see
// src/tools/sandbox/live-sockets.ts).
//   tsx bench/veil-cost.ts [entries] [calls] [docker folders] [files in each]     defaults 60, 200, 0, 0
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createBuiltinTools } from '../src/tools/index';

const entries = Number(process.argv[2] ?? 60);
const calls = Number(process.argv[3] ?? 200);
const dockerFolders = Number(process.argv[4] ?? 0);
const dockerFiles = Number(process.argv[5] ?? 0);
// Outside /tmp, which the sandbox has its own of: a home folder as the server's is.
const home = mkdtempSync('/var/tmp/airlock-veil-home-');
const workspace = mkdtempSync(path.join(os.tmpdir(), 'airlock-veil-workspace-'));
for (let i = 0; i < entries; i++) {
  const entry = path.join(home, `.entry${i}`);
  if (i % 2 === 0) mkdirSync(entry);
  else writeFileSync(entry, '');
}
for (let i = 0; i < dockerFolders; i++) {
  const folder = path.join(home, '.docker', 'contexts', `context${i}`);
  mkdirSync(folder, { recursive: true });
  for (let j = 0; j < dockerFiles; j++) writeFileSync(path.join(folder, `file${j}`), '');
}
const terminal = createBuiltinTools({ workspace, sandbox: 'bubblewrap', env: { PATH: process.env.PATH ?? '', HOME: home } }).find((tool) => tool.name === 'terminal');
if (terminal === undefined) throw new Error('no terminal tool');

async function measure(): Promise<{ p50: number; p90: number }> {
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    const result = await terminal!.execute({ command: 'true' }, { sessionId: 'bench', callId: `call-${i}`, signal: new AbortController().signal } as never);
    if (typeof result === 'string' || result.isError) throw new Error(`the call failed: ${JSON.stringify(result)}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(calls / 2)]!, p90: times[Math.floor(calls * 0.9)]! };
}

console.log(`Machine: ${os.cpus().length} cores, load average ${os.loadavg().map((load) => load.toFixed(2)).join(' ')} at the start.`);
console.log(`A terminal call of \`true\` in the bubblewrap sandbox, home folder of ${entries} entries${dockerFolders > 0 ? ` and a ~/.docker of ${dockerFolders} folders of ${dockerFiles} files` : ''}, ${calls} calls each, taking turns twice:`);
await measure(); // warm-up
for (let round = 1; round <= 2; round++) {
  rmSync(path.join(home, '.bash_history'), { force: true });
  const plain = await measure();
  writeFileSync(path.join(home, '.bash_history'), 'a line\n');
  const veiled = await measure();
  console.log(`  round ${round}: not veiled p50 ${plain.p50.toFixed(2)} ms, p90 ${plain.p90.toFixed(2)} ms; veiled p50 ${veiled.p50.toFixed(2)} ms, p90 ${veiled.p90.toFixed(2)} ms`);
}
rmSync(home, { recursive: true, force: true });
rmSync(workspace, { recursive: true, force: true });
