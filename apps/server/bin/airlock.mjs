#!/usr/bin/env node
// Starts the server, passing every argument through. Secrets given in the environment are handed over on a pipe
// instead, and the server stops when this launcher dies, since the pipe then closes.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { refuseInspectorSignal } from '@airlock/core/inspector-signal';

// Node opens its inspector to any same-user process that sends SIGUSR1; this process may hold the secrets below.
refuseInspectorSignal({ notice: 'airlock: received SIGUSR1: ignored, the inspector stays closed (NODE_OPTIONS=--inspect-port=… to debug)' });

const SECRETS = ['AIRLOCK_TOKEN', 'AIRLOCK_API_KEY', 'AIRLOCK_DATABASE_URL'];
const LINK_FD = 3;

/**
 * The command that runs the server: the build in dist/ (`pnpm --filter @airlock/server build`), plain JavaScript;
 * without one, or with one older than a source file (development), the TypeScript entry point loaded through tsx
 * (Node 20 cannot run .ts itself).
 */
function serverCommand() {
  const built = fileURLToPath(new URL('../dist/main.js', import.meta.url));
  if (existsSync(built) && newestSource() < statSync(built).mtimeMs) return [process.execPath, '--enable-source-maps', built];
  const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return [process.execPath, '--import', tsxLoader, fileURLToPath(new URL('../src/main.ts', import.meta.url))];
}

// The server's environment has no secret in it: a tool that reads /proc/<server>/environ finds none. This
// process's own environment still has them (the kernel keeps a process's initial environment): the server warns.
const env = { ...process.env, AIRLOCK_LAUNCHER_FD: String(LINK_FD) };
const secrets = {};
for (const name of SECRETS) {
  if (env[name] !== undefined && env[name] !== '') secrets[name] = env[name];
  delete env[name];
}

/** When a source bundled into dist/main.js last changed: the server's and the workspace packages' (a few ms). */
function newestSource() {
  const roots = ['../src', '../../../packages/core/src', '../../../packages/api/src', '../package.json'];
  let newest = 0;
  for (const root of roots) {
    const path = fileURLToPath(new URL(root, import.meta.url));
    if (!existsSync(path)) continue;
    const files = statSync(path).isDirectory() ? readdirSync(path, { recursive: true }).map((name) => join(path, String(name))) : [path];
    for (const file of files) newest = Math.max(newest, statSync(file).mtimeMs);
  }
  return newest;
}

const [command, ...args] = serverCommand();
// Own process group: a terminal's Ctrl-C reaches only this process, which forwards it once. Sharing the group,
// the server would get it twice (from the terminal and relayed) and take the second as "exit without waiting".
const child = spawn(command, [...args, ...process.argv.slice(2)], { stdio: ['ignore', 'inherit', 'inherit', 'pipe'], env, detached: true });
// Written once and never closed: the server sees the end of this pipe only when this process is gone.
child.stdio[LINK_FD].on('error', () => undefined);
child.stdio[LINK_FD].write(`${JSON.stringify(secrets)}\n`);

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
child.on('error', (error) => {
  console.error(`airlock: cannot start the server: ${error.message}`);
  process.exit(1);
});
child.on('exit', (code) => process.exit(code ?? 1));
