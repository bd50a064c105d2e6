#!/usr/bin/env node
// Runs the TypeScript server through tsx (Node 20 cannot run .ts itself), passing every argument through.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const tsxPackagePath = require.resolve('tsx/package.json');
const tsxBin = JSON.parse(readFileSync(tsxPackagePath, 'utf8')).bin;
const tsxCli = join(dirname(tsxPackagePath), typeof tsxBin === 'string' ? tsxBin : tsxBin.tsx);
const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));

// Own process group: a terminal's Ctrl-C reaches only this process, which forwards it once. Sharing the group,
// the server would get it twice (from the terminal and relayed) and take the second as "exit without waiting".
const child = spawn(process.execPath, [tsxCli, main, ...process.argv.slice(2)], { stdio: ['ignore', 'inherit', 'inherit'], detached: true });

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on('error', (error) => {
  console.error(`airlock: cannot start tsx: ${error.message}`);
  process.exit(1);
});
child.on('exit', (code) => process.exit(code ?? 1));
