import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { runChat } from './chat-command';
import { parseCliArguments, TOKEN_ON_COMMAND_LINE_WARNING, USAGE, UsageError } from './cli-arguments';

async function main(argv: readonly string[]): Promise<number> {
  const command = parseCliArguments(argv, { env: process.env, readFile: readTokenFile });
  if (command.kind === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (command.tokenOnCommandLine) console.error(TOKEN_ON_COMMAND_LINE_WARNING);
  return runChat({
    address: command.address,
    ...(command.sessionId === undefined ? {} : { sessionId: command.sessionId }),
    input: process.stdin,
    output: process.stdout,
    env: process.env,
    decisionGuardMs: command.decisionGuardMs,
  });
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
