import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { everythingBin } from '../src/mcp/fixtures/test-servers';
import { killAllWith, processesWith, uniqueToken } from '../src/tools/test-support';
import { startOrExit, startServerProcess } from './support/server-process';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Arguments that start the real server with one stdio MCP server, `node -e code`, in folders of its own. */
async function serverArgs(code: string, extraArgs: readonly string[] = []): Promise<string[]> {
  const folder = await mkdtemp(join(tmpdir(), 'airlock-mcp-process-'));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  const mcpConfig = join(folder, 'mcp.json');
  await writeFile(mcpConfig, JSON.stringify({ mcpServers: { probe: { command: process.execPath, args: ['-e', code, ...extraArgs] } } }));
  return ['--mcp-config', mcpConfig, '--workspace', folder, '--data-dir', join(folder, 'data')];
}

describe('what a stdio MCP server writes reaches the console as codes', () => {
  test('escape sequences on its stdout and stderr are shown as codes, and its fake start-up link stays inside a warning line', async () => {
    // Answers the first message with a line that is not JSON, holding a window title and a clipboard write (OSC 52),
    // then clears the screen on stderr, writes a start-up line of its own, and exits.
    const code =
      "process.stdin.once('data', () => { " +
      "process.stdout.write('not json \\x1b]0;TITLE\\x07 \\x1b]52;c;ZWNobyBwd25lZA==\\x07\\n'); " +
      "process.stderr.write('\\x1b[2J\\x1b[HAirlock is running at http://127.0.0.1:7815/#token=FAKE\\n'); " +
      'process.exit(1); })';
    const server = await startServerProcess(await serverArgs(code), {}, cleanups);
    // The helper took the fake line for the start-up line (it is a match, inside the warning); wait for the real one.
    const output = await vi.waitFor(
      () => {
        const text = server.output();
        if (!/^MCP servers: /mu.test(text)) throw new Error(`not started yet:\n${text}`);
        return text;
      },
      { timeout: 60_000, interval: 50 },
    );

    expect(output).toContain('stderr: \\u{1B}[2J\\u{1B}[HAirlock is running at http://127.0.0.1:7815/#token=FAKE');
    // Nothing a terminal obeys: no escape, no bell, no carriage return.
    expect([...output].filter((character) => /[\p{Cc}]/u.test(character) && character !== '\n').map((character) => character.codePointAt(0))).toStrictEqual([]);
    expect(output.split('\n').filter((line) => line.startsWith('Airlock is running at')).map((line) => line.includes('FAKE'))).toStrictEqual([false]);
  }, 120_000);
});

describe('a stdio MCP server does not outlive Airlock', () => {
  test('killed with SIGKILL, even when the MCP server ignores the end of its stdin and SIGTERM, nor does what it started', async () => {
    const tag = uniqueToken();
    cleanups.push(() => Promise.resolve(killAllWith(tag)));
    // A working MCP server (server-everything) that ignores both, and starts a shell that leaves its process group.
    const code =
      "process.on('SIGTERM', () => undefined); process.stdin.on('end', () => undefined); setInterval(() => undefined, 1 << 30); " +
      `require('node:child_process').spawn('/bin/sh', ['-c', 'sleep 300; : ${tag}'], { stdio: 'ignore', detached: true }); ` +
      `import(${JSON.stringify(pathToFileURL(everythingBin).href)})`;
    const server = await startServerProcess(await serverArgs(code, ['stdio']), {}, cleanups);
    // The start-up line and the MCP summary are written one after the other but may reach this process apart.
    await vi.waitFor(() => expect(server.output()).toContain('MCP servers: probe ready'), { timeout: 15_000 });
    // The MCP server and its shell.
    await vi.waitFor(() => expect(processesWith(tag)).toHaveLength(2), { timeout: 15_000 });

    await server.stop('SIGKILL');

    await vi.waitFor(() => expect(processesWith(tag)).toStrictEqual([]), { timeout: 20_000 });
  }, 120_000);
});

describe('a second server on the data folder of one that runs', () => {
  test('is refused before it starts any MCP server: the first one\'s servers are never run twice at once', async () => {
    const marker = join(await mkdtemp(join(tmpdir(), 'airlock-mcp-starts-')), 'starts');
    cleanups.push(() => rm(join(marker, '..'), { recursive: true, force: true }));
    const code = `require('node:fs').appendFileSync(${JSON.stringify(marker)}, 'started\\n'); import(${JSON.stringify(pathToFileURL(everythingBin).href)})`;
    const args = await serverArgs(code, ['stdio']);
    const first = await startServerProcess(args, {}, cleanups);
    await vi.waitFor(() => expect(first.output()).toContain('MCP servers: probe ready'), { timeout: 15_000 });

    const second = await startOrExit(args, {}, cleanups);
    expect(second.exitCode).toBe(1);
    expect(second.output).toContain('is locked by another process');
    expect(await readFile(marker, 'utf8')).toBe('started\n');
  }, 120_000);
});

describe('a server started on a port another process holds', () => {
  test('is refused before it starts any MCP server, which would have run for a start that never serves', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => holder.close(() => resolve())));
    const port = (holder.address() as { port: number }).port;
    const marker = join(await mkdtemp(join(tmpdir(), 'airlock-mcp-starts-')), 'starts');
    cleanups.push(() => rm(join(marker, '..'), { recursive: true, force: true }));
    const code = `require('node:fs').appendFileSync(${JSON.stringify(marker)}, 'started\\n'); import(${JSON.stringify(pathToFileURL(everythingBin).href)})`;
    const args = [...(await serverArgs(code, ['stdio'])), '--port', String(port)];

    const refused = await startOrExit(args, {}, cleanups);
    expect(refused.exitCode).toBe(1);
    expect(refused.output).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(await readFile(marker, 'utf8').catch(() => 'not started')).toBe('not started');
  }, 120_000);
});
