import { errorMessage } from '@airlock/core';
import { LinkCodeError, resolveStartupLink, shownAddress, type ServerAddress } from '@airlock/client';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { runChat } from './chat-command';
import { CODE_ON_COMMAND_LINE_WARNING, parseCliArguments, TOKEN_ON_COMMAND_LINE_WARNING, USAGE, UsageError } from './cli-arguments';

async function main(argv: readonly string[]): Promise<number> {
  const command = parseCliArguments(argv, { env: process.env, readFile: readTokenFile });
  if (command.kind === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (command.tokenOnCommandLine) console.error(TOKEN_ON_COMMAND_LINE_WARNING);
  if (command.codeOnCommandLine) console.error(CODE_ON_COMMAND_LINE_WARNING);
  const address = 'codeLink' in command.address ? await exchangedLink(command.address.codeLink) : command.address;
  if (address === undefined) return 1;
  return runChat({
    address,
    ...(command.sessionId === undefined ? {} : { sessionId: command.sessionId }),
    input: process.stdin,
    output: process.stdout,
    env: process.env,
    decisionGuardMs: command.decisionGuardMs,
  });
}

/** The start-up link's address and the token its one-time code is exchanged for; undefined once it said why not. */
async function exchangedLink(link: string): Promise<ServerAddress | undefined> {
  try {
    return await resolveStartupLink(link);
  } catch (error) {
    if (error instanceof LinkCodeError) console.error(`airlock: ${error.message}.`);
    // The link as given, its code hidden: a fetch error may name the address.
    else console.error(`airlock: cannot exchange the start-up link's code at ${shownAddress(link)}: ${shownAddress(causes(error))}`);
    return undefined;
  }
}

/** An error's message and its cause's (fetch says only "fetch failed", its cause why). */
function causes(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause === undefined ? errorMessage(error) : `${errorMessage(error)} (${errorMessage(cause)})`;
}

/** A token file's text and mode, from one open file (its mode is the mode of what was read). */
function readTokenFile(path: string): { text: string; mode: number } {
  const fd = openSync(path, 'r');
  try {
    return { mode: fstatSync(fd).mode, text: readFileSync(fd, 'utf8') };
  } finally {
    closeSync(fd);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) console.error(`airlock: ${error.message}\n\n${USAGE}`);
    else console.error('airlock:', error);
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
