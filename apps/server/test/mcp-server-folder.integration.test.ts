import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { everythingBin } from '../src/mcp/fixtures/test-servers';
import { startServerProcess, type ServerProcess } from './support/server-process';

// Found from outside: Airlock is started from the project folder, so the workspace was the working folder of every
// MCP server without a `cwd`. A package an allowed, sandboxed call wrote into the workspace's node_modules was what
// `npx` ran at the next start, unsandboxed, as the person.

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const PLANTED = 'airlock-planted-probe';

interface Folders {
  workspace: string;
  /** Holds the MCP servers file: outside the workspace. */
  configFolder: string;
  /** Where the servers report: outside the workspace. */
  out: string;
  root: string;
}

async function folders(): Promise<Folders> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'airlock-mcp-folder-')));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const result = { root, workspace: join(root, 'project'), configFolder: join(root, 'config'), out: join(root, 'out') };
  await Promise.all([mkdir(result.workspace), mkdir(result.configFolder), mkdir(result.out)]);
  return result;
}

/** What an allowed call can leave in the workspace: a package with a bin, linked from node_modules/.bin, that records that it ran. */
async function plantPackage(workspace: string, marker: string): Promise<void> {
  const pkg = join(workspace, 'node_modules', PLANTED);
  await mkdir(pkg, { recursive: true });
  await mkdir(join(workspace, 'node_modules', '.bin'));
  await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: PLANTED, version: '9.9.9', bin: { [PLANTED]: 'index.js' } }));
  await writeFile(join(pkg, 'index.js'), `#!${process.execPath}\nrequire('node:fs').writeFileSync(${JSON.stringify(marker)}, 'ran in ' + process.cwd());\n`);
  await chmod(join(pkg, 'index.js'), 0o755);
  await symlink(`../${PLANTED}/index.js`, join(workspace, 'node_modules', '.bin', PLANTED));
}

/** Starts the real server from the workspace, as `airlock` typed in the project folder is, with `servers` as its MCP file. */
async function startFromWorkspace(dirs: Folders, servers: Record<string, unknown>, env: Record<string, string> = {}): Promise<ServerProcess> {
  const mcpConfig = join(dirs.configFolder, 'mcp.json');
  await writeFile(mcpConfig, JSON.stringify({ mcpServers: servers }));
  // No --workspace: it is the folder Airlock is started from.
  return startServerProcess(['--mcp-config', mcpConfig, '--data-dir', join(dirs.root, 'data')], env, cleanups, { cwd: dirs.workspace });
}

/** The start-up line listing the MCP servers, once written. */
async function mcpLine(server: ServerProcess): Promise<string> {
  return vi.waitFor(
    () => {
      const line = /^MCP servers: .*$/mu.exec(server.output())?.[0];
      if (line === undefined) throw new Error(`not started yet:\n${server.output()}`);
      return line;
    },
    { timeout: 60_000, interval: 50 },
  );
}

/** A working MCP server (server-everything) that first writes its working folder to `file`. */
function reportingServer(file: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const code = `require('node:fs').writeFileSync(${JSON.stringify(file)}, process.cwd()); import(${JSON.stringify(pathToFileURL(everythingBin).href)})`;
  return { command: process.execPath, args: ['-e', code, 'stdio'], ...extra };
}

describe('a stdio MCP server does not run code an allowed call left in the workspace', () => {
  test('a server with no cwd runs in the MCP file’s folder, not in the workspace Airlock was started from', async () => {
    const dirs = await folders();
    const reported = join(dirs.out, 'cwd');
    const server = await startFromWorkspace(dirs, { probe: reportingServer(reported) });

    expect(await mcpLine(server)).toMatch(/^MCP servers: probe ready \(\d+ tools\)$/u);
    expect(await readFile(reported, 'utf8')).toBe(dirs.configFolder);
    expect(server.output()).toContain(`MCP servers without a "cwd" run in ${dirs.configFolder}, not in the workspace`);
    expect(server.output()).not.toContain('is started from the workspace');
  }, 120_000);

  test.skipIf(!existsSync('/usr/bin/npx') && !process.env.PATH?.split(delimiter).some((folder) => existsSync(join(folder, 'npx'))))(
    '`npx <package>` does not run the package planted in the workspace’s node_modules',
    async () => {
      const dirs = await folders();
      const marker = join(dirs.out, 'planted-ran');
      await plantPackage(dirs.workspace, marker);
      // Offline: a package npx does not find locally fails at once (ENOTCACHED) rather than being fetched.
      const npm = { npm_config_offline: 'true', npm_config_cache: join(dirs.root, 'npm-cache'), npm_config_userconfig: join(dirs.root, 'npmrc'), npm_config_update_notifier: 'false' };
      const server = await startFromWorkspace(dirs, { probe: { command: 'npx', args: ['-y', PLANTED], env: npm } });

      expect(await mcpLine(server)).toMatch(/^MCP servers: probe error: /u);
      expect(existsSync(marker)).toBe(false);
    },
    120_000,
  );

  test('a bare command found only through a relative PATH entry (node_modules/.bin) in the workspace is not found', async () => {
    const dirs = await folders();
    const marker = join(dirs.out, 'planted-ran');
    await plantPackage(dirs.workspace, marker);
    const server = await startFromWorkspace(dirs, { probe: { command: PLANTED } }, { PATH: `node_modules/.bin${delimiter}${process.env.PATH ?? ''}` });

    expect(await mcpLine(server)).toMatch(/^MCP servers: probe error: /u);
    expect(existsSync(marker)).toBe(false);
    expect(server.output()).toContain('MCP servers get PATH without node_modules/.bin: relative, or in the workspace');
  }, 120_000);

  test('a server the config runs in the workspace starts there, with one warning that says what an allowed call can do to it', async () => {
    const dirs = await folders();
    const reported = join(dirs.out, 'cwd');
    const server = await startFromWorkspace(dirs, { probe: reportingServer(reported, { cwd: dirs.workspace }) });

    expect(await mcpLine(server)).toMatch(/^MCP servers: probe ready \(\d+ tools\)$/u);
    expect(await readFile(reported, 'utf8')).toBe(dirs.workspace);
    const warnings = server.output().split('\n').filter((line) => line.includes('MCP server "probe" is started from the workspace'));
    expect(warnings).toStrictEqual([
      `Warning: MCP server "probe" is started from the workspace (its cwd ${dirs.workspace}): a tool call allowed there, even sandboxed, can change ` +
        'what it runs, and the server runs unsandboxed, as you, at its next start or restart. Run it from a folder outside the workspace, ' +
        'with a pinned package installed there',
    ]);
  }, 120_000);

  test('Git run by a stdio server does not take a folder of plain files in the workspace for a bare repository and run its fsmonitor', async () => {
    const dirs = await folders();
    const marker = join(dirs.out, 'fsmonitor-ran');
    const checked = join(dirs.out, 'git-ran');
    // What a clone can ship as plain files, no call needed: a bare repository's layout whose config runs a command.
    const layout = join(dirs.workspace, 'vendor', 'tool');
    await mkdir(join(layout, 'objects'), { recursive: true });
    await mkdir(join(layout, 'refs'));
    await writeFile(join(layout, 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(join(layout, 'config'), `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "echo ran > '${marker}'; false"\n`);
    // A Git MCP server's status tool, run at its start: `git status` in that folder, then a working MCP server.
    const code = [
      `const { execFileSync } = require('node:child_process');`,
      `let answer = '';`,
      `try { execFileSync('git', ['status'], { cwd: ${JSON.stringify(layout)}, stdio: 'pipe' }); answer = 'status ran'; } catch (error) { answer = String(error.stderr); }`,
      `require('node:fs').writeFileSync(${JSON.stringify(checked)}, answer);`,
      `import(${JSON.stringify(pathToFileURL(everythingBin).href)})`,
    ].join('\n');
    const server = await startFromWorkspace(dirs, { git: { command: process.execPath, args: ['-e', code, 'stdio'] } });

    expect(await mcpLine(server)).toMatch(/^MCP servers: git ready \(\d+ tools\)$/u);
    expect(await readFile(checked, 'utf8')).toMatch(/cannot use bare repository/u);
    expect(existsSync(marker)).toBe(false);
  }, 120_000);
});
