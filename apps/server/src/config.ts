import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname, userInfo } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { changeableByOthers, type ChangeableByOthers } from './changeable-by-others';
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_TURN_TIMEOUT_MS } from './models/model-time-limits';
import { sharedInstallationFile } from './shared-installation-file';
import { shellQuoted } from './shell-quoted';
import { SOCKET_FOLDERS } from './tools/sandbox/host-layout';
import { DEFAULT_MAX_OPEN_FILES, DEFAULT_MAX_PROCESSES, MAX_MAX_OPEN_FILES, MAX_MAX_PROCESSES, MIN_MAX_OPEN_FILES, MIN_MAX_PROCESSES } from './tools/sandbox/process-limit';
import { DEFAULT_TMPFS_MIB, MAX_TMPFS_MIB, MIN_TMPFS_MIB } from './tools/sandbox/tmpfs-size';

export interface AirlockConfig {
  /** Interface the server binds. */
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** A non-loopback `host` was explicitly allowed. */
  allowRemote: boolean;
  /** The access token every WebSocket connection must present. */
  token: string;
  /** True when no AIRLOCK_TOKEN was set and `token` was generated for this run. */
  tokenGenerated: boolean;
  /** Real path of the file the token was read from, if it came from one: the start-up line then leaves the token out. */
  tokenFile?: string;
  /** Real path of the folder the tools act in. */
  workspace: string;
  /**
   * Said at start-up and in the web page's header when the workspace is, or holds, the person's home folder: a call
   * allowed there can change what their shell runs at start-up and who SSH lets in. Unset otherwise.
   */
  workspaceWarning?: string;
  /** Base URL of an OpenAI-compatible model server; none means the offline demo model. */
  modelUrl: string | undefined;
  model: string | undefined;
  apiKey: string | undefined;
  /** Real paths of the files the token and the API key were read from, hidden from tool sandboxes. */
  secretFiles: string[];
  /** How terminal and python are held: `auto` uses bubblewrap when it can start, else runs them without a sandbox. */
  toolSandbox: 'auto' | 'bubblewrap' | 'none';
  /** Whether terminal and python calls reach the network (off needs the sandbox). */
  toolNetwork: boolean;
  /** Processes (threads included) one sandboxed terminal or python call may run at once. Unset: the tools' default (1024). */
  toolMaxProcesses?: number;
  /** Files each process of a sandboxed terminal or python call may have open at once. Unset: the tools' default (1024). */
  toolMaxOpenFiles?: number;
  /** MiB one sandboxed terminal or python call's /tmp, /dev/shm and System V shared memory may each hold. Unset: the tools' default (512). */
  toolTmpSize?: number;
  /** Real path of the MCP servers file (what is read, and hidden from tool sandboxes). */
  mcpConfigPath: string | undefined;
  /** The MCP servers file as given, made absolute but with links not followed: what its errors call it. Default `mcpConfigPath`. */
  mcpConfigName?: string;
  /** Exact origins (scheme://host[:port]) whose pages may connect besides the server's own. */
  allowedOrigins: string[];
  /** Folder of the database (chats, waiting calls, grants, the ledger); unset keeps everything in memory only. */
  dataDir?: string;
  /**
   * A PostgreSQL database shared by several instances, in place of the data folder: any instance serves any client.
   * Unset: the SQLite database in dataDir, for one instance.
   */
  database?: { url: string; schema: string | undefined; instanceId: string; leaseMs: number; poolSize: number };
  /** How much the server admits at once; see the README's configuration table. */
  capacity: Capacity;
  /**
   * The flag or variable each given setting came from, so a problem found after loading (a port in use, a sandbox that
   * cannot start, an MCP file that does not parse) names what the person wrote. A setting left to its default has none.
   */
  sources?: Partial<Record<ConfigFlag, string>>;
}

/** How much the server admits: each bounds what clients can make it hold. */
export interface Capacity {
  /** Authenticated WebSocket connections at once; more are refused with 503. */
  maxConnections: number;
  /** Sockets still to present their token, counted apart; a new one takes the oldest one's place once that one is `authGraceMs` old. */
  maxUnauthenticated: number;
  /** Time a new socket has to present its token. */
  authTimeoutMs: number;
  /** Time a new socket keeps its place whatever comes after it; when every place is younger, a newcomer is refused (503). */
  authGraceMs: number;
  /** Sockets speaking plain HTTP (page loads, `/healthz`) at once; a new one takes the oldest one's place. One that upgrades to a WebSocket leaves this count. */
  maxHttpConnections: number;
  /** Runs one connection may have going at once. */
  runsPerConnection: number;
  /** New runs one connection may start per minute, after its burst. */
  runsPerMinute: number;
  /** New runs one connection may start back to back. */
  runBurst: number;
  /** Subscriptions (run streams, session watches) one connection may hold open at once. */
  subscriptionsPerConnection: number;
  /** Requests streaming from the model server at once, over all runs; further model turns wait their turn. */
  maxModelRequests: number;
  /** Time the model server has to send the first piece of an answer (text, reasoning, a tool call's), its headers included; it may load the model first. */
  modelTimeoutMs: number;
  /** Time the model server may go without sending a piece of an answer once it has started; keep-alive bytes do not count. */
  modelIdleTimeoutMs: number;
  /** Time one model turn may stream in all, so a server that trickles cannot hold a request's place for good. */
  modelTurnTimeoutMs: number;
  /** Tool calls running at once, over all runs; further allowed calls wait their turn. */
  maxRunningCalls: number;
}

/** Enough for 10,000 approvals waiting over 2,500 connections of 4 runs each, with room to spare. */
export const DEFAULT_CAPACITY: Readonly<Capacity> = Object.freeze({
  maxConnections: 4096,
  maxUnauthenticated: 16,
  authTimeoutMs: 3000,
  authGraceMs: 0,
  maxHttpConnections: 128,
  runsPerConnection: 4,
  runsPerMinute: 30,
  runBurst: 10,
  subscriptionsPerConnection: 32,
  maxModelRequests: 64,
  modelTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
  modelIdleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS,
  modelTurnTimeoutMs: DEFAULT_TURN_TIMEOUT_MS,
  maxRunningCalls: 64,
});

/** Flag, variable and accepted range of each capacity setting. */
const CAPACITY_SETTINGS = {
  maxConnections: { flag: 'max-connections', variable: 'AIRLOCK_MAX_CONNECTIONS', min: 1, max: 1_000_000 },
  maxUnauthenticated: { flag: 'max-unauthenticated', variable: 'AIRLOCK_MAX_UNAUTHENTICATED', min: 1, max: 10_000 },
  authTimeoutMs: { flag: 'auth-timeout-ms', variable: 'AIRLOCK_AUTH_TIMEOUT_MS', min: 100, max: 60_000 },
  authGraceMs: { flag: 'auth-grace-ms', variable: 'AIRLOCK_AUTH_GRACE_MS', min: 0, max: 60_000 },
  maxHttpConnections: { flag: 'max-http-connections', variable: 'AIRLOCK_MAX_HTTP_CONNECTIONS', min: 1, max: 100_000 },
  runsPerConnection: { flag: 'runs-per-connection', variable: 'AIRLOCK_RUNS_PER_CONNECTION', min: 1, max: 10_000 },
  runsPerMinute: { flag: 'runs-per-minute', variable: 'AIRLOCK_RUNS_PER_MINUTE', min: 1, max: 1_000_000 },
  runBurst: { flag: 'run-burst', variable: 'AIRLOCK_RUN_BURST', min: 1, max: 1_000_000 },
  subscriptionsPerConnection: { flag: 'subscriptions-per-connection', variable: 'AIRLOCK_SUBSCRIPTIONS_PER_CONNECTION', min: 1, max: 10_000 },
  maxModelRequests: { flag: 'max-model-requests', variable: 'AIRLOCK_MAX_MODEL_REQUESTS', min: 1, max: 100_000 },
  modelTimeoutMs: { flag: 'model-timeout-ms', variable: 'AIRLOCK_MODEL_TIMEOUT_MS', min: 1000, max: 86_400_000 },
  modelIdleTimeoutMs: { flag: 'model-idle-timeout-ms', variable: 'AIRLOCK_MODEL_IDLE_TIMEOUT_MS', min: 1000, max: 86_400_000 },
  modelTurnTimeoutMs: { flag: 'model-turn-timeout-ms', variable: 'AIRLOCK_MODEL_TURN_TIMEOUT_MS', min: 1000, max: 604_800_000 },
  maxRunningCalls: { flag: 'max-running-calls', variable: 'AIRLOCK_MAX_RUNNING_CALLS', min: 1, max: 100_000 },
} as const satisfies Record<keyof Capacity, { flag: string; variable: string; min: number; max: number }>;

/** A configuration value that cannot be used; `source` names the variable or flag. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly source: string,
    readonly problem: string,
  ) {
    super(`${source}: ${problem}`);
  }
}

export const USAGE = `Usage: airlock [options]

Options (each also readable from the environment):
  --host <host>          AIRLOCK_HOST          interface to bind (default 127.0.0.1)
  --port <port>          AIRLOCK_PORT          port (default 7700)
  --allow-remote         AIRLOCK_ALLOW_REMOTE=1  allow binding a non-loopback host
  --workspace <dir>      AIRLOCK_WORKSPACE     folder the tools act in (default: where you started; ~/airlock-workspace from Airlock's own folder)
  --allow-home-workspace AIRLOCK_ALLOW_HOME_WORKSPACE=1  take a workspace that is or holds the home folder (refused without it)
  --model-url <url>      AIRLOCK_MODEL_URL     OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1
  --model <name>         AIRLOCK_MODEL         model name sent to that server
  --mcp-config <file>    AIRLOCK_MCP_CONFIG    MCP servers file ({"mcpServers": {...}})
  --data-dir <dir>       AIRLOCK_DATA_DIR      where chats are kept (default $XDG_DATA_HOME/airlock, else ~/.local/share/airlock)
  --token-file <file>    AIRLOCK_TOKEN_FILE    file holding the access token (instead of AIRLOCK_TOKEN)
  --api-key-file <file>  AIRLOCK_API_KEY_FILE  file holding the model server's API key (instead of AIRLOCK_API_KEY)
  --tool-sandbox <mode>  AIRLOCK_TOOL_SANDBOX  auto | bubblewrap | none: how terminal and python are held (default auto)
  --tool-network <on|off> AIRLOCK_TOOL_NETWORK whether terminal and python reach the network (default on; off needs bubblewrap)
  --tool-max-processes <n> AIRLOCK_TOOL_MAX_PROCESSES processes and threads one sandboxed call may run at once (default ${DEFAULT_MAX_PROCESSES})
  --tool-max-open-files <n> AIRLOCK_TOOL_MAX_OPEN_FILES files each process of a sandboxed call may have open (default ${DEFAULT_MAX_OPEN_FILES})
  --tool-tmp-size <MiB>  AIRLOCK_TOOL_TMP_SIZE MiB a sandboxed call's /tmp, /dev/shm and System V shared memory may each hold, in memory (default ${DEFAULT_TMPFS_MIB})
Several instances on one PostgreSQL database (see the README):
  --database-url <url>   AIRLOCK_DATABASE_URL  postgres://… shared by the instances, in place of --data-dir
  --database-schema <s>  AIRLOCK_DATABASE_SCHEMA  the schema of Airlock's tables (default public)
  --instance-id <id>     AIRLOCK_INSTANCE_ID   this instance's name among them (default host-pid-random)
  --lease-ms <ms>        AIRLOCK_LEASE_MS      how long a stopped instance keeps its runs before another takes them (default 10000)
  --database-pool <n>    AIRLOCK_DATABASE_POOL connections this instance keeps to the database (default 20)
Capacity (each also readable from the environment; see the README for what each protects against):
  --max-connections <n>               AIRLOCK_MAX_CONNECTIONS               authenticated WebSockets at once (default 4096)
  --max-unauthenticated <n>           AIRLOCK_MAX_UNAUTHENTICATED           sockets yet to present the token (default 16)
  --auth-timeout-ms <ms>              AIRLOCK_AUTH_TIMEOUT_MS               time to present the token (default 3000)
  --auth-grace-ms <ms>                AIRLOCK_AUTH_GRACE_MS                 time a new socket keeps its place against newcomers (default 0)
  --max-http-connections <n>          AIRLOCK_MAX_HTTP_CONNECTIONS          plain HTTP sockets at once (default 128)
  --runs-per-connection <n>           AIRLOCK_RUNS_PER_CONNECTION           runs going at once per connection (default 4)
  --runs-per-minute <n>               AIRLOCK_RUNS_PER_MINUTE               new runs per minute per connection (default 30)
  --run-burst <n>                     AIRLOCK_RUN_BURST                     new runs back to back per connection (default 10)
  --subscriptions-per-connection <n>  AIRLOCK_SUBSCRIPTIONS_PER_CONNECTION  open subscriptions per connection (default 32)
  --max-model-requests <n>            AIRLOCK_MAX_MODEL_REQUESTS            requests to the model server at once (default 64)
  --model-timeout-ms <ms>             AIRLOCK_MODEL_TIMEOUT_MS              time to the first piece of a model's answer (default ${DEFAULT_REQUEST_TIMEOUT_MS})
  --model-idle-timeout-ms <ms>        AIRLOCK_MODEL_IDLE_TIMEOUT_MS         time between pieces of a model's answer (default ${DEFAULT_IDLE_TIMEOUT_MS})
  --model-turn-timeout-ms <ms>        AIRLOCK_MODEL_TURN_TIMEOUT_MS         time one model turn may stream in all (default ${DEFAULT_TURN_TIMEOUT_MS})
  --max-running-calls <n>             AIRLOCK_MAX_RUNNING_CALLS             tool calls running at once, over all runs (default 64)
Environment only:
  AIRLOCK_TOKEN            access token (at least 32 characters; random when unset; AIRLOCK_TOKEN_FILE keeps it out of the environment)
  AIRLOCK_API_KEY          API key for the model server
  AIRLOCK_ALLOWED_ORIGINS  comma-separated extra origins allowed to connect, e.g. https://chat.example.test`;

const MIN_TOKEN_LENGTH = 32;

const FLAGS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'allow-remote': { type: 'boolean' },
  'allow-home-workspace': { type: 'boolean' },
  workspace: { type: 'string' },
  'model-url': { type: 'string' },
  model: { type: 'string' },
  'mcp-config': { type: 'string' },
  'data-dir': { type: 'string' },
  'database-url': { type: 'string' },
  'database-schema': { type: 'string' },
  'instance-id': { type: 'string' },
  'lease-ms': { type: 'string' },
  'database-pool': { type: 'string' },
  'token-file': { type: 'string' },
  'api-key-file': { type: 'string' },
  'tool-sandbox': { type: 'string' },
  'tool-network': { type: 'string' },
  'tool-max-processes': { type: 'string' },
  'tool-max-open-files': { type: 'string' },
  'tool-tmp-size': { type: 'string' },
  'max-connections': { type: 'string' },
  'max-unauthenticated': { type: 'string' },
  'auth-timeout-ms': { type: 'string' },
  'auth-grace-ms': { type: 'string' },
  'max-http-connections': { type: 'string' },
  'runs-per-connection': { type: 'string' },
  'runs-per-minute': { type: 'string' },
  'run-burst': { type: 'string' },
  'subscriptions-per-connection': { type: 'string' },
  'max-model-requests': { type: 'string' },
  'model-timeout-ms': { type: 'string' },
  'model-idle-timeout-ms': { type: 'string' },
  'model-turn-timeout-ms': { type: 'string' },
  'max-running-calls': { type: 'string' },
} as const;

/** A command-line flag, by its name without the dashes. */
export type ConfigFlag = keyof typeof FLAGS;

/** An IPv6 address in brackets, as a URL writes it (`[::1]`), is the address. */
const hostSchema = z
  .string()
  .transform((host) => {
    const inner = /^\[(.*)\]$/.exec(host)?.[1];
    return inner !== undefined && isIP(inner) === 6 ? inner : host;
  })
  .pipe(
    z
      .string()
      .max(253)
      .refine((host) => isIP(host) !== 0 || /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(host), {
        message: 'must be an IP address or a host name',
      }),
  );
const portSchema = z
  .string()
  .regex(/^\d{1,5}$/, 'must be a whole number from 0 to 65535')
  .transform(Number)
  .refine((port) => port <= 65535, 'must be a whole number from 0 to 65535');
const switchSchema = z.enum(['1', '0', 'true', 'false'], { error: 'must be 1 or 0' }).transform((value) => value === '1' || value === 'true');
const tokenSchema = z
  .string()
  .min(MIN_TOKEN_LENGTH, `must be at least ${MIN_TOKEN_LENGTH} characters (e.g. \`openssl rand -hex 32\`)`)
  .max(512, 'must be at most 512 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');
const modelUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
  .max(2048, 'must be at most 2048 characters')
  // Each check passes what is not a URL: the first one has said so already (zod runs them all).
  .refine((raw) => {
    const url = URL.canParse(raw) ? new URL(raw) : undefined;
    return url === undefined || (url.username === '' && url.password === '');
  }, 'must not contain a user or password: give the key in AIRLOCK_API_KEY or --api-key-file instead')
  // The API's paths (/models, /chat/completions) are added after the URL: a query or fragment would swallow them.
  .refine((raw) => !URL.canParse(raw) || (!raw.includes('?') && !raw.includes('#')), 'must not contain a query (?…) or a fragment (#…): Airlock adds the API paths (/models, /chat/completions) after it');
const nameSchema = z.string().max(256, 'must be at most 256 characters');
// Sent in a header: a line break, a byte order mark or a control character made every request fail, and the start-up
// warning of the failed model list quoted the key.
const apiKeySchema = z
  .string()
  .max(8192, 'must be at most 8192 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces, the key alone on one line');
const maxProcessesRange = `must be a whole number from ${MIN_MAX_PROCESSES} to ${MAX_MAX_PROCESSES}`;
const maxProcessesSchema = z
  .string()
  .regex(/^\d{1,7}$/, maxProcessesRange)
  .transform(Number)
  .refine((value) => value >= MIN_MAX_PROCESSES && value <= MAX_MAX_PROCESSES, maxProcessesRange);
const maxOpenFilesRange = `must be a whole number from ${MIN_MAX_OPEN_FILES} to ${MAX_MAX_OPEN_FILES}`;
const maxOpenFilesSchema = z
  .string()
  .regex(/^\d{1,7}$/, maxOpenFilesRange)
  .transform(Number)
  .refine((value) => value >= MIN_MAX_OPEN_FILES && value <= MAX_MAX_OPEN_FILES, maxOpenFilesRange);
const tmpSizeRange = `must be a whole number of MiB from ${MIN_TMPFS_MIB} to ${MAX_TMPFS_MIB}`;
const tmpSizeSchema = z
  .string()
  .regex(/^\d{1,7}$/, tmpSizeRange)
  .transform(Number)
  .refine((value) => value >= MIN_TMPFS_MIB && value <= MAX_TMPFS_MIB, tmpSizeRange);

/**
 * Variables whose empty value is an error rather than unset: unset, they give the weaker setting (the network on, a
 * sandbox only if it can start), so `AIRLOCK_TOOL_NETWORK=` from a template left blank must not quietly mean "on".
 */
const NOT_EMPTY: Readonly<Record<string, string>> = {
  AIRLOCK_TOOL_NETWORK: 'on or off',
  AIRLOCK_TOOL_SANDBOX: 'auto, bubblewrap or none',
};

/** A value and where it came from, so an error can name the flag or the variable. */
interface Sourced {
  value: string;
  source: string;
}

/**
 * Reads and validates the configuration once, from command-line flags (which win) and the environment.
 * Throws ConfigError naming the variable or flag at fault.
 */
export function loadConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  cwd: string = process.cwd(),
  installation: string = INSTALLATION,
  accountHome: string | null = ACCOUNT_HOME,
): AirlockConfig {
  const flags = parseFlags(argv);
  const sources: Partial<Record<ConfigFlag, string>> = {};
  const pick = (flag: ConfigFlag, variable: string): Sourced | undefined => {
    const fromFlag = flags[flag];
    // An empty flag is a variable left unset in `--data-dir "$DIR"`: read as a path it was the current directory.
    if (fromFlag === '') throw new ConfigError(`--${flag}`, 'is empty: give a value, or leave the flag out for the default');
    const found = typeof fromFlag === 'string' ? { value: fromFlag, source: `--${flag}` } : fromEnv(env, variable);
    if (found === undefined && env[variable] === '' && Object.hasOwn(NOT_EMPTY, variable)) {
      throw new ConfigError(variable, `is set but empty: give ${NOT_EMPTY[variable]}, or unset it for the default`);
    }
    if (found !== undefined) sources[flag] = blankEdgesRefused(found).source;
    return found;
  };

  const host = validate(hostSchema, pick('host', 'AIRLOCK_HOST')) ?? '127.0.0.1';
  const port = validate(portSchema, pick('port', 'AIRLOCK_PORT')) ?? 7700;
  const allowRemote = flags['allow-remote'] === true || (validate(switchSchema, fromEnv(env, 'AIRLOCK_ALLOW_REMOTE')) ?? false);
  if (!allowRemote && !isLoopbackHost(host)) {
    const source = typeof flags.host === 'string' ? '--host' : 'AIRLOCK_HOST';
    throw new ConfigError(source, `"${host}" is not a loopback address; binding it exposes a shell to the network, so it needs --allow-remote or AIRLOCK_ALLOW_REMOTE=1`);
  }

  const tokenFile = secretFile(pick('token-file', 'AIRLOCK_TOKEN_FILE'), fromEnv(env, 'AIRLOCK_TOKEN'), {
    cwd,
    ownerOnly: true,
    changedBy: 'set a token they know, with which they run commands through Airlock as you',
  });
  const apiKeyFile = secretFile(pick('api-key-file', 'AIRLOCK_API_KEY_FILE'), fromEnv(env, 'AIRLOCK_API_KEY'), {
    cwd,
    ownerOnly: false,
    changedBy: 'put in a key of their own, under which the model server keeps your chats',
  });
  const givenToken = validate(tokenSchema, tokenFile?.secret ?? fromEnv(env, 'AIRLOCK_TOKEN'));
  const token = givenToken ?? randomBytes(32).toString('base64url');

  const workspaceInput = pick('workspace', 'AIRLOCK_WORKSPACE');
  const workspace = workspaceInput === undefined ? defaultWorkspace(env, cwd, installation, accountHome) : directory(workspaceInput, cwd);
  const overlap = installationOverlap(workspace, installation);
  if (overlap !== null) {
    throw new ConfigError(
      workspaceInput?.source ?? 'the workspace',
      `"${workspace}" ${overlap} Airlock's own files (${realpathOr(installation)}): a tool allowed there could change Airlock itself, its web page or its launcher, and so every later decision. Choose a folder of its own with --workspace`,
    );
  }
  const shared = sharedFolderOverlap(workspace, serverTempFolder(env));
  if (shared !== undefined) throw new ConfigError(workspaceInput?.source ?? 'the workspace', shared);
  // The account's home too, not only HOME: the shell at the next login reads the account's, whatever HOME says now.
  const homes = [env.HOME !== undefined && isAbsolute(env.HOME) ? env.HOME : null, accountHome].filter((home) => home !== null);
  const workspaceWarning = homes.map((home) => homeFolderWarning(workspace, home)).find((warning) => warning !== undefined);
  const allowHomeWorkspace = flags['allow-home-workspace'] === true || (validate(switchSchema, fromEnv(env, 'AIRLOCK_ALLOW_HOME_WORKSPACE')) ?? false);
  if (workspaceWarning !== undefined && !allowHomeWorkspace) {
    throw new ConfigError(workspaceInput?.source ?? 'the workspace', `${workspaceWarning}, or give --allow-home-workspace (AIRLOCK_ALLOW_HOME_WORKSPACE=1) to take it all the same`);
  }
  // Paths apart, the installation may still share its files with the workspace: a hard link has no path in common.
  const sharedFile = sharedInstallationFile(workspace, installation);
  if (sharedFile !== undefined) throw new ConfigError(workspaceInput?.source ?? 'the workspace', sharedFile);
  const dataDirInput = pick('data-dir', 'AIRLOCK_DATA_DIR');
  const dataDir = dataDirectory(dataDirInput, env, cwd, accountHome);
  // The tools hide a data folder inside the workspace, not one that is the workspace (nor can the sandbox mask it).
  if (realpathOr(dataDir) === workspace) {
    const [source, shown, is] = dataDirInput === undefined ? [workspaceInput?.source ?? 'the workspace', workspace, 'the data folder'] : [dataDirInput.source, dataDir, 'the workspace'];
    throw new ConfigError(source, `"${shown}" is ${is}: the file tools would list and replace the database, and with it every rule. Give each a folder of its own (--data-dir, --workspace)`);
  }
  const mcpInput = pick('mcp-config', 'AIRLOCK_MCP_CONFIG');
  const sandboxInput = pick('tool-sandbox', 'AIRLOCK_TOOL_SANDBOX');
  const toolSandbox = validate(z.enum(['auto', 'bubblewrap', 'none'], { error: 'must be auto, bubblewrap or none' }), sandboxInput) ?? 'auto';
  const networkInput = pick('tool-network', 'AIRLOCK_TOOL_NETWORK');
  const toolNetwork = validate(z.enum(['on', 'off'], { error: 'must be on or off' }), networkInput) !== 'off';
  if (!toolNetwork && toolSandbox === 'none') {
    throw new ConfigError(networkInput?.source ?? 'AIRLOCK_TOOL_NETWORK', `off needs the bubblewrap sandbox, which ${sandboxInput?.source ?? 'AIRLOCK_TOOL_SANDBOX'} none turns off`);
  }
  const database = databaseFrom(pick);
  if (database.database !== undefined && dataDirInput !== undefined) {
    const urlSource = sources['database-url'] ?? 'AIRLOCK_DATABASE_URL';
    throw new ConfigError(dataDirInput.source, `give either ${dataDirInput.source} or ${urlSource}, not both: with a database the chats are kept there`);
  }

  return {
    host,
    port,
    allowRemote,
    token,
    tokenGenerated: givenToken === undefined,
    ...(tokenFile === undefined ? {} : { tokenFile: tokenFile.path }),
    workspace,
    ...(workspaceWarning === undefined ? {} : { workspaceWarning }),
    modelUrl: validate(modelUrlSchema, pick('model-url', 'AIRLOCK_MODEL_URL')),
    model: validate(nameSchema, pick('model', 'AIRLOCK_MODEL')),
    apiKey: validate(apiKeySchema, apiKeyFile?.secret ?? fromEnv(env, 'AIRLOCK_API_KEY')),
    secretFiles: [tokenFile?.path, apiKeyFile?.path].filter((file) => file !== undefined),
    toolSandbox,
    toolNetwork,
    toolMaxProcesses: validate(maxProcessesSchema, pick('tool-max-processes', 'AIRLOCK_TOOL_MAX_PROCESSES')) ?? DEFAULT_MAX_PROCESSES,
    toolMaxOpenFiles: validate(maxOpenFilesSchema, pick('tool-max-open-files', 'AIRLOCK_TOOL_MAX_OPEN_FILES')) ?? DEFAULT_MAX_OPEN_FILES,
    toolTmpSize: validate(tmpSizeSchema, pick('tool-tmp-size', 'AIRLOCK_TOOL_TMP_SIZE')) ?? DEFAULT_TMPFS_MIB,
    mcpConfigPath: mcpInput === undefined ? undefined : readableFile(mcpInput, cwd),
    ...(mcpInput === undefined ? {} : { mcpConfigName: resolve(cwd, mcpInput.value) }),
    allowedOrigins: parseOrigins(fromEnv(env, 'AIRLOCK_ALLOWED_ORIGINS')),
    dataDir,
    ...database,
    capacity: capacityFrom((flag, variable) => pick(flag, variable)),
    sources,
  };
}

/** Far more than the longest secret taken (an API key of 8192 characters). */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/** A secret read from a file (one line; a final newline is dropped); giving both the file and the variable is an error. */
function secretFile(
  file: Sourced | undefined,
  variable: Sourced | undefined,
  options: {
    /** Folder a relative path is resolved from. */
    cwd: string;
    /** Refuse a file that other users may read or change, as ssh refuses such a key: whoever reads the token has the shell. */
    ownerOnly: boolean;
    /** What another user who may change the file, or replace it, could do with it: the end of the refusal's sentence. */
    changedBy: string;
  },
): { path: string; secret: Sourced } | undefined {
  if (file === undefined) return undefined;
  if (variable !== undefined) throw new ConfigError(file.source, `give either ${file.source} or ${variable.source}, not both`);
  const path = readableFile(file, options.cwd);
  const info = statSync(path);
  // Read whole otherwise: a file of gigabytes given by mistake held the start and took its size in memory.
  if (info.size > MAX_SECRET_FILE_BYTES) throw new ConfigError(file.source, `"${path}" is larger than ${MAX_SECRET_FILE_BYTES / 1024} KiB: it should hold the secret alone, on one line`);
  const mode = info.mode & 0o777;
  if (options.ownerOnly && (mode & 0o077) !== 0) {
    throw new ConfigError(file.source, `"${path}" is open to other users (mode ${mode.toString(8).padStart(4, '0')}); make it readable by you alone: chmod 600 ${shellQuoted(path)}`);
  }
  // Owner-only is not enough: running as root, a file another user wrote with mode 0600 was taken, and they knew the token.
  const changeable = changeableByOthers(path, info);
  if (changeable !== undefined) throw new ConfigError(file.source, changeableProblem(path, changeable, options.changedBy));
  const text = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  return { path, secret: { value: text, source: `${file.source} (${path})` } };
}

/** Why a secret file another user may change, or replace (see changeableByOthers), is refused; `changedBy` says what they could then do. */
function changeableProblem(path: string, changeable: ChangeableByOthers, changedBy: string): string {
  switch (changeable.kind) {
    case 'owner':
      return `"${path}" is owned by another user (user ${changeable.uid}, Airlock runs as ${changeable.ownUid}), who may change it and so ${changedBy}`;
    case 'mode':
      return `"${path}" may be changed by other users (mode ${changeable.mode}), who could then ${changedBy}: chmod go-w ${shellQuoted(path)}`;
    case 'folder-owner':
      return `"${path}" is in a folder of another user (${changeable.folder} is owned by user ${changeable.uid}), who could put a file of their own in its place, and so ${changedBy}`;
    case 'folder-mode':
      return `"${path}" is in a folder other users may change (${changeable.folder}, mode ${changeable.mode}), who could put a file of their own in its place, and so ${changedBy}: chmod go-w ${shellQuoted(changeable.folder)}`;
  }
}

function capacityFrom(pick: (flag: ConfigFlag, variable: string) => Sourced | undefined): Capacity {
  const capacity = { ...DEFAULT_CAPACITY };
  for (const key of Object.keys(CAPACITY_SETTINGS) as (keyof Capacity)[]) {
    const { flag, variable, min, max } = CAPACITY_SETTINGS[key];
    const schema = z
      .string()
      .regex(/^\d{1,9}$/, `must be a whole number from ${min} to ${max}`)
      .transform(Number)
      .refine((value) => value >= min && value <= max, `must be a whole number from ${min} to ${max}`);
    capacity[key] = validate(schema, pick(flag, variable)) ?? DEFAULT_CAPACITY[key];
  }
  return capacity;
}

const databaseUrlSchema = z
  .string()
  .max(2000, 'must be at most 2000 characters')
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.hostname !== '';
    } catch {
      return false;
    }
  }, 'must be a postgres://user@host:port/database URL');
const schemaSchema = z
  .string()
  .regex(/^[a-z_][a-z0-9_]{0,40}$/, 'must be 1 to 41 lower-case letters, digits or "_", not starting with a digit')
  // PostgreSQL's own schemas: names starting with pg_ are reserved, and information_schema is the catalog's.
  .refine((schema) => !schema.startsWith('pg_') && schema !== 'information_schema', 'names one of PostgreSQL\'s own schemas (pg_…, information_schema): give one for Airlock');
const poolSchema = z
  .string()
  .regex(/^\d{1,4}$/, 'must be a whole number from 2 to 1000')
  .transform(Number)
  .refine((value) => value >= 2 && value <= 1000, 'must be a whole number from 2 to 1000');
const instanceIdSchema = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, ".", "_" or "-"');
const leaseSchema = z
  .string()
  .regex(/^\d{1,7}$/, 'must be a whole number of milliseconds from 200 to 600000')
  .transform(Number)
  .refine((value) => value >= 200 && value <= 600_000, 'must be a whole number of milliseconds from 200 to 600000');

function databaseFrom(pick: (flag: ConfigFlag, variable: string) => Sourced | undefined): Pick<AirlockConfig, 'database'> {
  const url = validate(databaseUrlSchema, pick('database-url', 'AIRLOCK_DATABASE_URL'));
  const schema = validate(schemaSchema, pick('database-schema', 'AIRLOCK_DATABASE_SCHEMA'));
  const instanceId = validate(instanceIdSchema, pick('instance-id', 'AIRLOCK_INSTANCE_ID'));
  const leaseMs = validate(leaseSchema, pick('lease-ms', 'AIRLOCK_LEASE_MS'));
  const poolSize = validate(poolSchema, pick('database-pool', 'AIRLOCK_DATABASE_POOL'));
  if (url === undefined) {
    const stray =
      instanceId !== undefined
        ? '--instance-id / AIRLOCK_INSTANCE_ID'
        : leaseMs !== undefined
          ? '--lease-ms / AIRLOCK_LEASE_MS'
          : schema !== undefined
            ? '--database-schema / AIRLOCK_DATABASE_SCHEMA'
            : poolSize !== undefined
              ? '--database-pool / AIRLOCK_DATABASE_POOL'
              : undefined;
    if (stray !== undefined) throw new ConfigError(stray, 'only applies with --database-url / AIRLOCK_DATABASE_URL');
    return {};
  }
  return { database: { url, schema, instanceId: instanceId ?? `${hostname().replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 40)}-${process.pid}-${randomBytes(3).toString('hex')}`, leaseMs: leaseMs ?? 10_000, poolSize: poolSize ?? 20 } };
}

const KERNEL_FOLDERS = ['/proc', '/sys'];

/** The chats folder: as given (made absolute), or the XDG data folder; it is created when first used. */
function dataDirectory(given: Sourced | undefined, env: Readonly<Record<string, string | undefined>>, cwd: string, accountHome: string | null): string {
  if (given !== undefined) {
    if (given.value.includes('\0')) throw new ConfigError(given.source, 'must be a folder path');
    const path = givenPath(given, cwd);
    // Creating a folder in /proc spins forever (mkdir answers that /proc itself is missing), at start-up, unsaid.
    const kernel = KERNEL_FOLDERS.find((folder) => path === folder || isWithin(path, folder));
    if (kernel !== undefined) throw new ConfigError(given.source, `"${path}" is inside ${kernel}, a folder of the kernel, where no database can be kept`);
    // Found only when the database was opened, a file said "Check that the folder exists".
    const file = nearestExisting(path);
    if (file !== undefined && !statSync(file).isDirectory()) {
      const where = file === path ? `"${path}" is a file` : `"${path}" is inside "${file}", a file`;
      throw new ConfigError(given.source, `${where}, not a folder: give the folder to keep the database in (it is made when missing)`);
    }
    return path;
  }
  const xdg = env.XDG_DATA_HOME;
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(homeFolder(env, accountHome, 'give the data folder with --data-dir (AIRLOCK_DATA_DIR)'), '.local', 'share');
  return join(base, 'airlock');
}

/**
 * HOME when it is a full path, else the account's home folder (the password database's), as the check of a workspace
 * holding the home folder takes it. Set but empty (a blank in a service file, `env HOME=`), HOME put the data folder
 * at `.local/share/airlock` under the folder Airlock was started from, where a start from anywhere else found none of
 * its chats. `instead` says what to give when there is neither.
 */
function homeFolder(env: Readonly<Record<string, string | undefined>>, accountHome: string | null, instead: string): string {
  const home = env.HOME;
  if (home !== undefined && isAbsolute(home)) return home;
  if (accountHome !== null) return accountHome;
  const problem = home === undefined ? 'is not set' : home === '' ? 'is empty' : `is "${home}", not a full path`;
  throw new ConfigError('HOME', `${problem}, and this account has no home folder: set HOME to a full path, or ${instead}`);
}

/** `path` or the nearest of its parents that exists; undefined when none can be seen. */
function nearestExisting(path: string): string | undefined {
  for (let at = path; ; at = dirname(at)) {
    try {
      statSync(at);
      return at;
    } catch {
      // Missing, under a file (ENOTDIR) or not to be seen: its parent is asked.
      if (dirname(at) === at) return undefined;
    }
  }
}

/**
 * The flags given. A flag given twice with different values is an error naming it: taking the last, as parseArgs
 * does, let `--tool-network off --tool-network on` (an alias adding to a command line) start with the network on.
 */
function parseFlags(argv: readonly string[]): Partial<Record<ConfigFlag, string | boolean>> {
  let parsed;
  try {
    parsed = parseArgs({ args: joinNegativeValues(argv), options: FLAGS, strict: true, allowPositionals: false, tokens: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const message = error instanceof Error ? error.message : String(error);
    const quoted = /'([^' ]+)/.exec(message)?.[1] ?? 'arguments';
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new ConfigError(quoted, 'unknown flag (see --help)');
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') throw new ConfigError(`argument "${quoted}"`, 'airlock takes no positional arguments (see --help)');
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      throw new ConfigError(quoted, message.includes('does not take') ? 'takes no value' : 'needs a value');
    }
    throw new ConfigError('arguments', message);
  }
  const given = new Map<string, string | undefined>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option') continue;
    if (given.has(token.name) && given.get(token.name) !== token.value) {
      // The values are not repeated: one may be a secret (a database URL with its password).
      throw new ConfigError(`--${token.name}`, 'given more than once with different values; give it once');
    }
    given.set(token.name, token.value);
  }
  return parsed.values;
}

/**
 * `--max-running-calls -1` as `--max-running-calls=-1`: parseArgs takes a value starting with "-" for a flag and
 * answers "needs a value", where the range check would say what is wrong. Only a "-" and a digit: no flag looks so.
 */
function joinNegativeValues(argv: readonly string[]): string[] {
  const joined: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === '--') {
      joined.push(...argv.slice(index));
      break;
    }
    const next = argv[index + 1];
    const name = arg.slice(2);
    if (arg.startsWith('--') && Object.hasOwn(FLAGS, name) && FLAGS[name as ConfigFlag].type === 'string' && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${arg}=${next}`);
      index++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/** AIRLOCK_ variables the server does not read but other parts of Airlock do, or that it sets for what it starts. */
const OTHERS_VARIABLES = new Set(['AIRLOCK_URL', 'AIRLOCK_DECISION_GUARD_MS', 'AIRLOCK_DEV_SERVER', 'AIRLOCK_LAUNCHER_FD', 'AIRLOCK_TOOL_CALL', 'AIRLOCK_MCP_SERVER']);

/**
 * The AIRLOCK_ variables in `env` that no setting reads: a misspelt `AIRLOCK_TOOL_NETWROK=off` left the network on
 * without a word, where a misspelt flag stops start-up. Said at start-up.
 */
export function unreadVariables(env: Readonly<Record<string, string | undefined>>): string[] {
  const read = new Set([
    ...Object.keys(FLAGS).map((flag) => `AIRLOCK_${flag.toUpperCase().replaceAll('-', '_')}`),
    'AIRLOCK_TOKEN',
    'AIRLOCK_API_KEY',
    'AIRLOCK_ALLOWED_ORIGINS',
  ]);
  return Object.keys(env).filter((name) => name.startsWith('AIRLOCK_') && !read.has(name) && !OTHERS_VARIABLES.has(name));
}

/** An unset or empty variable counts as not given (but see NOT_EMPTY). */
function fromEnv(env: Readonly<Record<string, string | undefined>>, variable: string): Sourced | undefined {
  const value = env[variable];
  return value === undefined || value === '' ? undefined : blankEdgesRefused({ value, source: variable });
}

/**
 * Trimmed by some readers and not others (a URL was, a model name or "off " was not), a value with a blank at an edge
 * is neither: a file of variables with Windows line ends gave `AIRLOCK_ALLOW_REMOTE=1\r` "must be 1 or 0".
 */
function blankEdgesRefused(input: Sourced): Sourced {
  if (input.value.trim() !== input.value) throw new ConfigError(input.source, 'has a blank (a space, tab or line break) at its start or end: give the value alone');
  return input;
}

function validate<T>(schema: z.ZodType<T, string>, input: Sourced | undefined): T | undefined {
  if (input === undefined) return undefined;
  const result = schema.safeParse(input.value);
  if (!result.success) throw new ConfigError(input.source, result.error.issues[0]?.message ?? 'is not valid');
  return result.data;
}

/**
 * Said at start-up when tools may reach the shared database without a secret: a URL with no password authenticates
 * by the database's own rules (trust, peer), which a sandboxed command meets as well as the server does, over TCP
 * while tools have the network; so does one with a password the database does not check (`passwordIgnored`, from
 * `databaseIgnoresPassword`). Null when there is nothing to say.
 */
export function databaseReachWarning(config: Pick<AirlockConfig, 'database' | 'toolNetwork'>, options: { passwordIgnored?: boolean } = {}): string | null {
  if (config.database === undefined || !config.toolNetwork) return null;
  let password: string;
  try {
    const url = new URL(config.database.url);
    password = url.password || (url.searchParams.get('password') ?? '');
  } catch {
    return null;
  }
  if (password !== '') {
    if (options.passwordIgnored !== true) return null;
    return (
      'Warning: the database let this user in with a wrong password (it does not check the password: trust authentication), ' +
      'and tools run with the network on. A command you allow can connect too, with any password or none, and write rules ' +
      'or decisions that apply to every later call. Make the database ask for the password (scram-sha-256 in pg_hba.conf), ' +
      'or run tools with --tool-network off.'
    );
  }
  return (
    'Warning: the database URL has no password, and tools run with the network on. If the database lets this user in ' +
    'without one (trust or peer authentication), a command you allow can connect too and write rules or decisions ' +
    'that apply to every later call. Give Airlock a database role with a password, or run tools with --tool-network off.'
  );
}

/**
 * Said at start-up when the model server is reached over plain HTTP beyond this machine: every chat goes to it, with
 * what the tools returned (file contents, command output), and the API key in each request's header. Null when the URL
 * is https, or names this machine (a loopback address, localhost or a name under it), or none is given.
 */
export function plainHttpModelWarning(config: Pick<AirlockConfig, 'modelUrl' | 'apiKey'>): string | null {
  if (config.modelUrl === undefined || !URL.canParse(config.modelUrl)) return null;
  const url = new URL(config.modelUrl);
  const host = url.hostname.toLowerCase();
  if (url.protocol !== 'http:' || isLoopbackHost(host) || host.endsWith('.localhost')) return null;
  const what = config.apiKey === undefined ? 'crosses the network unencrypted, for anyone on the way to read' : 'and the API key cross the network unencrypted, for anyone on the way to read, and the key to reuse';
  return (
    `Warning: the model server at ${url.origin} is reached over plain HTTP, beyond this machine: every chat (what you write, ` +
    `what the tools return, the model’s answers) ${what}. Give an https:// model URL, or reach the model server through an SSH tunnel or a VPN.`
  );
}

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/** This checkout or installation: the folder holding apps/ and packages/ (from src/config.ts or dist/main.js, three up). */
const INSTALLATION = fileURLToPath(new URL('../../..', import.meta.url));

/** Used when no workspace is given and the folder Airlock was started from is its own (`npm start` in the checkout). */
export const FALLBACK_WORKSPACE = 'airlock-workspace';

/**
 * The folder the person started Airlock from (npm's INIT_CWD: `npm start` itself runs in the checkout), unless that
 * is Airlock's own folder or inside it; then ~/airlock-workspace, made owner-only if it is new.
 */
function defaultWorkspace(env: Readonly<Record<string, string | undefined>>, cwd: string, installation: string, accountHome: string | null): string {
  const initCwd = env.INIT_CWD;
  const startedFrom = initCwd !== undefined && isAbsolute(initCwd) ? initCwd : cwd;
  const started = directory({ value: startedFrom, source: initCwd === undefined ? 'the current directory' : 'INIT_CWD' }, cwd);
  if (installationOverlap(started, installation) === null) return started;
  const fallback = join(homeFolder(env, accountHome, 'give a workspace with --workspace'), FALLBACK_WORKSPACE);
  try {
    mkdirSync(fallback, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new ConfigError('the workspace', `"${fallback}" ${describeFsError(error)}; give one with --workspace`);
  }
  return directory({ value: fallback, source: 'the workspace' }, cwd);
}

/** The home folder of the account the server runs as (the password database's), whatever HOME says; null when it has none. */
const ACCOUNT_HOME = ((): string | null => {
  try {
    const { homedir: home } = userInfo();
    return isAbsolute(home) ? home : null;
  } catch {
    return null;
  }
})();

/**
 * The warning for a workspace that is the home folder `home` or holds it (`/` does): its shell start-up files and
 * `.ssh` are then files a call may write, which run, or let someone in, outside any sandbox, and so are the caches and
 * settings builds read code from, which no rule check follows whole. Such a workspace is refused unless the person
 * asks for it (`--allow-home-workspace`), and then warned about. Undefined otherwise.
 */
export function homeFolderWarning(workspace: string, home: string): string | undefined {
  const real = realpathOr(home);
  const where = workspace === real ? 'is your home folder' : isWithin(real, workspace) ? `holds your home folder (${real})` : undefined;
  if (where === undefined) return undefined;
  return (
    `The workspace ${workspace} ${where}: a call allowed there can change your shell's start-up files (.bashrc, .profile) ` +
    'and SSH keys (.ssh/authorized_keys), which run or let others in at your next login, outside any sandbox, and the ' +
    'package caches and settings (~/.cargo, ~/.m2, ~/go, ~/.config) that programs your rules allow take code from. ' +
    'Choose a project folder with --workspace'
  );
}

/**
 * Folders the whole machine shares: system folders, the parent of the home folders, and those where programs keep
 * temporary files and Unix sockets. A workspace is bound read-write into every call, over the sandbox's own /tmp and
 * its covers of the socket folders, so a workspace that is or holds one gives calls the host's: the person's tmux,
 * ssh-agent or X11 socket there runs commands, signs in or types outside the sandbox.
 */
const SHARED_FOLDERS = ['/', '/tmp', '/var/tmp', '/dev/shm', '/run', '/var/run', '/proc', '/sys', '/dev', '/etc', '/usr', '/var', '/home', '/boot', '/bin', '/sbin', '/lib', '/lib64', '/opt', '/srv', '/mnt', '/media', ...SOCKET_FOLDERS];

/** Folders no workspace may lie inside: the kernel's, and those of Unix sockets the sandbox covers (see SOCKET_FOLDERS). */
const NO_WORKSPACE_INSIDE = ['/proc', '/sys', '/dev', ...SOCKET_FOLDERS];

/** The server's temporary folder as os.tmpdir() reads it from `env`: ssh-agent and others put their sockets there too. */
function serverTempFolder(env: Readonly<Record<string, string | undefined>>): string {
  const given = [env.TMPDIR, env.TMP, env.TEMP].find((value) => value !== undefined && value !== '');
  return given !== undefined && isAbsolute(given) ? given : '/tmp';
}

/**
 * Why a workspace (a real path) overlaps a folder the machine shares (see SHARED_FOLDERS), or the server's temporary
 * folder `temp`; undefined when it does not. Compared by real paths (/var/run is often /run).
 */
export function sharedFolderOverlap(workspace: string, temp: string): string | undefined {
  const consequence =
    "a call would see it read-write, with other programs' files and Unix sockets (tmux, ssh-agent, X11, D-Bus: through one a call runs commands outside the sandbox). Choose a project folder of its own with --workspace";
  const named = (folder: string, real: string) => (folder === real ? folder : `${folder} (${real})`);
  const overlap = (folders: readonly string[]): string | undefined => {
    const reals = folders.map((folder) => [folder, realpathOr(folder)] as const);
    const same = reals.find(([, real]) => real === workspace);
    if (same !== undefined) return `"${workspace}" is ${named(...same)}`;
    const held = reals.find(([, real]) => isWithin(real, workspace));
    return held === undefined ? undefined : `"${workspace}" holds ${named(...held)}`;
  };
  const shared = overlap(SHARED_FOLDERS);
  if (shared !== undefined) return `${shared}, a folder the whole machine shares: ${consequence}`;
  const tempOverlap = overlap([temp]);
  if (tempOverlap !== undefined) return `${tempOverlap}, the server's temporary folder (TMPDIR), where programs keep files and sockets: ${consequence}`;
  for (const folder of NO_WORKSPACE_INSIDE) {
    const real = realpathOr(folder);
    if (isWithin(workspace, real)) return `"${workspace}" is inside ${folder}, a folder of the system or of its Unix sockets: ${consequence}`;
  }
  return undefined;
}

/** How a workspace sits against the installation: null when apart. Both are real paths or resolved as such. */
function installationOverlap(workspace: string, installation: string): string | null {
  const root = realpathOr(installation);
  if (workspace === root) return 'is the folder of';
  if (isWithin(root, workspace)) return 'holds';
  if (isWithin(workspace, root)) return 'is inside';
  return null;
}

function isWithin(inner: string, outer: string): boolean {
  const path = relative(outer, inner);
  return path !== '' && path !== '..' && !path.startsWith(`..${sep}`) && !isAbsolute(path);
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * A path as given, made absolute. One starting with "~" is refused: only a shell makes it the home folder, so from a
 * file of variables (systemd's, docker's) `AIRLOCK_DATA_DIR=~/.airlock` made a folder named ~ where Airlock was
 * started, and the chats were kept there, not found again from anywhere else.
 */
function givenPath(input: Sourced, cwd: string): string {
  if (input.value.startsWith('~')) throw new ConfigError(input.source, `"${input.value}" starts with "~", which only a shell turns into the home folder: give the full path`);
  return resolve(cwd, input.value);
}

function directory(input: Sourced, cwd: string): string {
  const path = givenPath(input, cwd);
  try {
    if (!statSync(path).isDirectory()) throw new ConfigError(input.source, `"${path}" is not a directory`);
    return realpathSync(path);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(input.source, `"${path}" ${describeFsError(error)}`);
  }
}

function readableFile(input: Sourced, cwd: string): string {
  const path = givenPath(input, cwd);
  try {
    if (!statSync(path).isFile()) throw new ConfigError(input.source, `"${path}" is not a regular file`);
    accessSync(path, constants.R_OK);
    return realpathSync(path);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(input.source, `"${path}" ${describeFsError(error)}`);
  }
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'does not exist';
  if (code === 'EACCES') return 'cannot be read (permission denied)';
  return `cannot be used (${code ?? String(error)})`;
}

function parseOrigins(input: Sourced | undefined): string[] {
  if (input === undefined) return [];
  const origins = input.value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (origins.length > 64) throw new ConfigError(input.source, 'at most 64 origins');
  return origins.map((entry) => {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new ConfigError(input.source, `"${entry}" is not an origin like https://chat.example.test`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(input.source, `"${entry}" must use http or https`);
    if (url.origin !== entry.toLowerCase()) {
      throw new ConfigError(input.source, `"${entry}" must be an exact origin with no path, e.g. ${url.origin}`);
    }
    return url.origin;
  });
}
