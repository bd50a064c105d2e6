/** What pg rejects a query with once its `query_timeout` passed with no answer. */
const PG_QUERY_TIMEOUT = 'Query read timeout';

/**
 * PostgreSQL gave no answer to a statement within the query timeout: a network path that died without closing (the
 * kernel would retry for about 15 minutes), or a database that stopped answering. The connection is dropped, so
 * the statement may or may not have been applied.
 */
export class QueryTimeoutError extends Error {
  override readonly name = 'QueryTimeoutError';
  constructor(
    readonly timeoutMs: number,
    options: { cause: unknown },
  ) {
    super(`PostgreSQL did not answer within ${timeoutMs} ms; the connection was dropped`, options);
  }
}

/** Whether `error` is pg's own for a query whose timeout passed. */
export function isPgQueryTimeout(error: unknown): error is Error {
  return error instanceof Error && !(error instanceof QueryTimeoutError) && error.message === PG_QUERY_TIMEOUT;
}
