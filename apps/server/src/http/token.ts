import { createHash, timingSafeEqual } from 'node:crypto';

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
