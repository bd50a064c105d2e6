const POOL_SIZE = 16 * 1024;
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
let pool = new Uint8Array(0);
let offset = 0;

/**
 * A random id with `bytes * 8` bits of entropy from the platform CSPRNG (Web Crypto, in Node and browsers).
 * Bytes are drawn from a pooled buffer: one getRandomValues call per 16 KiB instead of one per id.
 */
export function randomId(prefix: string, bytes = 16): string {
  if (offset + bytes > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(Math.max(POOL_SIZE, bytes)));
    offset = 0;
  }
  const parts: string[] = [prefix, '_'];
  for (let i = offset; i < offset + bytes; i++) parts.push(HEX[pool[i]!]!);
  pool.fill(0, offset, offset + bytes);
  offset += bytes;
  // join() gives one flat string; `+=` would leave a rope of small pieces alive for as long as the id lives.
  return parts.join('');
}
