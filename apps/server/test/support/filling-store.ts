import { MemoryStore, type AppendEventInput, type AirlockStore } from '@airlock/api';
import type { LoopEvent } from '@airlock/core';

/** What SQLite says of a write on a full disk. */
export const DISK_FULL = 'database or disk is full';

export interface FillingStore {
  /** Says, as SqliteStore does for SQLITE_FULL, that a write that failed with DISK_FULL may succeed later. */
  store: AirlockStore & MemoryStore;
  /** Lets the write of the event that fills the disk go on: it fails, and every write after it, until `free`. */
  fill: () => void;
  /** Space is back: writes succeed again. */
  free: () => void;
}

/**
 * A store in memory whose disk fills up while an event `fillsAt` picks is written: that write waits for `fill()`,
 * then it and every write after it fail as SQLite's do on a full disk, until `free()`.
 */
export function fillingStore({ fillsAt }: { fillsAt: (event: LoopEvent) => boolean }): FillingStore {
  const store = new MemoryStore();
  let full = false;
  let fill!: () => void;
  const filled = new Promise<void>((resolve) => (fill = resolve));
  let filling = false;
  const fills = async (inputs: readonly AppendEventInput[]) => {
    if (!filling && !full && inputs.some(({ event }) => fillsAt(event))) {
      filling = true;
      await filled;
      full = true;
    }
    if (full) throw new Error(DISK_FULL);
  };
  const refuse =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A) => {
      if (full) throw new Error(DISK_FULL);
      return write(...args);
    };
  const one = store.appendEvent.bind(store);
  const many = store.appendEvents.bind(store);
  store.appendEvent = async (input) => {
    await fills([input]);
    return one(input);
  };
  store.appendEvents = async (inputs) => {
    await fills(inputs);
    return many(inputs);
  };
  store.appendMessage = refuse(store.appendMessage.bind(store));
  store.beginRun = refuse(store.beginRun.bind(store));
  store.endRun = refuse(store.endRun.bind(store));
  store.updateSession = refuse(store.updateSession.bind(store));
  store.requestCancel = refuse(store.requestCancel.bind(store));
  const unavailable = Object.assign(store, { isUnavailable: (error: unknown) => error instanceof Error && error.message === DISK_FULL });
  return { store: unavailable, fill: () => fill(), free: () => (full = false) };
}
