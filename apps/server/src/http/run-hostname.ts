import { randomBytes } from 'node:crypto';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
/** 80 bits: 16 letters of base32. */
const RANDOM_BYTES = 10;

/**
 * A name for this run's browser origin, `airlock-<16 base32 letters>.localhost`, new at every start. Browsers resolve
 * every `*.localhost` name to loopback themselves, and nobody can have served a page (or registered a service worker)
 * on an origin whose name did not exist before this run: the start-up link hands the token only to it.
 */
export function freshRunHostname(): string {
  return `airlock-${base32(randomBytes(RANDOM_BYTES))}.localhost`;
}

function base32(bytes: Uint8Array): string {
  let text = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) text += BASE32[(value << (5 - bits)) & 31];
  return text;
}
