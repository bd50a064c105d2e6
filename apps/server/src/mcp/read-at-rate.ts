import type { Readable, Writable } from 'node:stream';
import { SYSTEM_CLOCK, type McpClock } from './mcp-clock';

/**
 * Pipes `source` into `target`, reading at most `bytesPerSecond` a second of `clock`: past it `source` is paused until
 * the second is over, so a writer that does not stop is held back by its full pipe rather than read as fast as it
 * writes. Returns a function that lifts the bound (what is left is then read as it comes).
 */
export function readAtRate(source: Readable, target: Writable, bytesPerSecond: number, clock: McpClock = SYSTEM_CLOCK): () => void {
  let windowStart = clock.now();
  let read = 0;
  let cancel: (() => void) | undefined;
  let bounded = true;
  source.on('data', (chunk: Buffer) => {
    target.write(chunk);
    if (!bounded) return;
    const now = clock.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      read = 0;
    }
    read += chunk.length;
    if (read < bytesPerSecond) return;
    source.pause();
    cancel = clock.after(windowStart + 1000 - now, () => {
      cancel = undefined;
      windowStart = clock.now();
      read = 0;
      source.resume();
    });
  });
  source.once('end', () => target.end());
  return () => {
    bounded = false;
    cancel?.();
    cancel = undefined;
    source.resume();
  };
}
