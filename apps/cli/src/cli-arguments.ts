import { parseStartupLink, shownAddress, socketUrl, toVisibleText, visibleTextString, type ServerAddress, type StartupLink } from '@airlock/client';
import { DECISION_GUARD_MS } from './line-reader';

export const USAGE = `Usage: airlock chat [<start-up link>] [--url <url>] [--token-file <path>] [--session <id>]

Chats with a running Airlock server in this terminal: prompts, streamed answers, and a decision for each tool call.

  <start-up link>   the link the server prints, http://airlock-….localhost:7700/#code=… (its one-time code is
                    exchanged for the token), or one with #token=…
  --url <url>       the server (http://host:port or ws://host:port) or its WebSocket endpoint (ws://host:port/trpc);
                    env AIRLOCK_URL
  --token-file <path>  a file holding the access token; env AIRLOCK_TOKEN_FILE, or AIRLOCK_TOKEN
  --token <token>   the access token (other users of this machine can read a command line: prefer a file)
  --session <id>    continue this chat, following a run still going in it (default: a new chat)

Decide a call with a (allow), A (always allow in this chat, granted once you confirm it with y; always grants it at
once) or d (deny), optionally followed by a reason for the model: "d use notes.txt instead" (a pasted reason may hold
several lines; a pasted answer never decides). An answer counts once the call has been on screen for 0.6 s (env
AIRLOCK_DECISION_GUARD_MS, in ms): one typed sooner is ignored. A paste is sent whole, on Enter. Ctrl-C stops the
answer; a second Ctrl-C, or Ctrl-D, exits.`;

export type CliCommand =
  | { kind: 'help' }
  | {
      kind: 'chat';
      /** Where to connect and with what token, or the start-up link whose one-time code is to be exchanged for it. */
      address: ServerAddress | CodeLink;
      sessionId: string | undefined;
      /** A token is on the command line (`--token`, or a link's `#token=`), where other users can read it. */
      tokenOnCommandLine: boolean;
      /**
       * The one-time code that will be spent is on the command line: other users of the machine can read it (ps)
       * until this client spends it, and spend it first.
       */
      codeOnCommandLine: boolean;
      /** How long a decision prompt is shown before an answer's first keystroke counts, in ms (AIRLOCK_DECISION_GUARD_MS). */
      decisionGuardMs: number;
    };

/** A start-up link with a one-time code (`…/#code=…`) and no other token given: the code is exchanged for it. */
export interface CodeLink {
  codeLink: string;
}

/** A mistake in how the command was called: the message says which argument and what is wrong. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface CliEnvironment {
  env: Readonly<Record<string, string | undefined>>;
  /** Reads --token-file and AIRLOCK_TOKEN_FILE: the file's text and its mode (permission bits, as `stat` gives them). */
  readFile: (path: string) => { text: string; mode: number };
}

const VALUE_FLAGS = new Set(['--url', '--token', '--token-file', '--session']);

/** Reads `airlock <command> …`: flags first, then the environment, then the start-up link's parts. */
export function parseCliArguments(argv: readonly string[], { env, readFile }: CliEnvironment): CliCommand {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') return { kind: 'help' };
  if (command !== 'chat') throw new UsageError(`unknown command "${command}"; the only command is "chat"`);

  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let index = 0; index < rest.length; index++) {
    const argument = rest[index]!;
    if (argument === '--help' || argument === '-h') return { kind: 'help' };
    const [name, inline] = argument.startsWith('--') && argument.includes('=') ? [argument.slice(0, argument.indexOf('=')), argument.slice(argument.indexOf('=') + 1)] : [argument, undefined];
    if (VALUE_FLAGS.has(name)) {
      const value = inline ?? rest[++index];
      if (value === undefined || value === '') throw new UsageError(`${name} needs a value`);
      flags.set(name, value);
    } else if (name.startsWith('-')) {
      throw new UsageError(`unknown option ${name}`);
    } else {
      positional.push(argument);
    }
  }
  if (positional.length > 1) throw new UsageError(`expected at most one start-up link, got ${positional.length} arguments`);

  const linkOnCommandLine = positional[0] ?? flags.get('--url');
  const link = linkOnCommandLine ?? nonEmpty(env.AIRLOCK_URL);
  if (link === undefined) throw new UsageError('no server given: pass the start-up link, or --url (or AIRLOCK_URL)');
  let fromLink: StartupLink;
  try {
    const parsed = parseStartupLink(link);
    fromLink = positional[0] === undefined ? { ...parsed, url: socketUrl(link) } : parsed;
  } catch (error) {
    // The address as typed, but not its token: this line goes to the screen, a terminal log, a bug report.
    throw new UsageError(`"${shownAddress(link)}" is not a server address: ${shownAddress(error instanceof Error ? error.message : String(error))}`);
  }
  const fromFlag = flags.get('--token');
  const token =
    fromFlag ??
    tokenFromFile('--token-file', flags.get('--token-file'), readFile) ??
    nonEmpty(env.AIRLOCK_TOKEN) ??
    tokenFromFile('AIRLOCK_TOKEN_FILE', env.AIRLOCK_TOKEN_FILE, readFile) ??
    nonEmpty(fromLink.token);
  // A link's token is on the command line whether or not it is the one used (a token file wins over it). A code is
  // worthless once spent, but until this client spends it, another user who reads the command line can.
  const tokenOnCommandLine = fromFlag !== undefined || (linkOnCommandLine !== undefined && nonEmpty(fromLink.token) !== undefined);
  const codeOnCommandLine = token === undefined && linkOnCommandLine !== undefined && fromLink.code !== undefined;
  const common = { kind: 'chat', sessionId: chatId(flags.get('--session')), tokenOnCommandLine, codeOnCommandLine, decisionGuardMs: decisionGuard(env) } as const;
  if (token !== undefined) return { ...common, address: { url: fromLink.url, token } };
  if (fromLink.code !== undefined) return { ...common, address: { codeLink: link } };
  throw new UsageError('no token given: pass the start-up link as printed (#code=…), --token-file, or set AIRLOCK_TOKEN_FILE or AIRLOCK_TOKEN');
}

/**
 * A chat id as the server takes one (README: 1 to 128 ASCII letters, digits and `_ : . -`). Checked here, before the
 * link's one-time code is spent: the server's refusal came after it, and every message typed then failed with it.
 */
function chatId(id: string | undefined): string | undefined {
  if (id === undefined || /^[A-Za-z0-9_:.-]{1,128}$/.test(id)) return id;
  throw new UsageError(`--session "${visibleTextString(toVisibleText(id, { singleLine: true }))}" is not a chat id: a chat id is 1 to 128 of the letters A-Z and a-z, digits and _ : . -`);
}

/** The longest decision guard AIRLOCK_DECISION_GUARD_MS may set: past it, a person would wait on a prompt that looks stuck. */
const MAX_DECISION_GUARD_MS = 10_000;

function decisionGuard(env: Readonly<Record<string, string | undefined>>): number {
  const value = env.AIRLOCK_DECISION_GUARD_MS;
  if (value === undefined) return DECISION_GUARD_MS;
  if (!/^\d+$/.test(value.trim()) || Number(value) > MAX_DECISION_GUARD_MS) {
    throw new UsageError(`AIRLOCK_DECISION_GUARD_MS must be a whole number of milliseconds from 0 to ${MAX_DECISION_GUARD_MS}, got "${value}"`);
  }
  return Number(value);
}

function tokenFromFile(source: string, path: string | undefined, readFile: CliEnvironment['readFile']): string | undefined {
  if (nonEmpty(path) === undefined) return undefined;
  let file: { text: string; mode: number };
  try {
    file = readFile(path!);
  } catch (error) {
    throw new UsageError(`${source}: cannot read ${path!}: ${error instanceof Error ? error.message : String(error)}`);
  }
  // As the server refuses such a file, and ssh such a key: whoever reads the token may run anything a person may allow.
  const mode = file.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new UsageError(`${source}: ${path!} is open to other users (mode ${mode.toString(8).padStart(4, '0')}); make it readable by you alone: chmod 600 ${shellQuoted(path!)}`);
  }
  const token = file.text.trim();
  if (token === '') throw new UsageError(`${source}: ${path!} is empty`);
  return token;
}

/** Said on standard error when the token came from the command line. */
export const TOKEN_ON_COMMAND_LINE_WARNING =
  'airlock: the token is on the command line, where other users of this machine can read it (ps) and your shell ' +
  'history keeps it; prefer the start-up link as printed (#code=…, used once) in AIRLOCK_URL, --token-file or AIRLOCK_TOKEN_FILE.';

export const CODE_ON_COMMAND_LINE_WARNING =
  'airlock: the start-up link is on the command line, where other users of this machine can read it (ps) and use its ' +
  'code before this client does; on a shared machine, pass it as AIRLOCK_URL=… instead.';

/** A path as it can be pasted into a shell. */
function shellQuoted(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
