import { createContext, useContext, useSyncExternalStore } from 'react';
import { randomId } from '../lib/random-id';

const KEY_PREFIX = 'airlock.held-edit.';

type SharedStorage = Pick<globalThis.Storage, 'getItem' | 'setItem' | 'removeItem' | 'key' | 'length'>;

export interface HeldEditsOptions {
  /**
   * Where every tab of this browser profile marks the calls whose edit it holds (localStorage, one key per call and
   * page), so a notification's Allow that the worker hands to another tab runs nothing either. Default none: this
   * page alone knows its edits.
   */
  shared?: SharedStorage | undefined;
  /** This page's id in those keys. Default a random one: a reload holds nothing until its restored draft does. */
  pageId?: string;
}

/**
 * The waiting calls whose card holds an edit not yet allowed, by approval id. While a card's editor shows "Will run
 * with" something else, an Allow from anywhere else in the tab (the waiting list, Allow all, a notification) would run
 * the model's proposal and drop the edit without a word: those places read this and send the person to the card.
 */
export class HeldEdits {
  /** Held by an open editor, as many times as it is held. */
  readonly #open = new Map<string, number>();
  /** Kept as this tab's draft, its card maybe gone (another chat open, a reload before the card shows). */
  #kept: ReadonlySet<string> = new Set();
  /** Both together: what every check reads. */
  #held: ReadonlySet<string> = new Set();
  readonly #listeners = new Set<() => void>();
  readonly #shared: SharedStorage | undefined;
  readonly #pageId: string;

  constructor(options: HeldEditsOptions = {}) {
    this.#shared = options.shared;
    this.#pageId = options.pageId ?? randomId('page');
  }

  /** Marks the call as held until the returned function is called (the edit was dropped, or the editor closed). */
  hold(approvalId: string): () => void {
    this.#open.set(approvalId, (this.#open.get(approvalId) ?? 0) + 1);
    this.#update();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const count = (this.#open.get(approvalId) ?? 1) - 1;
      if (count > 0) this.#open.set(approvalId, count);
      else this.#open.delete(approvalId);
      this.#update();
    };
  }

  /**
   * The calls whose edit this tab keeps as a draft (`WaitingDrafts`), held as if their editor were open: the card
   * goes with its chat when another is opened, and comes back with the edit, so an Allow from anywhere else would
   * still drop it.
   */
  holdKept(approvalIds: ReadonlySet<string>): void {
    this.#kept = new Set(approvalIds);
    this.#update();
  }

  /** Held in this tab. */
  has(approvalId: string): boolean {
    return this.#held.has(approvalId);
  }

  /**
   * Held in this tab or another of this browser. The notification worker hands a click to one tab, not always the
   * one whose card holds the edit; an Allow arriving here must not run the proposal there either. A tab that ended
   * without `pagehide` leaves its mark: that call's notification then only opens its card.
   */
  heldInAnyTab(approvalId: string): boolean {
    if (this.has(approvalId)) return true;
    const prefix = `${KEY_PREFIX}${approvalId}/`;
    try {
      for (let index = 0; index < (this.#shared?.length ?? 0); index++) if (this.#shared?.key(index)?.startsWith(prefix) === true) return true;
    } catch {
      // Blocked: only this tab's edits are known.
    }
    return false;
  }

  /** The page goes away (`pagehide`): other tabs no longer count its edits. */
  leave(): void {
    for (const approvalId of this.#held) this.#unmark(approvalId);
  }

  /** The page comes back from the browser's cache (`pageshow`), its edits still held. */
  rejoin(): void {
    for (const approvalId of this.#held) this.#mark(approvalId);
  }

  #mark(approvalId: string): void {
    try {
      this.#shared?.setItem(`${KEY_PREFIX}${approvalId}/${this.#pageId}`, '1');
    } catch {
      // Full or blocked: known to this tab only.
    }
  }

  #unmark(approvalId: string): void {
    try {
      this.#shared?.removeItem(`${KEY_PREFIX}${approvalId}/${this.#pageId}`);
    } catch {
      // Blocked: nothing was marked.
    }
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  readonly getSnapshot = (): ReadonlySet<string> => this.#held;

  #update(): void {
    const next = new Set([...this.#open.keys(), ...this.#kept]);
    if (next.size === this.#held.size && [...next].every((approvalId) => this.#held.has(approvalId))) return;
    for (const approvalId of next) if (!this.#held.has(approvalId)) this.#mark(approvalId);
    for (const approvalId of this.#held) if (!next.has(approvalId)) this.#unmark(approvalId);
    this.#held = next;
    for (const listener of this.#listeners) listener();
  }
}

function sharedStorage(): globalThis.Storage | undefined {
  try {
    const storage = typeof window === 'undefined' ? undefined : window.localStorage;
    // Blocked storage may throw only when used.
    storage?.getItem(KEY_PREFIX);
    return storage;
  } catch {
    return undefined;
  }
}

const tabHeldEdits = new HeldEdits({ shared: sharedStorage() });
if (typeof window !== 'undefined') {
  window.addEventListener('pagehide', () => tabHeldEdits.leave());
  window.addEventListener('pageshow', (event) => {
    if (event.persisted) tabHeldEdits.rejoin();
  });
}

/** One store for the tab by default, its edits known to this browser's other tabs; a test gives its own. */
export const HeldEditsContext = createContext(tabHeldEdits);

/** The approval ids whose card holds an edit, re-rendering as they change. */
export function useHeldEdits(): ReadonlySet<string> {
  const store = useContext(HeldEditsContext);
  return useSyncExternalStore(store.subscribe, store.getSnapshot);
}
