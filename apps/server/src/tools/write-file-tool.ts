import { randomBytes } from 'node:crypto';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { defineTool } from '@airlock/core';
import { z } from 'zod';
import type { ResolvedToolsOptions } from './builtin-tools-options';
import { pythonEncodingDeclaration } from './python-encoding-declaration';
import { isHeldByRunningCall } from './replaced-files-watch';
import { failuresAsResults, toolFailure } from './tool-failure';
import type { WorkspaceFolder, WorkspacePaths } from './workspace-paths';
import { filePathText, wellFormedText } from './well-formed-text';

/** Folders whose files a person's tools run later, outside the sandbox: a repository's, and the workspace's rules. */
const RUNS_LATER = new Set(['.git', '.airlock']);

/** Python's source files, which it runs or imports, and stubs; and a script whose `#!` line names a Python. */
const PYTHON_SUFFIX = /\.py[iw]?$/i;
const PYTHON_SHEBANG = /^\uFEFF?#!.*(?:python|pypy)/i;

/**
 * Whether Python reads `content` as source, decoding it by a PEP 263 declaration (docs/security.md › `python`):
 * `python3 file.py`, an import, a test runner. By the name the path ends in, as the write resolves it.
 */
function isPythonSource(requested: string, content: string): boolean {
  return PYTHON_SUFFIX.test(path.basename(path.resolve('/', requested))) || PYTHON_SHEBANG.test(content.split(/\r\n|\r|\n/, 1)[0] ?? '');
}

const parameters = z
  .object({
    path: filePathText('the path').min(1).describe('File path, relative to the workspace. Missing parent folders are created.'),
    content: wellFormedText('the content').describe('The complete new content of the file.'),
  })
  .superRefine(({ path: requested, content }, context) => {
    // As invalid arguments, before a card is put up: no grant or rule can let such a file be written.
    if (!isPythonSource(requested, content)) return;
    const declared = pythonEncodingDeclaration(content);
    if (declared === undefined) return;
    context.addIssue({
      code: 'custom',
      path: ['content'],
      message:
        `the content declares its source encoding as "${declared.name}" on line ${declared.line}; Python would read this ` +
        'file by its declared encoding, and what ran or was imported would not be the text shown. Nothing was written; ' +
        'write it as UTF-8 without the declaration, or declare utf-8',
    });
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
        // A path ending in a separator, or in "/." or "/..", names a folder: writing the file the words before it name
        // would create, or replace, what was not asked (`run.sh/x/..` would replace run.sh).
        const folderEnding = /\/(?:\.\.?)?$/u.exec(args.path)?.[0];
        if (folderEnding !== undefined) {
          return toolFailure(`"${args.path}" names a folder (it ends with "${folderEnding}"); give a file's path. Nothing was written.`);
        }
        const names = await paths.names(args.path);
        const name = names.at(-1);
        if (name === undefined) return toolFailure(`"${args.path}" is a directory.`);
        const shown = names.join('/');
        // A file that runs later outside the sandbox is named on the card as it is written (docs/security.md ›
        // "Code left for later"): `src/../.git/config` reads as a file of src/.
        if (names.some((part) => RUNS_LATER.has(part)) && args.path.split('/').includes('..')) {
          return toolFailure(`Refused: "${args.path}" reaches "${shown}" through "..": name it as "${shown}", so that the path shown is the file written. Nothing was written.`);
        }
        context.signal.throwIfAborted();
        // No link is followed, on the way or at the end, whenever it was put there: the file written is the one the
        // path names, which is what the card showed and what a rule matched. Everything below goes through the
        // opened folder's descriptor.
        await using folder = await paths.openParentFolder(args.path, names, { create: true });
        const existing = await folder.lstatEntry(name);
        if (existing?.isSymbolicLink() === true) throw await paths.linkError(args.path, names, names.length - 1, folder.entry(name));
        if (existing?.isDirectory() === true) return toolFailure(`"${args.path}" is a directory.`);
        if (existing !== undefined && !existing.isFile()) return toolFailure(`"${args.path}" is not a regular file.`);
        // A repository config a running call holds read-only: the rename would lift that hold (the call could write
        // it), so the call's watch kills it and puts the old file back over this write. Found from outside: the write
        // was reported done, then undone by Airlock itself.
        if (isHeldByRunningCall(path.join(folder.real, name))) {
          return toolFailure(
            `Refused: "${shown}" is held read-only for a terminal or python call running now, and replacing it would lift that hold. Nothing was written; write it once that call has ended.`,
          );
        }
        // The rename replaces whatever is at the name by then, a link swapped in included: it is never followed.
        await writeAtomically(folder, name, args.content, existing === undefined ? undefined : { mode: Number(existing.mode & 0o777n), gid: Number(existing.gid) });
        return `${existing === undefined ? 'Created' : 'Replaced'} ${shown} (${bytes} bytes).`;
      }),
  });
}

/** What of the file a write replaces its replacement keeps: its permissions and its group. */
interface Replaced {
  mode: number;
  gid: number;
}

/**
 * Bytes of the name a temporary file takes from the file it becomes: it is named after it (`.notes.md.<random>.tmp`),
 * and a name of up to 255 bytes, the system's limit, with the rest added, would pass it.
 */
const TEMPORARY_NAME_START_BYTES = 200;

/** The longest start of `name` of at most `maxBytes` in UTF-8, no character cut. */
function nameStart(name: string, maxBytes: number): string {
  let bytes = 0;
  let end = 0;
  for (const character of name) {
    bytes += Buffer.byteLength(character);
    if (bytes > maxBytes) break;
    end += character.length;
  }
  return name.slice(0, end);
}

/** Readers never see a half-written file: the content goes to a fresh file beside the target, which is then renamed over it. */
async function writeAtomically(folder: WorkspaceFolder, name: string, content: string, replaced: Replaced | undefined): Promise<void> {
  const temporary = folder.entry(`.${nameStart(name, TEMPORARY_NAME_START_BYTES)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    // 'wx' creates exclusively, so a link planted under the temporary name is not followed. A replacement is made
    // with no group permission until it has the replaced file's group, and no more for others than that file gave:
    // made 0644, or with the group new files get here, a private or group-shared file's new content could be opened
    // by other users meanwhile, and read through that descriptor after.
    const handle = await open(temporary, 'wx', replaced === undefined ? 0o644 : replaced.mode & 0o707);
    try {
      // A group it cannot be given (one the user is not in) keeps none of the group's permissions either.
      const mode = replaced === undefined ? undefined : (await takeGroup(handle, replaced.gid)) ? replaced.mode : replaced.mode & 0o707;
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

/** Gives the new file `handle` the group `gid`, which it may have already; false when it cannot. */
async function takeGroup(handle: FileHandle, gid: number): Promise<boolean> {
  if ((await handle.stat()).gid === gid) return true;
  return handle.chown(-1, gid).then(
    () => true,
    () => false,
  );
}
