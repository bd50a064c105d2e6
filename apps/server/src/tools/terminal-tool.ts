import { access, constants } from 'node:fs/promises';
import { defineTool } from '@airlock/core';
import { z } from 'zod';
import type { ResolvedToolsOptions } from './builtin-tools-options';
import { runToolProcess } from './run-tool-process';
import { failuresAsResults } from './tool-failure';
import type { WorkspacePaths } from './workspace-paths';

const MAX_COMMAND_CHARS = 100_000;

const parameters = z.object({
  command: z.string().min(1).max(MAX_COMMAND_CHARS).describe('The shell command line to run.'),
});

export function createTerminalTool(options: ResolvedToolsOptions, paths: WorkspacePaths) {
  let shell: Promise<string> | undefined;
  return defineTool<z.infer<typeof parameters>>({
    name: 'terminal',
    description:
      'Run a shell command in the workspace folder and return its combined stdout and stderr, then its exit code. ' +
      'Standard input is closed (nothing interactive), background processes are stopped when the command ends, ' +
      'long output keeps only its beginning and end, and the command is killed when the call times out.',
    parameters,
    annotations: { executesCode: true, destructive: true },
    source: 'builtin',
    execute: ({ command }, context) =>
      failuresAsResults('terminal', async () => {
        shell ??= pickShell();
        return runToolProcess(options, paths, { file: await shell, args: ['-c', command] }, context);
      }),
  });
}

async function pickShell(): Promise<string> {
  try {
    await access('/bin/bash', constants.X_OK);
    return '/bin/bash';
  } catch {
    return '/bin/sh';
  }
}
