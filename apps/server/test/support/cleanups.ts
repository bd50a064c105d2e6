import { afterEach } from 'vitest';
import { openTestDatabase, type TestDatabase } from './postgres';

/** What a test set up and must take down once it ends. */
export interface Cleanups {
  /** Runs `cleanup` after the test, before what was pushed earlier. */
  push(cleanup: () => Promise<void>): void;
  /** A fresh schema in the test database (see openTestDatabase), dropped after the test. */
  database(): Promise<TestDatabase>;
}

/**
 * Cleanups run after each test of the file that calls this (at its top level), last first, whether the test passed
 * or not. One that fails is passed over, so the rest still run: an instance a test crashed on purpose fails to stop.
 */
export function cleanupsAfterEach(): Cleanups {
  const pending: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of pending.splice(0).reverse()) await cleanup().catch(() => undefined);
  });
  return {
    push(cleanup) {
      pending.push(cleanup);
    },
    async database() {
      const db = await openTestDatabase();
      pending.push(async () => {
        await db[Symbol.asyncDispose]();
      });
      return db;
    },
  };
}
