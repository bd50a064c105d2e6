import { StoreUnavailableError } from '@airlock/api';
import { NotFoundError } from '@airlock/core';
import { DatabaseError } from 'pg';
import { describe, expect, it } from 'vitest';
import { asStoreUnavailable, withUnavailableErrors } from './database-unavailable';
import { describeLocation } from './postgres-store';

const WHERE = 'postgres://airlock@db:5432/airlock (schema public)';

/** An error as PostgreSQL sends it, with its SQLSTATE. */
function sqlState(code: string, message: string): DatabaseError {
  const error = new DatabaseError(message, message.length, 'error');
  error.code = code;
  return error;
}

function reasonOf(error: Error): { reason: string; mayBeStored: boolean } | undefined {
  const mapped = asStoreUnavailable(WHERE, error);
  return mapped instanceof StoreUnavailableError ? { reason: mapped.reason, mayBeStored: mapped.mayBeStored } : undefined;
}

describe('errors of a PostgreSQL database that cannot be used for now', () => {
  it('says each in words a person can act on, naming the database and the SQLSTATE', () => {
    const full = asStoreUnavailable(WHERE, sqlState('53100', 'could not extend file "base/1/2": No space left on device'));
    expect(full).toBeInstanceOf(StoreUnavailableError);
    expect((full as Error).message).toBe(
      `The database ${WHERE} has no space left (53100: could not extend file "base/1/2": No space left on device): free space on the database server and try again`,
    );
    expect(reasonOf(sqlState('53200', 'out of memory'))).toStrictEqual({ reason: 'out-of-memory', mayBeStored: false });
    expect(reasonOf(sqlState('53300', 'sorry, too many clients already'))).toStrictEqual({ reason: 'too-many-connections', mayBeStored: false });
    expect(reasonOf(sqlState('53400', 'configuration limit exceeded'))).toStrictEqual({ reason: 'out-of-resources', mayBeStored: false });
    expect(reasonOf(sqlState('57P03', 'the database system is starting up'))).toStrictEqual({ reason: 'shutting-down', mayBeStored: false });
    expect(reasonOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toStrictEqual({ reason: 'unreachable', mayBeStored: false });
    expect(reasonOf(new Error('timeout exceeded when trying to connect'))).toStrictEqual({ reason: 'unreachable', mayBeStored: false });
  });

  it('says that a write may have been stored when the connection was lost with it sent', () => {
    expect(reasonOf(sqlState('08006', 'connection failure'))).toStrictEqual({ reason: 'connection-lost', mayBeStored: true });
    expect(reasonOf(sqlState('08007', 'transaction resolution unknown'))).toStrictEqual({ reason: 'connection-lost', mayBeStored: true });
    expect(reasonOf(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toStrictEqual({ reason: 'connection-lost', mayBeStored: true });
    expect(reasonOf(new Error('Connection terminated unexpectedly'))).toStrictEqual({ reason: 'connection-lost', mayBeStored: true });
    // A session the server ends as it shuts down may end after a COMMIT it made durable, before the answer.
    expect(reasonOf(sqlState('57P01', 'terminating connection due to administrator command'))).toStrictEqual({ reason: 'connection-lost', mayBeStored: true });
    expect(reasonOf(sqlState('57P02', 'terminating connection because of crash of another server process'))).toStrictEqual({ reason: 'connection-lost', mayBeStored: true });
    expect((asStoreUnavailable(WHERE, new Error('Connection terminated unexpectedly')) as Error).message).toMatch(/may or may not be stored/);
  });

  it('passes every other error through unchanged: a refused statement, a domain error', async () => {
    const unique = sqlState('23505', 'duplicate key value violates unique constraint');
    expect(asStoreUnavailable(WHERE, unique)).toBe(unique);
    const missing = new NotFoundError('run', 'r');
    const store = withUnavailableErrors(
      {
        missing: () => Promise.reject(missing),
        full: () => Promise.reject(sqlState('53100', 'No space left on device')),
        fine: () => Promise.resolve(1),
      },
      WHERE,
      () => '',
    );
    await expect(store.missing()).rejects.toBe(missing);
    await expect(store.full()).rejects.toMatchObject({ name: 'StoreUnavailableError', reason: 'full' });
    await expect(store.fine()).resolves.toBe(1);
  });
});

describe('the database as errors name it', () => {
  it('keeps neither the password nor any parameter of its URL, which the driver may take as one', () => {
    const named = describeLocation('postgres://airlock:pw1@db:5432/airlock?password=s3cret&sslpassword=k3y&sslmode=require#x', 'chats');
    expect(named).toBe('postgres://airlock@db:5432/airlock (schema chats)');
    const error = asStoreUnavailable(named, sqlState('53100', 'No space left on device'));
    expect((error as Error).message).not.toMatch(/pw1|s3cret|k3y/);
  });
});
