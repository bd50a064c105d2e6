import { tokenMatches } from './token';

/** What `/healthz` tells a holder of the token besides that the server is up. */
export interface HealthDetails {
  version: string;
  activeRuns: number;
}

/** `/healthz`'s status and JSON body. */
export type HealthAnswer = { status: 200; body: { ok: true } | ({ ok: true } & HealthDetails) } | { status: 401; body: { problem: 'wrong-token' } };

const BEARER = /^bearer +(\S+) *$/i;

/**
 * What `/healthz` answers. Without the token, only that the server is up: any process of this machine reaches a
 * server on loopback, and the count of runs going told it when the person was at work, the version which release's
 * weaknesses to try (found in review). With the token (`Authorization: Bearer <token>`), the version and the runs
 * going as well. Any other Authorization is refused with 401, so a monitor set up with a stale token is told so.
 */
export function healthAnswer(authorization: string | undefined, token: string, details: () => HealthDetails): HealthAnswer {
  if (authorization === undefined) return { status: 200, body: { ok: true } };
  const presented = BEARER.exec(authorization)?.[1];
  if (!tokenMatches(presented, token)) return { status: 401, body: { problem: 'wrong-token' } };
  return { status: 200, body: { ok: true, ...details() } };
}
