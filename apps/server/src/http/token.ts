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
 * The frame sent first on a WebSocket whose upgrade URL asks for a proof (`?proof=<nonce>`): the HMAC-SHA256, keyed by
 * the token, of the nonce and the Host the upgrade named, so a client hands its token only to a server that knows it
 * already, never to whatever took the port while Airlock was down. The Host binds the answer to the address the client
 * dialed: without it any Airlock holding the same token (another instance, or this one restarted on another port)
 * would answer for a relay on the client's port. A relay must then name the client's Host to the real server, which
 * refuses a Host that is not its own (RequestGuard), or name another, whose answer the client rejects. Null when the
 * URL asks for none, or for one with a malformed nonce, or the upgrade named no Host.
 */
export function serverProofFrame(upgrade: { url: string | undefined; host: string | undefined }, token: string): string | null {
  const nonce = new URL(upgrade.url ?? '/', 'http://localhost').searchParams.get('proof');
  if (nonce === null || !PROOF_NONCE.test(nonce) || upgrade.host === undefined || upgrade.host === '') return null;
  const mac = createHmac('sha256', token).update(serverProofMessage(upgrade.host, nonce), 'utf8').digest('base64url');
  return JSON.stringify({ airlock: 'proof', mac });
}

/**
 * What the proof MACs: a versioned label, the Host in lower case, the nonce. The Host is taken as sent, its port kept:
 * clients name the dialed URL's `host`, which already leaves out only its own scheme's default port, as the Host they
 * send does; dropping :80 or :443 here, not knowing the scheme, would let a relay on one of those ports borrow the
 * answer of a server on the other. @airlock/client builds the same message (airlock-socket.ts `proofMessage`).
 */
function serverProofMessage(host: string, nonce: string): string {
  return `airlock server proof v2\n${host.toLowerCase()}\n${nonce}`;
}
