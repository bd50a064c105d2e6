import { parseStartupLink, socketUrl, type ServerAddress } from '@airlock/client';

export const USAGE = `Usage: airlock chat [<start-up link>] [--url <url>] [--token-file <path>] [--session <id>]

Chats with a running Airlock server in this terminal: prompts, streamed answers, and a decision for each tool call.

  <start-up link>   the link the server prints, http://127.0.0.1:7700/#token=…
  --url <url>       the server (http://host:port) or its WebSocket endpoint (ws://host:port/trpc); env AIRLOCK_URL
  --token-file <path>  a file holding the access token; env AIRLOCK_TOKEN_FILE, or AIRLOCK_TOKEN
  --token <token>   the access token (other users of this machine can read a command line: prefer a file)
  --session <id>    continue this chat, following a run still going in it (default: a new chat)

Decide a call with a (allow), A (always allow in this chat) or d (deny), optionally followed by a reason for the
model: "d use notes.txt instead". Ctrl-C stops the answer; a second Ctrl-C, or Ctrl-D, exits.`;

export type CliCommand =
  | { kind: 'help' }
  | {
      kind: 'chat';
      address: ServerAddress;
      sessionId: string | undefined;
      /** The token came from the command line (`--token`, or the link's `#token=`), where other users can read it. */
      tokenOnCommandLine: boolean;
    };

/** A mistake in how the command was called: the message says which argument and what is wrong. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface CliEnvironment {
  env: Readonly<Record<string, string | undefined>>;
  /** Reads --token-file and AIRLOCK_TOKEN_FILE. */
  readFile: (path: string) => string;
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

  const link = positional[0] ?? flags.get('--url') ?? nonEmpty(env.AIRLOCK_URL);
  if (link === undefined) throw new UsageError('no server given: pass the start-up link, or --url (or AIRLOCK_URL)');
  let fromLink: ServerAddress;
  try {
    fromLink = positional[0] === undefined ? { url: socketUrl(link), token: parseStartupLink(link).token } : parseStartupLink(link);
  } catch (error) {
    throw new UsageError(`"${link}" is not a server address: ${error instanceof Error ? error.message : String(error)}`);
  }
  const fromFlag = flags.get('--token');
  const token =
    fromFlag ??
    tokenFromFile('--token-file', flags.get('--token-file'), readFile) ??
    nonEmpty(env.AIRLOCK_TOKEN) ??
    tokenFromFile('AIRLOCK_TOKEN_FILE', env.AIRLOCK_TOKEN_FILE, readFile) ??
    nonEmpty(fromLink.token);
  if (token === undefined) throw new UsageError('no token given: pass --token-file, set AIRLOCK_TOKEN_FILE or AIRLOCK_TOKEN, or use the start-up link with #token=');
  const tokenOnCommandLine = fromFlag !== undefined || (positional[0] !== undefined && nonEmpty(fromLink.token) !== undefined);
  return { kind: 'chat', address: { url: fromLink.url, token }, sessionId: flags.get('--session'), tokenOnCommandLine };
}

function tokenFromFile(source: string, path: string | undefined, readFile: (path: string) => string): string | undefined {
  if (nonEmpty(path) === undefined) return undefined;
  let text: string;
  try {
    text = readFile(path!);
  } catch (error) {
    throw new UsageError(`${source}: cannot read ${path!}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const token = text.trim();
  if (token === '') throw new UsageError(`${source}: ${path!} is empty`);
  return token;
}

/** Said on standard error when the token came from the command line. */
export const TOKEN_ON_COMMAND_LINE_WARNING =
  'airlock: the token is on the command line, where other users of this machine can read it (ps) and your shell ' +
  'history keeps it; prefer --token-file or AIRLOCK_TOKEN_FILE (the link without its #token= part still gives the address).';

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
