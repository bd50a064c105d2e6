import { ChatService } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel } from '@airlock/core/testing';
import { execFile } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config';
import { startServer } from '../src/start-server';
import { tempDir } from './support/temp-dir';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const TSX_LOADER = new URL('../node_modules/tsx/dist/esm/index.mjs', import.meta.url).href;

/** Runs the real server with `args` in `cwd` and returns what it wrote to stderr once it exits. */
function runServer(args: readonly string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', TSX_LOADER, MAIN, '--port', '0', ...args],
      { cwd, env: { PATH: process.env.PATH, HOME: cwd }, timeout: 60_000 },
      (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
    );
  });
}

describe('errors found after loading the config name what the person wrote', () => {
  it('a bad MCP file given with --mcp-config through a link: the flag and the path given, not the target nor its content', async () => {
    await using dir = await tempDir('airlock-config-sources-');
    await writeFile(join(dir.path, 'secret.txt'), 'root:x:0:0:hunter2\n');
    await symlink(join(dir.path, 'secret.txt'), join(dir.path, 'mcp-bad.json'));

    // The workspace a folder of its own: the server's HOME is `dir`, and a workspace holding the home folder is refused.
    await mkdir(join(dir.path, 'ws'));
    const { code, stderr } = await runServer(['--mcp-config', 'mcp-bad.json', '--workspace', join(dir.path, 'ws'), '--data-dir', join(dir.path, 'data')], dir.path);

    expect(code).toBe(1);
    expect(stderr).toContain(`airlock: --mcp-config: invalid MCP config ${join(dir.path, 'mcp-bad.json')}: not valid JSON (expected a value at line 1, column 1)\n`);
    expect(stderr).not.toContain('secret.txt');
    expect(stderr).not.toContain('hunter2');
  }, 60_000);

  it('an MCP file that starts with a byte order mark, as some editors save it: the mark named, not "expected a value"', async () => {
    await using dir = await tempDir('airlock-config-sources-');
    await writeFile(join(dir.path, 'mcp.json'), '\uFEFF{"mcpServers": {}}\n');
    await mkdir(join(dir.path, 'ws'));

    const { code, stderr } = await runServer(['--mcp-config', 'mcp.json', '--workspace', join(dir.path, 'ws'), '--data-dir', join(dir.path, 'data')], dir.path);

    expect(code).toBe(1);
    expect(stderr).toContain(
      `airlock: --mcp-config: invalid MCP config ${join(dir.path, 'mcp.json')}: starts with a byte order mark (U+FEFF), which JSON does not allow: save the file as UTF-8 without one\n`,
    );
  }, 60_000);

  it('an MCP header value no request can carry (a line break): refused naming the header, its value never shown', async () => {
    await using dir = await tempDir('airlock-config-sources-');
    const headers = { Authorization: 'Bearer sk-first-part\nX-Other: sk-second-part' };
    await writeFile(join(dir.path, 'mcp.json'), JSON.stringify({ mcpServers: { remote: { url: 'http://127.0.0.1:9/mcp', headers } } }));
    await mkdir(join(dir.path, 'ws'));

    const { code, stderr } = await runServer(['--mcp-config', 'mcp.json', '--workspace', join(dir.path, 'ws'), '--data-dir', join(dir.path, 'data')], dir.path);

    expect(code).toBe(1);
    expect(stderr).toContain(
      `airlock: --mcp-config: invalid MCP config ${join(dir.path, 'mcp.json')}: server "remote", field "mcpServers.remote.headers.Authorization": not a valid HTTP header value (a line break, a NUL or a character past U+00FF)\n`,
    );
    expect(stderr).not.toContain('first-part');
  }, 60_000);

  it.each([
    ['an environment value', { command: '/bin/true', env: { API_KEY: 'sk-first-part\u0000x' } }, 'mcpServers.local.env.API_KEY'],
    ['an argument', { command: '/bin/true', args: ['--key=sk-first-part\u0000x'] }, 'mcpServers.local.args.0'],
    ['the command', { command: '/bin/true\u0000sk-first-part' }, 'mcpServers.local.command'],
  ])('a NUL in %s of a stdio MCP server: refused naming the field, its value never shown', async (_what, server, field) => {
    await using dir = await tempDir('airlock-config-sources-');
    await writeFile(join(dir.path, 'mcp.json'), JSON.stringify({ mcpServers: { local: server } }));
    await mkdir(join(dir.path, 'ws'));

    const { code, stderr } = await runServer(['--mcp-config', 'mcp.json', '--workspace', join(dir.path, 'ws'), '--data-dir', join(dir.path, 'data')], dir.path);

    expect(code).toBe(1);
    expect(stderr).toContain(`airlock: --mcp-config: invalid MCP config ${join(dir.path, 'mcp.json')}: server "local", field "${field}": must not contain a NUL character\n`);
    expect(stderr).not.toContain('first-part');
  }, 60_000);

  it('a port in use given with --port', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [] });
      const attempt = startServer({
        config: { host: '127.0.0.1', port, token: 'test-token-0123456789abcdef0123456789abcdef', allowedOrigins: [], sources: { port: '--port' } },
        services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'demo', baseURL: null, model: 'demo', demo: true }) },
        log: () => undefined,
      });
      await expect(attempt).rejects.toThrow(new ConfigError('--port', `port ${port} on 127.0.0.1 is already in use; choose another with --port or AIRLOCK_PORT`));
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
