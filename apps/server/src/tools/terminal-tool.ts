import { access, constants } from 'node:fs/promises';
import { defineTool } from '@airlock/core';
import { z } from 'zod';
import type { ResolvedToolsOptions } from './builtin-tools-options';
import { runToolProcess } from './run-tool-process';
import { failuresAsResults } from './tool-failure';
import type { WorkspacePaths } from './workspace-paths';
import { processText } from './process-text';

const MAX_COMMAND_CHARS = 100_000;

/**
 * Git starts an editor for some commands (`git commit` without `-m`, `git tag -a`, `git merge --edit`, `git rebase
 * -i`, `git add -e`) and a pager for others: fed the call's piped input, vi runs what it reads (`printf ':!id' | git
 * commit --allow-empty` runs `id`), which no rule for `printf` or `git commit` meant to allow. These variables win
 * over git's `core.editor`, `sequence.editor` and `core.pager`: `true` leaves the text as git wrote it, `cat` prints.
 */
const NO_EDITOR_ENV: Readonly<Record<string, string>> = {
  GIT_EDITOR: 'true',
  GIT_SEQUENCE_EDITOR: 'true',
  EDITOR: 'true',
  VISUAL: 'true',
  GIT_PAGER: 'cat',
  PAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
};

const parameters = z.object({
  command: processText('the command').min(1).max(MAX_COMMAND_CHARS).describe('The shell command line to run.'),
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
        return runToolProcess(options, paths, { file: await shell, args: ['-c', command], extraEnv: NO_EDITOR_ENV }, context);
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
