import { StoreUnavailableError, type DamagedRow, type StoreUnavailableReason } from '@airlock/api';
import { QueryTimeoutError } from './query-timeout-error';
import { asDamagedStore } from './rows';
import { withErrorsMapped } from './storage-failure';

/** Socket errors of a connection that was never made: nothing was sent. */
const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** Socket errors of a connection lost, maybe with a statement sent. */
const CONNECTION_LOST = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

/**
 * Why PostgreSQL or its driver could not take a statement for now, or undefined for any other error: SQLSTATE class 53
 * (insufficient resources: 53100 disk full, 53200 out of memory, 53300 too many connections), 57P01–57P03 (the
 * server shutting down or starting up), class 08 (connection exceptions), and the socket errors and messages of the
 * driver and its pool. A statement failed with any of these was not applied, but on a connection lost once it was
 * sent, a session the server ended as it shut down, or a statement left unanswered past the query timeout (all
 * "connection-lost").
 */
export function unavailableReason(error: Error): StoreUnavailableReason | undefined {
  if (error instanceof QueryTimeoutError) return 'connection-lost';
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code === '53100') return 'full';
    if (code === '53200') return 'out-of-memory';
    if (code === '53300') return 'too-many-connections';
    if (code.startsWith('53')) return 'out-of-resources';
    // 57P03: a connection refused while the server starts or stops, before any statement. 57P01 and 57P02 end a
    // session the server is shutting down under, at its next interrupt check, which can fall after a COMMIT it has
    // made durable and before its answer: the statement may have been applied, as on a connection lost.
    if (code === '57P03') return 'shutting-down';
    if (code === '57P01' || code === '57P02') return 'connection-lost';
    // 08001 unable to connect, 08004 connection rejected: nothing was sent. Any other (08006 failure, 08003 no
    // connection, 08007 transaction resolution unknown) may have come after the statement.
    if (code === '08001' || code === '08004' || NEVER_CONNECTED.has(code)) return 'unreachable';
    if (code.startsWith('08') || CONNECTION_LOST.has(code)) return 'connection-lost';
  }
  // pg-pool's wait for a connection, pg's connect timeout, and a query on a client already broken: never sent.
  if (/timeout exceeded when trying to connect|Connection terminated due to connection timeout|Client has encountered a connection error/i.test(error.message)) return 'unreachable';
  if (/Connection terminated|Connection ended unexpectedly/i.test(error.message)) return 'connection-lost';
  return undefined;
}

/** An error of PostgreSQL or its driver that says the database cannot be used for now, as a StoreUnavailableError; any other as it is. */
export function asStoreUnavailable(location: string, error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof StoreUnavailableError) return error;
  const reason = unavailableReason(error);
  if (reason === undefined) return error;
  const code = (error as { code?: unknown }).code;
  return new StoreUnavailableError(location, reason, typeof code === 'string' ? `${code}: ${error.message}` : error.message, { cause: error });
}

/**
 * The store, with what its methods reject with for a database that cannot be used for now (full, out of memory or
 * connections, shutting down, unreachable) turned into a StoreUnavailableError naming the database: a client is
 * told what happened and what to do, not "internal error". Everything else passes through unchanged. Its methods
 * run on the store itself, so what they call inside it sees the driver's own errors. A record whose text does not read
 * is said as a damaged database, naming it and the record (asDamagedStore).
 */
export function withUnavailableErrors<Store extends object>(store: Store, location: string, deleting: (row: DamagedRow) => string): Store {
  return withErrorsMapped(store, (error) => asStoreUnavailable(location, asDamagedStore(location, error, deleting)));
}
