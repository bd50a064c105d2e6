import { lstat, readlink } from 'node:fs/promises';
import { defineTool } from '@airlock/core';
import { z } from 'zod';
import type { ResolvedToolsOptions } from './builtin-tools-options';
import { oneLine } from './one-line';
import { refusalOfOpened } from './opened-judgement';
import { failuresAsResults } from './tool-failure';
import type { WorkspaceFolder, WorkspacePaths } from './workspace-paths';
import { filePathText } from './well-formed-text';

const parameters = z.object({
  path: filePathText('the path').optional().describe('Folder path, relative to the workspace. Default: the workspace itself.'),
});

export function createListDirectoryTool(options: ResolvedToolsOptions, paths: WorkspacePaths) {
  return defineTool<z.infer<typeof parameters>>({
    name: 'list_directory',
    description: `List a folder of the workspace: each entry with its type and size. At most ${options.maxDirectoryEntries} entries are shown.`,
    parameters,
    annotations: { readOnly: true },
    source: 'builtin',
    execute: (args, context) =>
      failuresAsResults(args.path ?? '.', async () => {
        const requested = args.path ?? '.';
        // Listed through the proven folder's descriptor, so a folder swapped for a link after the proof is not followed.
        // Read in batches rather than whole, so a folder of a million files costs a count, not a million-entry array.
        const { folder, dir } = await paths.openFolderForListing(requested, 128);
        try {
          const names: string[] = [];
          let total = 0;
          try {
            // Judged as opened, by its real path: a link put at the path since the rules looked at it is followed here.
            const refused = await refusalOfOpened(context, requested, { real: folder.real }, 'Nothing was listed.');
            if (refused !== undefined) return refused;
            for (let entry = await dir.read(); entry !== null; entry = await dir.read()) {
              context.signal.throwIfAborted();
              total += 1;
              if (names.length < options.maxDirectoryEntries) names.push(entry.name);
            }
          } finally {
            // A folder's descriptor closes in the kernel alone, with nothing to write back: no need for a thread.
            dir.closeSync();
          }
          names.sort();
          const lines = await Promise.all(names.map((name) => describeEntry(folder, name)));
          const shown = await paths.display(folder.real);
          const header = `${oneLine(shown)}: ${total} ${total === 1 ? 'entry' : 'entries'}`;
          const omitted = total - names.length;
          const footer = omitted > 0 ? [`[… ${omitted} more entries not shown …]`] : [];
          return [header, ...lines, ...footer].join('\n');
        } finally {
          folder.closeSoon();
        }
      }),
  });
}

async function describeEntry(folder: WorkspaceFolder, name: string): Promise<string> {
  const full = folder.entry(name);
  const shown = oneLine(name);
  try {
    const info = await lstat(full, { bigint: true });
    // Its name may show; its size, kind or link target may not.
    if (folder.isHidden(name, info)) return `hidden   ${shown}`;
    if (info.isDirectory()) return `dir      ${shown}/`;
    if (info.isFile()) return `file     ${shown}  (${info.size} bytes)`;
    if (info.isSymbolicLink()) return `symlink  ${shown} -> ${oneLine(await readlink(full))}`;
    return `other    ${shown}`;
  } catch {
    return `gone     ${shown}`;
  }
}
