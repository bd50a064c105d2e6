import { AirlockError } from '@airlock/core';
import Database from 'better-sqlite3';

/**
 * The store could not write (or read) its data folder: the disk is full, or it failed. Said in words a person can act
 * on, to the client whose request it failed and at start-up, where SQLite's own error was "internal error" on the
 * client and a stack trace at start-up.
 */
export class StorageFailure extends AirlockError {
  readonly fault = 'system';
  override readonly name = 'StorageFailure';
  constructor(
    readonly directory: string,
    readonly full: boolean,
    options: { cause: unknown },
  ) {
    super(
      full
        ? `Airlock's data folder ${directory} is full: free space there and try again`
        : `Airlock could not read or write its data folder ${directory} (${detailOf(options.cause)}): check the disk (space, errors in the system log) and try again`,
      options,
    );
  }
}

/** SQLITE_FULL, SQLITE_IOERR* and SQLITE_READONLY* as a StorageFailure; any other error as it is. */
export function asStorageFailure(directory: string, error: unknown): unknown {
  if (!(error instanceof Database.SqliteError)) return error;
  if (error.code === 'SQLITE_FULL') return new StorageFailure(directory, true, { cause: error });
  if (error.code.startsWith('SQLITE_IOERR') || error.code.startsWith('SQLITE_READONLY')) return new StorageFailure(directory, false, { cause: error });
  return error;
}

/**
 * The store, with its methods' SQLITE_FULL, SQLITE_IOERR* and SQLITE_READONLY* failures turned into a StorageFailure that names the
 * data folder. Everything else passes through unchanged.
 */
export function withStorageFailures<Store extends object>(store: Store, directory: string): Store {
  return withErrorsMapped(store, (error) => asStorageFailure(directory, error));
}

/**
 * The store, with what each of its methods throws or rejects with passed through `map` (which gives any error it
 * does not know back as it is). Its methods run on the store itself, so what they call inside it sees the errors
 * unmapped.
 */
export function withErrorsMapped<Store extends object>(store: Store, map: (error: unknown) => unknown): Store {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      let method = wrapped.get(key);
      if (method === undefined) {
        const original = value as (...args: unknown[]) => unknown;
        method = (...args: unknown[]): unknown => {
          let result: unknown;
          try {
            result = original.apply(target, args);
          } catch (error) {
            throw map(error);
          }
          return result instanceof Promise
            ? result.catch((error: unknown) => {
                throw map(error);
              })
            : result;
        };
        wrapped.set(key, method);
      }
      return method;
    },
  });
}

function detailOf(error: unknown): string {
  return error instanceof Database.SqliteError ? `${error.code}: ${error.message}` : String(error);
}
