// Test support: every AirlockStore implementation, opened fresh, for suites that must hold for each of them.
import { MemoryStore, type AirlockStore } from '@airlock/api';
import { openTestDatabase, probeTestDatabase } from '../../test/support/postgres';
import { PostgresStore } from './postgres-store';
import { SqliteStore } from './sqlite-store';
import { tempFolder } from './test-support';

export interface OpenedStore extends AsyncDisposable {
  store: AirlockStore;
}

export interface StoreImplementation {
  name: string;
  open: () => Promise<OpenedStore>;
  /** Set when the implementation cannot run here (no PostgreSQL): its tests are reported as skipped with it. */
  skipReason?: string;
}

const quiet = { log: () => {} };

/** Memory, SQLite (a temporary folder) and PostgreSQL (a fresh schema, or skipped with the reason when none answers). */
export async function storeImplementations(): Promise<StoreImplementation[]> {
  const postgres = await probeTestDatabase();
  return [
    {
      name: 'MemoryStore',
      open: async () => {
        const store = new MemoryStore();
        return { store, [Symbol.asyncDispose]: () => store.close() };
      },
    },
    {
      name: 'SqliteStore',
      open: async () => {
        const folder = await tempFolder();
        const store = await SqliteStore.open({ directory: folder.path, ...quiet });
        return {
          store,
          [Symbol.asyncDispose]: async () => {
            await store.close();
            await folder[Symbol.asyncDispose]();
          },
        };
      },
    },
    {
      name: postgres.available ? 'PostgresStore' : 'PostgresStore (skipped: no PostgreSQL)',
      open: async () => {
        const database = await openTestDatabase();
        const store = await PostgresStore.open({ url: database.url, schema: database.schema, ...quiet });
        return {
          store,
          [Symbol.asyncDispose]: async () => {
            await store.close();
            await database[Symbol.asyncDispose]();
          },
        };
      },
      ...(postgres.available ? {} : { skipReason: postgres.reason }),
    },
  ];
}
