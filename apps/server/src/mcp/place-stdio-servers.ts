import { statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, resolve, sep } from 'node:path';
import { PROCESS_GIT_CONFIG, withGitConfig } from '../tools/child-env';
import { cleanSearchPath, isAtOrWithin, realOrResolved } from '../tools/search-path';
import type { McpServersConfig, McpStdioServerConfig } from './mcp-config';

/** Variables whose folders a server's runtime loads code from; a workspace folder in one given in the config is warned about. */
const CODE_PATH_VARIABLES = ['PATH', 'NODE_PATH', 'PYTHONPATH'] as const;

export interface PlaceStdioServersOptions {
  /** The workspace, as a real path: what a sandboxed call may write. */
  workspace: string;
  /** The MCP servers file, as a real path: a server without a `cwd` runs in its folder, and a relative `cwd` is read from there. */
  configPath: string;
  /** The person's home folder: where a server runs when the config file's folder is in the workspace. */
  home: string;
  /** The PATH the servers would inherit (this process's). Undefined: none is passed. */
  inheritedPath: string | undefined;
}

export interface PlacedStdioServers {
  /** The servers, each stdio one with its `cwd` set (absolute) and, unless its config gives one, a PATH without workspace folders. */
  servers: McpServersConfig;
  /** Where a server with no `cwd` of its own runs. */
  defaultFolder: string;
  /** Entries of the inherited PATH left out: empty or relative (read from the server's folder) or in the workspace. */
  droppedPathEntries: string[];
  /** One line per server that the config starts from the workspace, naming what lies there. */
  warnings: string[];
}

/**
 * Where each stdio MCP server runs, kept out of the workspace. An allowed (even sandboxed) call can write the
 * workspace, and an MCP server runs unsandboxed, as the person, at every start and restart: a server run in the
 * workspace would have `npx`, `uvx`, `python -m` and `./node_modules/.bin` find the code the call left there. Airlock
 * is usually started from the project folder, so its own working folder is no default either. A server with no `cwd`
 * runs in the folder of the MCP servers file (the person's, and what relative paths in it are most naturally read
 * against); when that folder is in the workspace, in the home folder; when that is too (a workspace that holds the
 * home folder), in `/`. The PATH servers inherit loses its empty and relative entries (read from the server's folder)
 * and those in the workspace; Git, in any of them, does not take a folder of plain files for a bare repository
 * (`PROCESS_GIT_CONFIG`), as in the tools' processes. What the person's config itself puts in the workspace (a `cwd`, the command, a script
 * argument, a PATH entry) is kept, as asked, and warned about once here.
 */
export function placeStdioServers(servers: McpServersConfig, options: PlaceStdioServersOptions): PlacedStdioServers {
  const workspace = realOrResolved(options.workspace);
  const inWorkspace = (path: string) => isAtOrWithin(realOrResolved(path), workspace);
  const configFolder = dirname(realOrResolved(options.configPath));
  const candidates = isAbsolute(options.home) ? [configFolder, realOrResolved(options.home)] : [configFolder];
  const defaultFolder = candidates.find((folder) => !inWorkspace(folder)) ?? sep;

  const cleaned = options.inheritedPath === undefined ? undefined : cleanSearchPath(options.inheritedPath, workspace);
  const path = cleaned?.path;
  const droppedPathEntries = cleaned?.dropped ?? [];

  const placed: McpServersConfig = new Map();
  const warnings: string[] = [];
  for (const [name, config] of servers) {
    if (config.transport !== 'stdio') {
      placed.set(name, config);
      continue;
    }
    const cwd = config.cwd === undefined ? defaultFolder : resolve(configFolder, config.cwd);
    // Git's refusal of a bare repository it finds by itself, after any Git settings the config gives (so it wins).
    const env = withGitConfig(path === undefined || Object.hasOwn(config.env, 'PATH') ? config.env : { ...config.env, PATH: path }, PROCESS_GIT_CONFIG);
    const server: McpStdioServerConfig & { cwd: string } = { ...config, cwd, env };
    placed.set(name, server);
    const reasons = workspaceReasons(server, config.cwd !== undefined, inWorkspace);
    if (reasons.length > 0) {
      warnings.push(
        `MCP server "${name}" is started from the workspace (${reasons.join('; ')}): a tool call allowed there, even sandboxed, can change ` +
          'what it runs, and the server runs unsandboxed, as you, at its next start or restart. Run it from a folder outside the workspace, ' +
          'with a pinned package installed there',
      );
    }
  }
  return { servers: placed, defaultFolder, droppedPathEntries, warnings };
}

/** What the person's config puts in the workspace: the server's folder, its command, script or option arguments, code search paths. */
function workspaceReasons(server: McpStdioServerConfig & { cwd: string }, cwdGiven: boolean, inWorkspace: (path: string) => boolean): string[] {
  const reasons: string[] = [];
  if (cwdGiven && inWorkspace(server.cwd)) reasons.push(`its cwd ${server.cwd}`);
  if (server.command.includes('/')) {
    const command = resolve(server.cwd, server.command);
    if (inWorkspace(command)) reasons.push(`its command ${command}`);
  }
  server.args.forEach((arg, index) => {
    // `--directory=/ws/app` or `--directory /ws/app`: a folder named to an option is where a runner (uv, npm) works.
    const option = /^-[^=]*=(.*)$/s.exec(arg);
    const value = option?.[1] ?? arg;
    if (value === '' || (option === null && arg.startsWith('-'))) return;
    const target = resolve(server.cwd, value);
    if (!inWorkspace(target)) return;
    const kind = fileKind(target);
    // A positional folder is most often the server's data (the filesystem server's root), not its code.
    const namedToOption = option !== null || (index > 0 && server.args[index - 1]!.startsWith('-'));
    if (kind === 'file' || (kind === 'folder' && namedToOption)) reasons.push(`the argument ${target}`);
  });
  for (const variable of CODE_PATH_VARIABLES) {
    const value = server.env[variable];
    if (value === undefined) continue;
    for (const entry of value.split(delimiter)) {
      if (entry === '' && variable !== 'PATH') continue;
      const folder = resolve(server.cwd, entry);
      if (inWorkspace(folder)) reasons.push(`${variable} entry ${folder}`);
    }
  }
  return reasons;
}

function fileKind(path: string): 'file' | 'folder' | undefined {
  try {
    const info = statSync(path);
    return info.isFile() ? 'file' : info.isDirectory() ? 'folder' : undefined;
  } catch {
    return undefined;
  }
}
