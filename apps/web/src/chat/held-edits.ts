import { createContext, useContext, useSyncExternalStore } from 'react';

/**
 * The waiting calls whose card holds an edit not yet allowed, by approval id. While a card's editor shows "Will run
 * with" something else, an Allow from anywhere else in the tab (the waiting list, Allow all, a notification) would run
 * the model's proposal and drop the edit without a word: those places read this and send the person to the card.
 */
export class HeldEdits {
  #held: ReadonlySet<string> = new Set();
  readonly #listeners = new Set<() => void>();

  /** Marks the call as held until the returned function is called (the edit was dropped, or the editor closed). */
  hold(approvalId: string): () => void {
    this.#set(new Set(this.#held).add(approvalId));
    return () => {
      const next = new Set(this.#held);
      next.delete(approvalId);
      this.#set(next);
    };
  }

  has(approvalId: string): boolean {
    return this.#held.has(approvalId);
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  readonly getSnapshot = (): ReadonlySet<string> => this.#held;

  #set(next: ReadonlySet<string>): void {
    this.#held = next;
    for (const listener of this.#listeners) listener();
  }
}

/** One store for the tab by default; a test gives its own. */
export const HeldEditsContext = createContext(new HeldEdits());

/** The approval ids whose card holds an edit, re-rendering as they change. */
export function useHeldEdits(): ReadonlySet<string> {
  const store = useContext(HeldEditsContext);
  return useSyncExternalStore(store.subscribe, store.getSnapshot);
}
