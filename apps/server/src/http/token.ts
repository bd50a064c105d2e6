import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Compares a presented token with the expected one in constant time. Both sides are hashed first so
 * neither the comparison time nor an early length check tells an attacker how long the token is.
 */
export function tokenMatches(presented: unknown, expected: string): boolean {
  if (typeof presented !== 'string' || expected === '') return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** A nonce a client may send as the upgrade URL's `proof` parameter: base64url, 128 to 512 bits. */
const PROOF_NONCE = /^[A-Za-z0-9_-]{22,86}$/;

/**
 * The frame sent first on a WebSocket whose upgrade URL asks for a proof (`?proof=<nonce>`): the HMAC-SHA256 of the
 * nonce keyed by the token, so a client hands its token only to a server that knows it already, never to whatever
 * took the port while Airlock was down. Null when the URL asks for none, or for one with a malformed nonce.
 */
export function serverProofFrame(url: string | undefined, token: string): string | null {
  const nonce = new URL(url ?? '/', 'http://localhost').searchParams.get('proof');
  if (nonce === null || !PROOF_NONCE.test(nonce)) return null;
  const mac = createHmac('sha256', token).update(`airlock server proof\n${nonce}`, 'utf8').digest('base64url');
  return JSON.stringify({ airlock: 'proof', mac });
}
