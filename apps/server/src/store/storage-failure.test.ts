import { toTRPCError } from '@airlock/api';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../create-services';
import { StorageFailure, withStorageFailures } from './storage-failure';
import { session, tempFolder } from './test-support';

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('a full or failing disk under the SQLite store', () => {
  it('reaches the client as "the data folder is full: free space", not "internal error"', async () => {
    await using folder = await tempFolder();
    const directory = join(folder.path, 'data');
    const store = await openSqliteStore(directory, () => {});
    // SQLite fails a write that needs more pages than max_page_count with SQLITE_FULL, as it does on a full disk.
    const db = (store as unknown as { db: Database.Database }).db;
    db.pragma(`max_page_count = ${String(db.pragma('page_count', { simple: true }))}`);

    const error = toTRPCError(await failureOf(store.createSession(session('s', 1, { title: 'x'.repeat(100_000) }))));
    expect(error.code).toBe('INTERNAL_SERVER_ERROR');
    expect(error.message).toBe(`Airlock's data folder ${directory} is full: free space there and try again`);
    await store.close();
  });

  it('says which folder could not be written, and the disk error, for an I/O error', async () => {
    const failing = { appendEvent: () => Promise.reject(new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_FSYNC')), file: 'airlock.db' };
    const store = withStorageFailures(failing, '/data');
    expect(store.file).toBe('airlock.db');
    const error = toTRPCError(await failureOf(store.appendEvent()));
    expect(error.message).toBe(
      'Airlock could not read or write its data folder /data (SQLITE_IOERR_FSYNC: disk I/O error): check the disk (space, errors in the system log) and try again',
    );
  });

  it('says a read-only data folder, as a failure to write it', async () => {
    const store = withStorageFailures({ appendEvent: () => Promise.reject(new Database.SqliteError('attempt to write a readonly database', 'SQLITE_READONLY')) }, '/data');
    const error = toTRPCError(await failureOf(store.appendEvent()));
    expect(error.message).toBe(
      'Airlock could not read or write its data folder /data (SQLITE_READONLY: attempt to write a readonly database): check the disk (space, errors in the system log) and try again',
    );
  });

  it('tells the chat service that a full, failing or read-only folder cannot take writes for now, and nothing else', async () => {
    await using folder = await tempFolder();
    const directory = join(folder.path, 'data');
    const store = await openSqliteStore(directory, () => {});
    const db = (store as unknown as { db: Database.Database }).db;
    db.pragma(`max_page_count = ${String(db.pragma('page_count', { simple: true }))}`);
    const full = await failureOf(store.createSession(session('s', 1, { title: 'x'.repeat(100_000) })));
    expect(full).toBeInstanceOf(StorageFailure);
    expect(store.isUnavailable?.(full)).toBe(true);
    for (const code of ['SQLITE_FULL', 'SQLITE_IOERR_WRITE', 'SQLITE_READONLY_DBMOVED']) expect(store.isUnavailable?.(new Database.SqliteError('failed', code))).toBe(true);
    expect(store.isUnavailable?.(new Database.SqliteError('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_UNIQUE'))).toBe(false);
    expect(store.isUnavailable?.(new Error('database or disk is full'))).toBe(false);
    await store.close();
  });

  it('leaves other errors as they are', async () => {
    const constraint = new Database.SqliteError('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_UNIQUE');
    const store = withStorageFailures({ save: () => Promise.reject(constraint), count: () => 3 }, '/data');
    expect(await failureOf(store.save())).toBe(constraint);
    expect(store.count()).toBe(3);
  });
});
