import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { defineTool } from '@airlock/core';
import { z } from 'zod';
import type { ResolvedToolsOptions } from './builtin-tools-options';
import { failuresAsResults, toolFailure } from './tool-failure';
import type { WorkspacePaths } from './workspace-paths';

const parameters = z.object({
  path: z.string().min(1).describe('File path, relative to the workspace. Missing parent folders are created.'),
  content: z.string().describe('The complete new content of the file.'),
});

export function createWriteFileTool(options: ResolvedToolsOptions, paths: WorkspacePaths) {
  return defineTool<z.infer<typeof parameters>>({
    name: 'write_file',
    description:
      'Create or replace a text file in the workspace with the given content (the whole file, not a patch). ' +
      `Content is limited to ${options.maxWriteBytes} bytes.`,
    parameters,
    annotations: { destructive: true, exactGrants: true },
    source: 'builtin',
    execute: (args, context) =>
      failuresAsResults(args.path, async () => {
        const bytes = Buffer.byteLength(args.content, 'utf8');
        if (bytes > options.maxWriteBytes) {
          return toolFailure(`the content is ${bytes} bytes; write_file accepts at most ${options.maxWriteBytes}. Nothing was written.`);
        }
        const target = await paths.resolve(args.path);
        const existing = await stat(target).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return undefined;
          throw error;
        });
        if (existing?.isDirectory()) return toolFailure(`"${args.path}" is a directory.`);
        if (existing !== undefined && !existing.isFile()) return toolFailure(`"${args.path}" is not a regular file.`);
        context.signal.throwIfAborted();
        await mkdir(path.dirname(target), { recursive: true });
        await writeAtomically(target, args.content, existing?.mode);
        const shown = await paths.display(target);
        return `${existing === undefined ? 'Created' : 'Replaced'} ${shown} (${bytes} bytes).`;
      }),
  });
}

/** Readers never see a half-written file: the content goes to a fresh file beside the target, which is then renamed over it. */
async function writeAtomically(target: string, content: string, mode: number | undefined): Promise<void> {
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    // 'wx' creates exclusively, so a link planted under the temporary name is not followed.
    const handle = await open(temporary, 'wx', 0o644);
    try {
      await handle.writeFile(content, 'utf8');
      if (mode !== undefined) await handle.chmod(mode & 0o7777);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
