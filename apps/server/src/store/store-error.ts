/** What is wrong with the database file, each with what a person can do about it. */
export type StoreProblem = 'corrupt' | 'locked' | 'newer-schema' | 'cannot-open' | 'unreachable' | 'not-airlock' | 'not-private' | 'instance-in-use';

const advice: Record<StoreProblem, string> = {
  corrupt: 'It was left as it is: restore it from a backup, or move it aside to start with an empty store.',
  locked:
    'Another process holds it, most likely another Airlock server with the same data folder: stop that one, or start this one with another --data-dir.',
  'newer-schema': 'It was written by a newer Airlock and was left as it is: run that version, or start this one with another --data-dir (with PostgreSQL, --database-schema).',
  'cannot-open': 'Check that the folder exists and that this user may read and write it.',
  'not-airlock': "It was left as it is: give Airlock a data folder of its own with --data-dir (with PostgreSQL, a schema of its own with --database-schema).",
  'not-private':
    'Airlock keeps chats, decisions and the rules that let calls run unasked there, so only the user running it may own and change them: use a folder of your own (--data-dir), or make this one yours and private (chown, chmod 700).',
  'instance-in-use':
    "Two live processes under one id would renew and release each other's runs: give this one an id of its own (--instance-id), or stop the other first. A process that was killed frees its id within half a lease (--lease-ms), the time a new start waits to see that it renews no more; one that stopped answering (paused, cut off), once its lease has run out.",
  unreachable: 'Check that the PostgreSQL server is running and reachable, and the database URL (host, port, database, user, password).',
};

/** The store's database (a SQLite file, or a PostgreSQL database) cannot be used as it is; nothing in it was changed. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly file: string,
    readonly problem: StoreProblem,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${detail}. ${advice[problem]}`, options?.cause === undefined ? undefined : { cause: options.cause });
  }
}

/**
 * A migration the database refused with an SQL error (a column or table it adds is there already, one it changes is
 * not): the tables are not what its record of migrations says, changed by something other than this code, and the
 * database is refused as damaged, the migration named, rather than ending the start with the database's message alone.
 */
export function schemaMismatch(location: string, migration: { version: number; name: string }, error: Error): StoreError {
  return new StoreError(location, 'corrupt', `its schema does not match its record of migrations: migration ${migration.version} (${migration.name}) failed on it (${error.message})`, {
    cause: error,
  });
}
