import { fstatSync } from 'node:fs';
import { Socket } from 'node:net';
import { ConfigError, type AirlockConfig } from './config';

/** Names the fd the launcher keeps open to this server: secrets arrive on it, and it closes when the launcher dies. */
export const LAUNCHER_FD_VARIABLE = 'AIRLOCK_LAUNCHER_FD';
/** Secrets the launcher takes out of the environment and hands over on the fd instead. */
export const HANDED_OVER_SECRETS = ['AIRLOCK_TOKEN', 'AIRLOCK_API_KEY', 'AIRLOCK_DATABASE_URL'] as const;

const MAX_MESSAGE_BYTES = 64 * 1024;
const READ_TIMEOUT_MS = 10_000;

export interface LauncherLink {
  /** The descriptor it is read from. */
  fd: number;
  /** The secrets the launcher handed over, by variable name. */
  secrets: Record<string, string>;
  /** Calls `listener` once when the launcher is gone (its end of the fd closed, as it does when the launcher dies, even by SIGKILL). */
  onClose(listener: () => void): void;
}

/** Opens the launcher's fd when this server was started by it; undefined otherwise. */
export async function openLauncherLink(env: Readonly<Record<string, string | undefined>>): Promise<LauncherLink | undefined> {
  const fdText = env[LAUNCHER_FD_VARIABLE];
  if (fdText === undefined || !/^\d+$/.test(fdText)) return undefined;
  // Node marks the first descriptors it inherits close-on-exec at start-up (libuv's uv_disable_stdio_inheritance),
  // this one among them: no tool or MCP server inherits it.
  const fd = Number(fdText);
  // Set where no launcher started this server (an environment copied from one it did), a closed descriptor crashed the
  // start with a stack trace, and another one (a terminal, a file) was read for secrets.
  const kind = describeDescriptor(fd);
  if (kind !== undefined) {
    throw new ConfigError(LAUNCHER_FD_VARIABLE, `names descriptor ${fd}, which is not the launcher's pipe (${kind}); only the launcher (bin/airlock.mjs) sets it: unset it to start the server directly`);
  }
  const socket = new Socket({ fd, readable: true, writable: false });
  let closed = false;
  const listeners: (() => void)[] = [];
  const close = () => {
    if (closed) return;
    closed = true;
    for (const listener of listeners.splice(0)) listener();
  };
  const line = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error('the launcher sent nothing')), READ_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\n');
      if (end === -1 && text.length <= MAX_MESSAGE_BYTES) return;
      clearTimeout(timer);
      socket.off('data', onData);
      if (end === -1) reject(new Error('the launcher sent too much'));
      else resolve(text.slice(0, end));
    };
    socket.on('data', onData);
    // A descriptor that is open but no pipe a launcher writes to (one of this process's own sockets).
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new ConfigError(LAUNCHER_FD_VARIABLE, `names descriptor ${fd}, which is not the launcher's pipe (${error.code ?? error.message}); only the launcher (bin/airlock.mjs) sets it: unset it to start the server directly`));
    });
    socket.once('end', () => {
      clearTimeout(timer);
      reject(new Error('the launcher closed its end before sending'));
    });
  });
  socket.on('end', close);
  socket.on('close', close);
  socket.on('error', close);
  // Nothing more arrives; reading on is how the end is noticed.
  socket.resume();
  return {
    fd,
    secrets: parseSecrets(line),
    onClose: (listener) => {
      if (closed) listener();
      else listeners.push(listener);
    },
  };
}

/** Why `fd` cannot be the launcher's end of a pipe; undefined when it can. */
function describeDescriptor(fd: number): string | undefined {
  try {
    const info = fstatSync(fd);
    return info.isSocket() || info.isFIFO() ? undefined : 'not a pipe';
  } catch {
    return 'not open';
  }
}

function parseSecrets(line: string): Record<string, string> {
  const parsed: unknown = JSON.parse(line);
  const secrets: Record<string, string> = {};
  if (typeof parsed !== 'object' || parsed === null) return secrets;
  for (const name of HANDED_OVER_SECRETS) {
    const value: unknown = Object.hasOwn(parsed, name) ? (parsed as Record<string, unknown>)[name] : undefined;
    if (typeof value === 'string' && value !== '') secrets[name] = value;
  }
  return secrets;
}

/**
 * What is said at start-up of each secret that came through the environment (to the launcher or to this server): the
 * token, the API key, and a database URL that holds a password (one without is no secret).
 */
export function environmentSecretWarnings(env: Readonly<Record<string, string | undefined>>): string[] {
  const given = (name: string) => env[name] !== undefined && env[name] !== '';
  const warnings = ['AIRLOCK_TOKEN', 'AIRLOCK_API_KEY'].filter(given).map((name) => warning(name, `Put it in a file readable only by you and set ${name}_FILE instead.`));
  if (given('AIRLOCK_DATABASE_URL') && holdsPassword(env.AIRLOCK_DATABASE_URL!)) {
    warnings.push(
      warning(
        'AIRLOCK_DATABASE_URL',
        'It holds a password: leave the password out of the URL and put it in ~/.pgpass (or the file PGPASSFILE names), readable only by you, ' +
          'which PostgreSQL clients read and the server hides from sandboxed tools.',
      ),
    );
  }
  return warnings;
}

/**
 * What is said at start-up of each secret given as a flag: a database URL that holds a password. Unlike the
 * environment, which only the same user reads, a command line is every local user's to read, the launcher's and the
 * server's, for as long as they run.
 */
export function commandLineSecretWarnings(config: Pick<AirlockConfig, 'database' | 'sources'>): string[] {
  const source = config.sources?.['database-url'];
  if (config.database === undefined || source === undefined || !source.startsWith('--') || !holdsPassword(config.database.url)) return [];
  return [
    `Warning: the URL given with ${source} holds a password, and every user of this machine can read command lines ` +
      '(ps, /proc/<pid>/cmdline): the launcher’s and the server’s show it for as long as they run. Leave the password out of the URL ' +
      'and put it in ~/.pgpass (or the file PGPASSFILE names), readable only by you, which PostgreSQL clients read and the server ' +
      'hides from sandboxed tools; or give the URL in AIRLOCK_DATABASE_URL, which other users cannot read.',
  ];
}

function warning(name: string, instead: string): string {
  return (
    `Warning: ${name} came from the environment. A process outside the tool sandbox (an MCP server, or terminal and ` +
    `python when they run without one) can read it from /proc/<pid>/environ of an ancestor: the launcher, npm, your shell; ` +
    `typed on a command line, it also stays in your shell's history file, which tool calls cannot read but other programs of yours can. ${instead}`
  );
}

/** A `postgres://user:password@…` URL, or one with `?password=`; what does not parse is left to the config to refuse. */
function holdsPassword(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.password !== '' || parsed.searchParams.has('password');
  } catch {
    return false;
  }
}
