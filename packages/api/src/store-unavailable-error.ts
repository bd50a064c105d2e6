import { AirlockError } from '@airlock/core';

/** Why a shared store could not be used for now (see StoreUnavailableError). */
export type StoreUnavailableReason = 'full' | 'out-of-memory' | 'out-of-resources' | 'too-many-connections' | 'shutting-down' | 'unreachable' | 'connection-lost';

const said: Record<StoreUnavailableReason, (store: string, detail: string) => string> = {
  full: (store, detail) => `The database ${store} has no space left (${detail}): free space on the database server and try again`,
  'out-of-memory': (store, detail) => `The database server of ${store} ran out of memory (${detail}): try again`,
  'out-of-resources': (store, detail) => `The database server of ${store} is out of resources (${detail}): try again`,
  'too-many-connections': (store, detail) => `The database server of ${store} has no connection free (${detail}): try again once others close, or raise its max_connections`,
  'shutting-down': (store, detail) => `The database server of ${store} is shutting down or starting up (${detail}): try again once it is back`,
  unreachable: (store, detail) => `Airlock could not reach the database ${store} (${detail}): check that it is running and reachable, and try again`,
  'connection-lost': (store, detail) =>
    `Airlock lost its connection to the database ${store} (${detail}): what it was writing may or may not be stored; try again once it is back`,
};

/**
 * A shared store (PostgreSQL) could not take a statement for now: its disk is full, it ran out of memory or
 * connections, it is shutting down, or it could not be reached. Said in words a person can act on, where the
 * driver's own error reached the client as "internal error". Nothing of the statement was applied, but after a
 * connection lost with the statement sent (`mayBeStored`): then it may have been.
 */
export class StoreUnavailableError extends AirlockError {
  readonly fault = 'system';
  override readonly name = 'StoreUnavailableError';
  constructor(
    /** The database, as a person knows it (its URL without the password, and the schema). */
    readonly store: string,
    readonly reason: StoreUnavailableReason,
    /** What the database or the driver said (its SQLSTATE or socket error first). */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(said[reason](store, detail), options?.cause === undefined ? undefined : { cause: options.cause });
  }

  /** Whether the statement may have been applied though it failed (the connection was lost after it was sent). */
  get mayBeStored(): boolean {
    return this.reason === 'connection-lost';
  }
}
