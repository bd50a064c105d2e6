import { ChatService, MemoryStore, ToolSettingsService, type AirlockServices, type AirlockStore, type Cluster, type ModelInfo, type ToolCatalog } from '@airlock/api';
import { ApprovalRegistry, ConcurrencyLimit, type AnyTool } from '@airlock/core';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError, plainHttpModelWarning, type AirlockConfig } from './config';
import { logToConsole } from './console-line';
import { loadMcpConfig, McpConfigError } from './mcp/mcp-config';
import type { McpManager } from './mcp/mcp-manager';
import { placeStdioServers } from './mcp/place-stdio-servers';
import { renamedDisabledTools } from './mcp/renamed-disabled-tools';
import { resolveChatModel } from './models/resolve-model';
import { RuleBook, staleToolNames } from './rules';
import { SqliteStore } from './store/sqlite-store';
import { asStorageFailure, withStorageFailures } from './store/storage-failure';
import { StoreError } from './store/store-error';
import {
  callOpenFiles,
  createBuiltinTools,
  DEFAULT_MAX_OPEN_FILES,
  DEFAULT_MAX_PROCESSES,
  DEFAULT_TMPFS_MIB,
  isWithin,
  ownHostUserId,
  ownOpenFilesHardLimit,
  processLimitWarning,
  resolveToolSandbox,
  SandboxUnavailableError,
  unboundedIpcWarning,
  unboundedNamespaceWarning,
  UNSIZED_TMPFS_WARNING,
  type ToolSandbox,
} from './tools';

export interface CreateServicesOptions {
  /** Receives start-up notes (a model warning, MCP server messages). Default `logToConsole` (control characters shown as codes). */
  log?: (line: string) => void;
  /** Environment child processes inherit allowlisted variables from. Default the tools' own default (the process's). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The files this server's output goes to, looked up at each use (see `outputFiles`): no tool may reach them. Default none. */
  outputFiles?: () => readonly string[];
}

export interface CreatedServices {
  services: AirlockServices;
  /** Stops the MCP servers. Runs are cancelled by the server's own close first. */
  close(): Promise<void>;
}

function systemPrompt(workspace: string): string {
  return [
    'You are Airlock, an assistant that can use tools on the user’s computer.',
    `Tools act in the workspace folder ${workspace}.`,
    'A person approves or denies every tool call before it runs. When a call is denied, do not try the same thing another way: say what you wanted to do and ask.',
    'Prefer small, reversible steps, and say what you are about to do before doing it.',
  ].join('\n');
}

/** Wires the approval registry, the chat service, the model, the built-in tools and the MCP servers from the config. */
export async function createServices(config: AirlockConfig, options: CreateServicesOptions = {}): Promise<CreatedServices> {
  const log = options.log ?? logToConsole;
  const secretValues = [config.token, ...(config.apiKey === undefined ? [] : [config.apiKey])];
  const sandbox = await toolSandboxFor(config);
  log(sandbox.kind === 'bubblewrap' ? `Tools run in a bubblewrap sandbox (network ${sandbox.network ? 'on' : 'off'})` : `Tools run without a sandbox: ${sandbox.reason}`);
  const maxProcesses = config.toolMaxProcesses ?? DEFAULT_MAX_PROCESSES;
  // The kernel exempts root from the limit: said once here rather than pretended.
  const limitWarning = sandbox.kind === 'bubblewrap' ? processLimitWarning(maxProcesses, ownHostUserId()) : null;
  if (limitWarning !== null) log(limitWarning);
  if (sandbox.kind === 'bubblewrap' && sandbox.unsizedTmpfs) log(UNSIZED_TMPFS_WARNING);
  if (sandbox.kind === 'bubblewrap' && 'unbounded' in sandbox) log(unboundedNamespaceWarning(sandbox.unbounded));
  if (sandbox.kind === 'bubblewrap' && 'unshare' in sandbox && sandbox.ipcUnbounded !== undefined) log(unboundedIpcWarning(sandbox.ipcUnbounded));
  const maxOpenFiles = toolOpenFiles(config, sandbox, log);
  // The data folder, the files secrets came from and the MCP file (which may hold other keys) are hidden from sandboxed calls.
  // With a shared database, the password file PostgreSQL clients read, and the client key its URL names, are hidden too.
  const databaseFiles =
    config.database === undefined ? [] : [options.env?.PGPASSFILE ?? process.env.PGPASSFILE ?? join(homedir(), '.pgpass'), databaseClientKey(config.database.url)];
  // Named whether or not they are there yet: a password file written while the server runs is hidden from the calls
  // that follow (each call masks what is there as it starts, and keeps it out of its view of the folder).
  const hiddenPaths = [config.dataDir, config.mcpConfigPath, ...config.secretFiles, ...databaseFiles].filter((entry) => entry !== undefined);
  const outputFiles = options.outputFiles ?? (() => []);
  for (const file of outputFiles()) {
    if (isWithin(config.workspace, file)) {
      log(
        `Note: Airlock's output goes to ${file}, inside the workspace. It holds the start-up link, so tool calls are kept from it ` +
          '(hidden like the data folder), but an MCP server, or terminal and python without a sandbox, can read it: write the output outside the workspace',
      );
    }
  }
  const builtinTools = createBuiltinTools({
    workspace: config.workspace,
    secretValues,
    sandbox,
    maxProcesses,
    maxOpenFiles,
    tmpfsMiB: config.toolTmpSize ?? DEFAULT_TMPFS_MIB,
    hiddenPaths,
    outputFiles,
    log,
    ...(options.env === undefined ? {} : { env: options.env }),
  });

  // Before the model server is first asked anything: the model list is asked for with the key.
  const plainHttp = plainHttpModelWarning(config);
  if (plainHttp !== null) log(plainHttp);
  const resolved = await resolveChatModel({
    ...(config.modelUrl === undefined ? {} : { modelUrl: config.modelUrl }),
    ...(config.model === undefined ? {} : { model: config.model }),
    ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }),
    maxConcurrentRequests: config.capacity.maxModelRequests,
    requestTimeoutMs: config.capacity.modelTimeoutMs,
    idleTimeoutMs: config.capacity.modelIdleTimeoutMs,
    turnTimeoutMs: config.capacity.modelTurnTimeoutMs,
  });
  if (resolved.info.warning !== undefined) log(`Model warning: ${resolved.info.warning}`);
  const modelInfo: ModelInfo = {
    provider: resolved.info.provider,
    baseURL: resolved.info.baseURL === '' ? null : resolved.info.baseURL,
    model: resolved.info.model,
    demo: resolved.info.demo,
    ...(resolved.info.warning === undefined ? {} : { modelWarning: resolved.info.warning }),
    sandbox: sandbox.kind === 'bubblewrap' ? { kind: 'bubblewrap', network: sandbox.network } : { kind: 'none', network: true, reason: sandbox.reason },
    workspace: config.workspace,
    ...(config.workspaceWarning === undefined ? {} : { workspaceWarning: config.workspaceWarning }),
  };

  let store: AirlockStore;
  let cluster: Cluster | undefined;
  try {
    if (config.database !== undefined) {
      const { url, schema, instanceId, leaseMs, poolSize } = config.database;
      // Imported here, not above: a start without a database does not load pg.
      const { PostgresStore } = await import('./store/postgres-store');
      const shared = await PostgresStore.open({ url, instanceId, leaseMs, log, maxConnections: poolSize, ...(schema === undefined ? {} : { schema }) });
      store = shared;
      cluster = shared;
    } else {
      store = config.dataDir === undefined ? new MemoryStore() : await openSqliteStore(config.dataDir, log);
    }
  } catch (error) {
    if (error instanceof StoreError) {
      const source =
        error.problem === 'instance-in-use'
          ? (config.sources?.['instance-id'] ?? 'AIRLOCK_INSTANCE_ID')
          : config.database !== undefined
            ? (config.sources?.['database-url'] ?? 'AIRLOCK_DATABASE_URL')
            : (config.sources?.['data-dir'] ?? 'AIRLOCK_DATA_DIR');
      throw new ConfigError(source, error.message);
    }
    throw error;
  }
  // After the store, which a second server on a data folder in use is refused: it started the MCP servers first, which
  // then ran twice at once.
  const mcp =
    config.mcpConfigPath === undefined
      ? undefined
      : await startMcp(config, config.mcpConfigPath, log).catch(async (error: unknown) => {
          await store.close();
          throw error;
        });
  const catalog: ToolCatalog = {
    tools: (): AnyTool[] => [...builtinTools, ...(mcp?.tools() ?? [])],
    servers: () => mcp?.status().map(({ name, state, error, toolCount }) => ({ name, state, toolCount, ...(error === undefined ? {} : { error }) })) ?? [],
  };
  const rules = await RuleBook.open({ store, workspace: config.workspace, log, ...(cluster === undefined ? {} : { cluster }) });
  for (const line of staleToolNames((await rules.list()).map((view) => view.rule), catalog.tools())) log(`Warning: ${line}`);
  // Before the chats: every run, a resumed one too, leaves out the tools turned off in them.
  const settings = new ToolSettingsService(store, { log, ...(cluster === undefined ? {} : { cluster }) });
  const chat = new ChatService({
    registry: new ApprovalRegistry(),
    model: () => resolved.model,
    tools: () => catalog.tools(),
    systemPrompt: systemPrompt(config.workspace),
    store,
    // With a database, a shutdown leaves waiting calls waiting: the next start (or another instance) resumes them.
    suspendRunsOnShutdown: config.dataDir !== undefined || cluster !== undefined,
    log,
    rules,
    toolSlots: new ConcurrencyLimit(config.capacity.maxRunningCalls),
    settings,
    ...(cluster === undefined ? {} : { cluster }),
  });
  const opened = await chat.open();
  // Runs resumed, and of their calls those still waiting for a decision: a resumed run may have none (a call it
  // had running is reported interrupted, one decided while the server was down gets its outcome, one whose deadline
  // passed meanwhile times out at once).
  const now = Date.now();
  let waiting = 0;
  for (const session of chat.listSessions()) waiting += chat.pending(session.sessionId).filter((call) => call.expiresAt === null || call.expiresAt > now).length;
  const resumed = opened.resumedRuns > 0 ? `; ${opened.resumedRuns} unfinished run(s) resumed, ${waiting} call(s) waiting for a decision` : '';
  if (config.database !== undefined) {
    log(`Chats: ${opened.sessions} kept in PostgreSQL, shared as instance ${config.database.instanceId}${resumed}`);
  } else if (config.dataDir !== undefined) {
    log(`Chats: ${opened.sessions} kept in ${config.dataDir}${resumed}`);
  }

  for (const line of renamedDisabledTools((await settings.get()).settings.disabledTools, catalog.tools())) log(`Note: ${line}`);

  return {
    services: { chat, catalog, rules, settings, modelInfo: () => modelInfo },
    close: async () => {
      await mcp?.close();
      await store.close();
    },
  };
}

/**
 * The file the database URL's `sslkey` names, as the PostgreSQL client reads it (relative to this process's folder):
 * the private key that proves Airlock's role to a database that checks client certificates, as a password would.
 */
function databaseClientKey(url: string): string | undefined {
  const key = new URL(url).searchParams.get('sslkey');
  return key === null || key === '' ? undefined : resolve(key);
}

/** The sandbox for terminal and python, probed once; a required one that cannot start stops start-up. */
async function toolSandboxFor(config: AirlockConfig): Promise<ToolSandbox> {
  try {
    return await resolveToolSandbox({ mode: config.toolSandbox, network: config.toolNetwork });
  } catch (error) {
    if (error instanceof SandboxUnavailableError) {
      // A sandbox asked for by name could not start; otherwise it was needed for the network off.
      const source =
        config.toolSandbox === 'bubblewrap' || config.toolNetwork
          ? (config.sources?.['tool-sandbox'] ?? 'AIRLOCK_TOOL_SANDBOX')
          : (config.sources?.['tool-network'] ?? 'AIRLOCK_TOOL_NETWORK');
      throw new ConfigError(source, error.message);
    }
    throw error;
  }
}

/**
 * The files each process of a sandboxed call may have open: a --tool-max-open-files above the server's own hard limit,
 * which its calls cannot go past, stops start-up; the default above it is lowered to it, and said (see callOpenFiles).
 */
function toolOpenFiles(config: AirlockConfig, sandbox: ToolSandbox, log: (line: string) => void): number {
  const setting = config.toolMaxOpenFiles ?? DEFAULT_MAX_OPEN_FILES;
  if (sandbox.kind !== 'bubblewrap') return setting;
  const source = config.sources?.['tool-max-open-files'];
  const decided = callOpenFiles({ setting, given: source !== undefined, hardLimit: ownOpenFilesHardLimit() });
  if ('refusal' in decided) throw new ConfigError(source ?? 'AIRLOCK_TOOL_MAX_OPEN_FILES', decided.refusal);
  if (decided.warning !== undefined) log(decided.warning);
  return decided.maxOpenFiles;
}

/**
 * A file that cannot be parsed stops start-up; a server that fails to start is only reported. Stdio servers run
 * outside the workspace (`placeStdioServers`); one the config itself starts from there is warned about.
 */
async function startMcp(config: AirlockConfig, path: string, log: (line: string) => void): Promise<McpManager> {
  let configured;
  try {
    configured = await loadMcpConfig(path, config.mcpConfigName ?? path);
  } catch (error) {
    if (error instanceof McpConfigError) throw new ConfigError(config.sources?.['mcp-config'] ?? 'AIRLOCK_MCP_CONFIG', error.message);
    throw error;
  }
  // The PATH and HOME an MCP server inherits are this process's own (`McpConnection`).
  const placed = placeStdioServers(configured, { workspace: config.workspace, configPath: path, home: process.env.HOME ?? homedir(), inheritedPath: process.env.PATH });
  if ([...configured.values()].some((server) => server.transport === 'stdio' && server.cwd === undefined)) {
    log(`MCP servers without a "cwd" run in ${placed.defaultFolder}, not in the workspace`);
  }
  if (placed.droppedPathEntries.length > 0) {
    log(`MCP servers get PATH without ${placed.droppedPathEntries.map((entry) => (entry === '' ? '(empty)' : entry)).join(', ')}: relative, or in the workspace`);
  }
  for (const warning of placed.warnings) log(`Warning: ${warning}`);
  // Imported here, not above: a start without MCP servers does not load the MCP SDK.
  const { McpManager } = await import('./mcp/mcp-manager');
  const manager = new McpManager({
    servers: placed.servers,
    logger: { info: (message) => log(message), warn: (message) => log(`Warning: ${message}`) },
  });
  await manager.start();
  return manager;
}

/** The SQLite store in the data folder, whose failures for a full or failing disk name the folder and what to do. */
export async function openSqliteStore(directory: string, log: (line: string) => void): Promise<AirlockStore> {
  try {
    return withStorageFailures(await SqliteStore.open({ directory, log }), directory);
  } catch (error) {
    throw asStorageFailure(directory, error);
  }
}
