import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defineTool } from '@airlock/core';
import { z } from 'zod';
import type { ResolvedToolsOptions } from './builtin-tools-options';
import { findExecutable } from './find-executable';
import { childSearchPath, runToolProcess } from './run-tool-process';
import { failuresAsResults, toolFailure } from './tool-failure';
import type { WorkspacePaths } from './workspace-paths';

const MAX_CODE_CHARS = 1_000_000;

const parameters = z.object({
  code: z.string().min(1).max(MAX_CODE_CHARS).describe('The Python 3 program to run.'),
});

export function createPythonTool(options: ResolvedToolsOptions, paths: WorkspacePaths) {
  return defineTool<z.infer<typeof parameters>>({
    name: 'python',
    description:
      'Run a Python 3 program with the workspace folder as its working directory and return what it prints ' +
      '(stdout and stderr), then its exit code. Use print() to show results; standard input is closed. ' +
      'Python runs isolated: to import a module from the workspace, add `import sys; sys.path.insert(0, ".")` first.',
    parameters,
    annotations: { executesCode: true, destructive: true },
    source: 'builtin',
    execute: ({ code }, context) =>
      failuresAsResults('python', async () => {
        const searchPath = childSearchPath(options);
        const python = await findExecutable('python3', searchPath);
        if (python === undefined) {
          return toolFailure(`python3 was not found on PATH (${searchPath ?? 'PATH is not set'}), so the code was not run.`);
        }
        // A file rather than `-c`: no argument-length limit, and tracebacks name real lines.
        const folder = await mkdtemp(path.join(os.tmpdir(), 'airlock-python-'));
        try {
          const script = path.join(folder, 'main.py');
          await writeFile(script, code, { mode: 0o600 });
          // Isolated mode (-I): no PYTHON* variables, no user site, neither the workspace nor the script's folder on
          // the import path, so a sitecustomize.py or a module planted in the workspace runs only if the code asks for it.
          // -B and -u stand in for PYTHONDONTWRITEBYTECODE and PYTHONUNBUFFERED, which -I ignores.
          const args = ['-I', '-B', '-u', script];
          return await runToolProcess(options, paths, { file: python, args, readOnlyPaths: [folder] }, context);
        } finally {
          await rm(folder, { recursive: true, force: true });
        }
      }),
  });
}
