import { constants, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { defineTool } from '@airlock/core';
import { z } from 'zod';
import type { ResolvedToolsOptions } from './builtin-tools-options';
import { refusalOfOpened } from './opened-judgement';
import { failuresAsResults, toolFailure } from './tool-failure';
import { closeSoon, type WorkspacePaths } from './workspace-paths';
import { filePathText } from './well-formed-text';

const CHUNK_BYTES = 64 * 1024;
const BINARY_SNIFF_BYTES = 8 * 1024;
const NEWLINE = 0x0a;

const parameters = z.object({
  path: filePathText('the path').min(1).describe('File path, relative to the workspace.'),
  offset: z.number().int().min(1).optional().describe('First line to return, counting from 1. Default 1.'),
  limit: z.number().int().min(1).optional().describe('Lines to return at most. Default: as many as fit the size cap.'),
});

interface Slice {
  text: Buffer;
  lastLine: number;
  /** Why reading stopped before the end of the file, if it did: `scan` when the first line wanted was never reached. */
  cut?: 'limit' | 'bytes' | 'scan';
  /** Lines seen, when the whole file was read. */
  totalLines?: number;
  binary: boolean;
}

export function createReadFileTool(options: ResolvedToolsOptions, paths: WorkspacePaths) {
  return defineTool<z.infer<typeof parameters>>({
    name: 'read_file',
    description:
      `Read a text file in the workspace. Returns its lines as they are; use offset and limit to page through long files. ` +
      `At most ${options.maxReadBytes} bytes are returned per call.`,
    parameters,
    annotations: { readOnly: true },
    source: 'builtin',
    execute: (args, context) =>
      failuresAsResults(args.path, async () => {
        const names = await paths.names(args.path);
        const name = names.at(-1);
        if (name === undefined) return toolFailure(`"${args.path}" is a directory; use list_directory.`);
        // No link is followed, on the way or at the end: the file read, whose text goes to the model, is the one the
        // card names (a clone's `docs/setup.md -> ../.env` would send the .env under the name docs/setup.md). The
        // refusal names where a link leads, so the call can be made again with that path, shown as it is.
        const folder = await paths.openParentFolder(args.path, names, { tool: 'read_file' });
        let handle: FileHandle | undefined;
        try {
          const existing = await folder.lstatEntry(name);
          if (existing?.isSymbolicLink() === true) throw await paths.linkError(args.path, names, names.length - 1, folder.entry(name), 'read_file');
          // O_NONBLOCK: opening a FIFO must not hang the call. (openEntry adds O_NOFOLLOW: a link swapped in since fails.)
          const opened = await folder.openEntry(name, constants.O_RDONLY | constants.O_NONBLOCK);
          handle = opened.handle;
          const { info } = opened;
          // Judged as held: the path may have been given another file (another name of one a deny rule names) since
          // the rules looked at it.
          const links = info.isFile() ? Number(info.nlink) : undefined;
          const refused = await refusalOfOpened(context, args.path, { real: path.join(folder.real, name), links }, 'Nothing was read.');
          if (refused !== undefined) return refused;
          if (info.isDirectory()) return toolFailure(`"${args.path}" is a directory; use list_directory.`);
          if (!info.isFile()) return toolFailure(`"${args.path}" is not a regular file.`);
          const first = args.offset ?? 1;
          const slice = await readLines(handle, {
            first,
            limit: args.limit ?? Number.POSITIVE_INFINITY,
            maxBytes: options.maxReadBytes,
            maxScanBytes: options.maxScanBytes,
            signal: context.signal,
          });
          if (slice.binary) return toolFailure(`"${args.path}" looks like a binary file (${info.size} bytes); it is not shown.`);
          if (slice.cut === 'scan') {
            return toolFailure(
              `"${args.path}": line ${first} was not reached in the first ${options.maxScanBytes} bytes, which is as far as read_file ` +
                'looks for an offset; use the terminal (tail, sed -n) for lines this far in.',
            );
          }
          if (slice.totalLines !== undefined && first > slice.totalLines && info.size > 0n) {
            return toolFailure(`"${args.path}" has only ${slice.totalLines} lines; offset ${first} is past its end.`);
          }
          return slice.text.length === 0 && info.size === 0n ? '(empty file)' : withFooter(slice, first, options.maxReadBytes);
        } finally {
          // Neither close is waited for: the answer does not depend on them.
          if (handle !== undefined) closeSoon(handle);
          folder.closeSoon();
        }
      }),
  });
}

function withFooter(slice: Slice, first: number, maxBytes: number): string {
  const text = slice.text.toString('utf8');
  switch (slice.cut) {
    case undefined:
      return text;
    case 'limit':
      return `${text}${text.endsWith('\n') ? '' : '\n'}[… showing lines ${first}–${slice.lastLine}; more lines follow: read again with offset ${slice.lastLine + 1} …]`;
    case 'bytes':
      return `${text}\n[… truncated: the ${maxBytes}-byte cap was reached in line ${slice.lastLine}; read again with a later offset …]`;
    case 'scan':
      throw new Error('a slice that never reached its first line has no text to show');
  }
}

interface ReadLinesOptions {
  /** First line kept, counting from 1. */
  first: number;
  /** Lines kept at most. */
  limit: number;
  /** Bytes kept at most. */
  maxBytes: number;
  /** Bytes read at most while looking for the first line. */
  maxScanBytes: number;
  signal: AbortSignal;
}

async function readLines(handle: FileHandle, { first, limit, maxBytes, maxScanBytes, signal }: ReadLinesOptions): Promise<Slice> {
  const end = first + limit;
  const kept = new KeptBytes(maxBytes);
  let line = 1;
  let position = 0;
  let lastByte: number | undefined;
  const buffer = Buffer.alloc(CHUNK_BYTES);
  for (;;) {
    signal.throwIfAborted();
    // Bounded while looking, so an offset past the end of a huge (or sparse) file costs the scan cap, not the file.
    const wanted = line < first ? Math.min(CHUNK_BYTES, maxScanBytes - position) : CHUNK_BYTES;
    if (wanted <= 0) return { text: Buffer.alloc(0), lastLine: line, cut: 'scan', binary: false };
    const { bytesRead } = await handle.read(buffer, 0, wanted, position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    if (position < BINARY_SNIFF_BYTES && chunk.subarray(0, BINARY_SNIFF_BYTES - position).includes(0)) {
      return { text: Buffer.alloc(0), lastLine: 0, binary: true };
    }
    position += bytesRead;
    lastByte = chunk[bytesRead - 1];
    let start = 0;
    while (start < chunk.length) {
      if (line >= end) return { text: kept.bytes(), lastLine: end - 1, cut: 'limit', binary: false };
      const newline = chunk.indexOf(NEWLINE, start);
      const stop = newline === -1 ? chunk.length : newline + 1;
      if (line >= first && !kept.append(chunk.subarray(start, stop))) {
        return { text: kept.bytes(), lastLine: line, cut: 'bytes', binary: false };
      }
      if (newline === -1) break;
      line += 1;
      start = stop;
    }
  }
  // After a final newline `line` counts an empty line that is not there.
  const totalLines = position === 0 ? 0 : lastByte === NEWLINE ? line - 1 : line;
  return { text: kept.bytes(), lastLine: Math.min(totalLines, end - 1), totalLines, binary: false };
}

/** Kept lines in one buffer grown by doubling up to the cap: a million short lines cost their bytes, not a million buffers. */
class KeptBytes {
  #buffer = Buffer.alloc(0);
  #length = 0;

  constructor(readonly cap: number) {}

  /** Copies `piece` (`buffer` is reused for the next read); false, keeping what fits, when it passes the cap. */
  append(piece: Buffer): boolean {
    const fits = Math.min(piece.length, this.cap - this.#length);
    if (this.#length + fits > this.#buffer.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.cap, Math.max(this.#buffer.length * 2, this.#length + fits, 4096)));
      this.#buffer.copy(grown, 0, 0, this.#length);
      this.#buffer = grown;
    }
    piece.copy(this.#buffer, this.#length, 0, fits);
    this.#length += fits;
    return fits === piece.length;
  }

  bytes(): Buffer {
    return this.#buffer.subarray(0, this.#length);
  }
}
