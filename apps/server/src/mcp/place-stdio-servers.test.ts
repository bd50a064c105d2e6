import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { McpServersConfig, McpStdioServerConfig } from './mcp-config';
import { placeStdioServers, type PlaceStdioServersOptions } from './place-stdio-servers';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** root/home, root/home/config/mcp.json, root/project (the workspace), root/project/server.js. */
async function layout(): Promise<{ root: string; home: string; configPath: string; workspace: string }> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'airlock-place-')));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const workspace = join(root, 'project');
  await mkdir(join(home, 'config'), { recursive: true });
  await mkdir(join(workspace, 'app'), { recursive: true });
  await writeFile(join(workspace, 'server.js'), '');
  return { root, home, configPath: join(home, 'config', 'mcp.json'), workspace };
}

/** What every stdio server's environment gets: Git refuses a bare repository it finds by itself. */
const BARE_REPOSITORY_REFUSED = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.bareRepository', GIT_CONFIG_VALUE_0: 'explicit' };

function stdio(fields: Partial<McpStdioServerConfig> = {}): McpStdioServerConfig {
  return { transport: 'stdio', command: 'npx', args: [], env: {}, ...fields };
}

function place(servers: Record<string, McpStdioServerConfig>, options: PlaceStdioServersOptions) {
  return placeStdioServers(new Map(Object.entries(servers)), options);
}

function stdioOf(servers: McpServersConfig, name: string): McpStdioServerConfig {
  const server = servers.get(name);
  if (server?.transport !== 'stdio') throw new Error(`no stdio server ${name}`);
  return server;
}

describe('placeStdioServers', () => {
  test('a server with no cwd runs in the MCP file’s folder; a relative cwd is read from there', async () => {
    const { home, configPath, workspace } = await layout();
    const placed = place({ plain: stdio(), relative: stdio({ cwd: 'tools' }) }, { workspace, configPath, home, inheritedPath: undefined });
    expect(placed.defaultFolder).toBe(join(home, 'config'));
    expect(stdioOf(placed.servers, 'plain').cwd).toBe(join(home, 'config'));
    expect(stdioOf(placed.servers, 'relative').cwd).toBe(join(home, 'config', 'tools'));
    expect(placed.warnings).toStrictEqual([]);
  });

  test('an MCP file in the workspace leaves the server in the home folder, and a workspace holding the home folder in /', async () => {
    const { root, home, workspace } = await layout();
    expect(place({ s: stdio() }, { workspace, configPath: join(workspace, '.mcp.json'), home, inheritedPath: undefined }).defaultFolder).toBe(home);
    expect(place({ s: stdio() }, { workspace: root, configPath: join(root, 'home', 'mcp.json'), home, inheritedPath: undefined }).defaultFolder).toBe('/');
  });

  test('the MCP file reached through a link into the workspace counts as in the workspace', async () => {
    const { root, home, workspace } = await layout();
    await symlink(workspace, join(root, 'link'));
    expect(place({ s: stdio() }, { workspace, configPath: join(root, 'link', 'mcp.json'), home, inheritedPath: undefined }).defaultFolder).toBe(home);
  });

  test('the inherited PATH loses empty, relative and workspace entries; a PATH the config gives is kept', async () => {
    const { root, home, configPath, workspace } = await layout();
    await symlink(join(workspace, 'app'), join(root, 'app-link'));
    const inheritedPath = ['/usr/bin', '', 'node_modules/.bin', '.', join(workspace, 'node_modules', '.bin'), join(root, 'app-link'), '/bin'].join(delimiter);
    const placed = place({ plain: stdio(), own: stdio({ env: { PATH: '/opt/bin' } }) }, { workspace, configPath, home, inheritedPath });
    expect(stdioOf(placed.servers, 'plain').env).toStrictEqual({ PATH: ['/usr/bin', '/bin'].join(delimiter), ...BARE_REPOSITORY_REFUSED });
    expect(stdioOf(placed.servers, 'own').env).toStrictEqual({ PATH: '/opt/bin', ...BARE_REPOSITORY_REFUSED });
    expect(placed.droppedPathEntries).toStrictEqual(['', 'node_modules/.bin', '.', join(workspace, 'node_modules', '.bin'), join(root, 'app-link')]);
  });

  test('warns once per server the config starts from the workspace, naming each thing that lies there', async () => {
    const { home, configPath, workspace } = await layout();
    const placed = place(
      {
        cwd: stdio({ cwd: workspace }),
        command: stdio({ command: join(workspace, 'run.sh') }),
        script: stdio({ command: 'node', args: [join(workspace, 'server.js')] }),
        uv: stdio({ command: 'uv', args: ['--directory', join(workspace, 'app'), 'run', 'server.py'] }),
        equals: stdio({ command: 'uvx', args: [`--from=${join(workspace, 'app')}`, 'server'] }),
        path: stdio({ env: { PATH: `${join(workspace, 'node_modules', '.bin')}${delimiter}/usr/bin`, PYTHONPATH: join(workspace, 'app') } }),
        // The filesystem server's root: data, not code.
        data: stdio({ args: ['-y', '@modelcontextprotocol/server-filesystem', workspace] }),
      },
      { workspace, configPath, home, inheritedPath: undefined },
    );
    const reasons = placed.warnings.map((warning) => /^MCP server "(\w+)" is started from the workspace \((.*)\): a tool call allowed there/u.exec(warning)?.slice(1));
    expect(reasons).toStrictEqual([
      ['cwd', `its cwd ${workspace}`],
      ['command', `its command ${join(workspace, 'run.sh')}`],
      ['script', `the argument ${join(workspace, 'server.js')}`],
      ['uv', `the argument ${join(workspace, 'app')}`],
      ['equals', `the argument ${join(workspace, 'app')}`],
      ['path', `PATH entry ${join(workspace, 'node_modules', '.bin')}; PYTHONPATH entry ${join(workspace, 'app')}`],
    ]);
    // Started all the same, where the config says.
    expect(stdioOf(placed.servers, 'cwd').cwd).toBe(workspace);
  });

  test('leaves an http server as it is', async () => {
    const { home, configPath, workspace } = await layout();
    const servers: McpServersConfig = new Map([['remote', { transport: 'http', url: 'https://mcp.example.test/mcp', headers: {} }]]);
    expect(placeStdioServers(servers, { workspace, configPath, home, inheritedPath: '/usr/bin' }).servers.get('remote')).toStrictEqual(servers.get('remote'));
  });

  test('gives every stdio server Git’s refusal of a bare repository it finds by itself, after the Git settings its config gives', async () => {
    const { home, configPath, workspace } = await layout();
    const placed = place(
      { plain: stdio(), own: stdio({ env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'safe.bareRepository', GIT_CONFIG_VALUE_0: 'all' } }) },
      { workspace, configPath, home, inheritedPath: undefined },
    );
    expect(stdioOf(placed.servers, 'plain').env).toStrictEqual(BARE_REPOSITORY_REFUSED);
    expect(stdioOf(placed.servers, 'own').env).toStrictEqual({
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'safe.bareRepository',
      GIT_CONFIG_VALUE_0: 'all',
      GIT_CONFIG_KEY_1: 'safe.bareRepository',
      GIT_CONFIG_VALUE_1: 'explicit',
    });
  });
});
