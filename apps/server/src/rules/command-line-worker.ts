// The worker thread that reads command lines for the rules (see command-line-reader.ts): one line per message.
import { parentPort } from 'node:worker_threads';
import { parseCommandLine, type CommandLine } from './parse-command-line';

const port = parentPort;
if (port === null) throw new Error('command-line-worker runs as a worker thread');

// Ready once the grammar is loaded: the reader's time limit counts from then, not from the worker's start.
void parseCommandLine('true').finally(() => port.postMessage({ ready: true }));

port.on('message', (request: { id: number; text: string }) => {
  parseCommandLine(request.text).then(
    (line) => port.postMessage({ id: request.id, line }),
    (error: unknown) => {
      const line: CommandLine = { kind: 'refused', reason: `the command parser failed (${error instanceof Error ? error.message : String(error)})`, reachable: [], incomplete: true };
      port.postMessage({ id: request.id, line });
    },
  );
});
