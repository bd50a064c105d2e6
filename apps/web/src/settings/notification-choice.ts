import { useEffect, useSyncExternalStore } from 'react';
import { LEGACY_STORAGE_KEY } from './settings-store';

/** Where this browser keeps whether it notifies of waiting calls, in this origin's localStorage. */
export const NOTIFY_STORAGE_KEY = 'airlock.notify-decisions';

export interface NotificationChoiceState {
  /** Undefined until this browser chose, or took the server's old setting as its default. */
  enabled: boolean | undefined;
  /** False when the browser keeps no storage for this page: the choice then lasts as long as the tab. */
  kept: boolean;
}

/**
 * Whether this browser shows system notifications of waiting calls. The browser's permission for them is its own,
 * so the choice is too: kept in this origin's localStorage, never on the server, where turning them off in one
 * browser turned them off for a person relying on them in another. Other tabs of this browser follow a change.
 */
export class NotificationChoice {
  private state: NotificationChoiceState;
  private readonly listeners = new Set<() => void>();

  constructor(
    /** This origin's localStorage; undefined when the browser blocks it. */
    private readonly storage: Storage | undefined,
    /** Where the other tabs' changes are heard (`storage` events). Default: this window. */
    private readonly events: Pick<Window, 'addEventListener' | 'removeEventListener'> = window,
  ) {
    this.state = this.read();
    // A browser that kept the tool settings itself (before the server did) kept this with them: its own choice.
    if (this.state.enabled === undefined) {
      const old = this.readLegacy();
      if (old !== undefined) this.adopt(old);
    }
  }

  start(): void {
    this.events.addEventListener('storage', this.onStorage);
  }

  close(): void {
    this.events.removeEventListener('storage', this.onStorage);
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getSnapshot = (): NotificationChoiceState => this.state;

  set(enabled: boolean): void {
    let kept = this.state.kept;
    try {
      this.storage?.setItem(NOTIFY_STORAGE_KEY, String(enabled));
    } catch {
      kept = false;
    }
    this.publish({ enabled, kept: kept && this.storage !== undefined });
  }

  /**
   * Takes `enabled` as this browser's choice when it has none yet: a browser that had notifications on through the
   * server's old setting (one for every browser) keeps them on.
   */
  adopt(enabled: boolean): void {
    if (this.state.enabled === undefined) this.set(enabled);
  }

  private readonly onStorage = (event: StorageEvent): void => {
    if (event.key !== NOTIFY_STORAGE_KEY && event.key !== null) return;
    const next = this.read();
    // Cleared elsewhere: this tab's choice stands until the next reload.
    if (next.enabled !== undefined) this.publish(next);
  };

  private read(): NotificationChoiceState {
    if (this.storage === undefined) return { enabled: undefined, kept: false };
    try {
      const raw = this.storage.getItem(NOTIFY_STORAGE_KEY);
      return { enabled: raw === 'true' ? true : raw === 'false' ? false : undefined, kept: true };
    } catch {
      return { enabled: undefined, kept: false };
    }
  }

  private readLegacy(): boolean | undefined {
    try {
      const raw = this.storage?.getItem(LEGACY_STORAGE_KEY);
      const value: unknown = raw ? JSON.parse(raw) : undefined;
      const old = typeof value === 'object' && value !== null && Object.hasOwn(value, 'notifyDecisions') ? (value as { notifyDecisions: unknown }).notifyDecisions : undefined;
      return typeof old === 'boolean' ? old : undefined;
    } catch {
      return undefined;
    }
  }

  private publish(next: NotificationChoiceState): void {
    if (next.enabled === this.state.enabled && next.kept === this.state.kept) return;
    this.state = next;
    for (const listener of this.listeners) listener();
  }
}

/**
 * This browser's choice. `serverDefault` is the server's old setting, once read: the choice of a browser that has
 * none yet.
 */
export function useNotificationChoice(choice: NotificationChoice, serverDefault: boolean | undefined): NotificationChoiceState {
  const state = useSyncExternalStore(choice.subscribe, choice.getSnapshot);
  useEffect(() => {
    if (serverDefault !== undefined) choice.adopt(serverDefault);
  }, [choice, serverDefault]);
  return state;
}
