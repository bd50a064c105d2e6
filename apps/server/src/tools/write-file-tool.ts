import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { defineTool } from '@airlock/core';
import { z } from 'zod';
import type { ResolvedToolsOptions } from './builtin-tools-options';
import { failuresAsResults, toolFailure } from './tool-failure';
import type { WorkspaceFolder, WorkspacePaths } from './workspace-paths';

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
        // A path ending in a separator names a folder: writing the file without it would create what was not asked.
        if (args.path.endsWith('/')) return toolFailure(`"${args.path}" names a folder (it ends with "/"); give a file's path. Nothing was written.`);
        const target = await paths.resolve(args.path);
        if (target === (await paths.root())) return toolFailure(`"${args.path}" is a directory.`);
        context.signal.throwIfAborted();
        // Everything below goes through the proven folder's descriptor: a folder on the way swapped for a link
        // after the check cannot redirect the write.
        await using folder = await paths.openFolder(args.path, path.dirname(target), { create: true });
        const name = path.basename(target);
        const existing = await folder.lstatEntry(name);
        if (existing?.isDirectory()) return toolFailure(`"${args.path}" is a directory.`);
        if (existing !== undefined && !existing.isFile()) return toolFailure(`"${args.path}" is not a regular file.`);
        await writeAtomically(folder, name, args.content, existing === undefined ? undefined : Number(existing.mode & 0o777n));
        const shown = await paths.display(path.join(folder.real, name));
        return `${existing === undefined ? 'Created' : 'Replaced'} ${shown} (${bytes} bytes).`;
      }),
  });
}

/** Readers never see a half-written file: the content goes to a fresh file beside the target, which is then renamed over it. */
async function writeAtomically(folder: WorkspaceFolder, name: string, content: string, mode: number | undefined): Promise<void> {
  const temporary = folder.entry(`.${name}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    // 'wx' creates exclusively, so a link planted under the temporary name is not followed.
    const handle = await open(temporary, 'wx', 0o644);
    try {
      await handle.writeFile(content, 'utf8');
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, folder.entry(name));
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
