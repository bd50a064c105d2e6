import type { Readable, Writable } from 'node:stream';

/**
 * Pipes `source` into `target`, reading at most `bytesPerSecond` a second: past it `source` is paused until the second
 * is over, so a writer that does not stop is held back by its full pipe rather than read as fast as it writes. Returns
 * a function that lifts the bound (what is left is then read as it comes).
 */
export function readAtRate(source: Readable, target: Writable, bytesPerSecond: number): () => void {
  let windowStart = performance.now();
  let read = 0;
  let timer: NodeJS.Timeout | undefined;
  let bounded = true;
  source.on('data', (chunk: Buffer) => {
    target.write(chunk);
    if (!bounded) return;
    const now = performance.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      read = 0;
    }
    read += chunk.length;
    if (read < bytesPerSecond) return;
    source.pause();
    timer = setTimeout(() => {
      timer = undefined;
      windowStart = performance.now();
      read = 0;
      source.resume();
    }, windowStart + 1000 - now);
  });
  source.once('end', () => target.end());
  return () => {
    bounded = false;
    clearTimeout(timer);
    timer = undefined;
    source.resume();
  };
}
