import { constants, open } from 'node:fs/promises';
import { defineTool } from '@airlock/core';
import { z } from 'zod';
import type { ResolvedToolsOptions } from './builtin-tools-options';
import { failuresAsResults, toolFailure } from './tool-failure';
import type { WorkspacePaths } from './workspace-paths';

const CHUNK_BYTES = 64 * 1024;
const BINARY_SNIFF_BYTES = 8 * 1024;
const NEWLINE = 0x0a;

const parameters = z.object({
  path: z.string().min(1).describe('File path, relative to the workspace.'),
  offset: z.number().int().min(1).optional().describe('First line to return, counting from 1. Default 1.'),
  limit: z.number().int().min(1).optional().describe('Lines to return at most. Default: as many as fit the size cap.'),
});

interface Slice {
  text: Buffer;
  lastLine: number;
  /** Why reading stopped before the end of the file, if it did. */
  cut?: 'limit' | 'bytes';
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
        const real = await paths.resolve(args.path);
        // O_NOFOLLOW: the checked path was fully resolved, so a link appearing there since is someone else's doing.
        // O_NONBLOCK: opening a FIFO must not hang the call.
        const handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
        try {
          const info = await handle.stat();
          if (info.isDirectory()) return toolFailure(`"${args.path}" is a directory; use list_directory.`);
          if (!info.isFile()) return toolFailure(`"${args.path}" is not a regular file.`);
          const first = args.offset ?? 1;
          const slice = await readLines(handle, first, args.limit ?? Number.POSITIVE_INFINITY, options.maxReadBytes, context.signal);
          if (slice.binary) return toolFailure(`"${args.path}" looks like a binary file (${info.size} bytes); it is not shown.`);
          if (slice.totalLines !== undefined && first > slice.totalLines && info.size > 0) {
            return toolFailure(`"${args.path}" has only ${slice.totalLines} lines; offset ${first} is past its end.`);
          }
          return slice.text.length === 0 && info.size === 0 ? '(empty file)' : withFooter(slice, first, options.maxReadBytes);
        } finally {
          await handle.close();
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
  }
}

async function readLines(
  handle: Awaited<ReturnType<typeof open>>,
  first: number,
  limit: number,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Slice> {
  const end = first + limit;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let line = 1;
  let position = 0;
  let lastByte: number | undefined;
  const buffer = Buffer.alloc(CHUNK_BYTES);
  for (;;) {
    signal.throwIfAborted();
    const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    const chunk = buffer.subarray(0, bytesRead);
    if (position < BINARY_SNIFF_BYTES && chunk.subarray(0, BINARY_SNIFF_BYTES - position).includes(0)) {
      return { text: Buffer.alloc(0), lastLine: 0, binary: true };
    }
    position += bytesRead;
    lastByte = chunk[bytesRead - 1];
    let start = 0;
    while (start < chunk.length) {
      if (line >= end) return { text: Buffer.concat(kept), lastLine: end - 1, cut: 'limit', binary: false };
      const newline = chunk.indexOf(NEWLINE, start);
      const stop = newline === -1 ? chunk.length : newline + 1;
      if (line >= first) {
        const piece = chunk.subarray(start, stop);
        if (keptBytes + piece.length > maxBytes) {
          kept.push(Buffer.from(piece.subarray(0, maxBytes - keptBytes)));
          return { text: Buffer.concat(kept), lastLine: line, cut: 'bytes', binary: false };
        }
        // Copied: `buffer` is reused for the next read.
        kept.push(Buffer.from(piece));
        keptBytes += piece.length;
      }
      if (newline === -1) break;
      line += 1;
      start = stop;
    }
  }
  // After a final newline `line` counts an empty line that is not there.
  const totalLines = position === 0 ? 0 : lastByte === NEWLINE ? line - 1 : line;
  return { text: Buffer.concat(kept), lastLine: Math.min(totalLines, end - 1), totalLines, binary: false };
}
