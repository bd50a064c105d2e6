import type { AppRouter } from '@airlock/api';
import type { TRPCClient } from '@trpc/client';
import { useSyncExternalStore } from 'react';
import type { RouterOutputs } from '../lib/api-types';
import { parseToolSettings, type ToolSettings, type ToolSettingsPatch } from './tool-settings';

/** Where this origin's browser kept the settings before the server did. */
export const LEGACY_STORAGE_KEY = 'airlock.settings.v1';

/** What the store needs of the server: `settings.get`, `settings.update`, `settings.watch`. */
export interface SettingsApi {
  get(): Promise<RouterOutputs['settings']['get']>;
  update(patch: ToolSettingsPatch): Promise<ToolSettings>;
  watch(handlers: { onData: (settings: ToolSettings) => void; onError: (error: unknown) => void; onComplete: () => void }): () => void;
}

export function settingsApi(client: TRPCClient<AppRouter>): SettingsApi {
  return {
    get: () => client.settings.get.query(),
    update: (patch) => client.settings.update.mutate(patch),
    watch: (handlers) => {
      const subscription = client.settings.watch.subscribe(undefined, handlers);
      return () => subscription.unsubscribe();
    },
  };
}

export interface SettingsState {
  /** Undefined until the server answered: runs start with no tools until then. */
  settings: ToolSettings | undefined;
  /** Why the last change was not saved (it was undone), or why the settings could not be read. */
  error: string | null;
}

/**
 * The tool settings, kept by the server for every browser and origin. Read once, then followed through
 * `settings.watch` (which starts with the whole settings, again after each reconnect); a change shows at once and
 * is undone, with a message, when the server refuses it.
 */
export class SettingsStore {
  private confirmed: ToolSettings | undefined;
  private optimistic: ToolSettings | undefined;
  private writing = 0;
  private saveError: string | null = null;
  private readError: string | null = null;
  private state: SettingsState = { settings: undefined, error: null };
  private readonly listeners = new Set<() => void>();
  private stopWatch: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly api: SettingsApi,
    /** This origin's localStorage, where older versions kept the settings: moved to the server once, then removed. */
    private readonly legacy: Storage | undefined,
  ) {}

  start(): void {
    this.watch();
    void this.load();
  }

  close(): void {
    this.closed = true;
    this.stopWatch?.();
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getSnapshot = (): SettingsState => this.state;

  /** Shows the change at once and sends it; ignored until the settings are loaded. */
  update(patch: ToolSettingsPatch): void {
    const base = this.optimistic ?? this.confirmed;
    if (base === undefined || this.closed) return;
    this.optimistic = parseToolSettings({ ...base, ...patch });
    this.writing++;
    this.saveError = null;
    this.publish();
    this.api.update(patch).then(
      (saved) => {
        this.confirmed = saved;
        this.settled();
      },
      (error: unknown) => {
        this.saveError = `Could not save the setting: ${messageOf(error)}`;
        this.settled();
      },
    );
  }

  private settled(): void {
    this.writing--;
    // The server's settings show again once no change is on its way: a refused one is undone then.
    if (this.writing === 0) this.optimistic = undefined;
    this.publish();
  }

  private watch(): void {
    if (this.closed) return;
    this.stopWatch = this.api.watch({
      onData: (settings) => this.confirm(settings),
      onError: (error) => {
        this.readError = `Could not read the settings: ${messageOf(error)}`;
        this.publish();
      },
      // The server ends every watch when it stops: the next one is watched (and answers the settings first).
      onComplete: () => this.watch(),
    });
  }

  private async load(): Promise<void> {
    try {
      const stored = await this.api.get();
      const local = this.readLegacy();
      if (!stored.saved && local !== undefined) {
        // Notifications are each browser's own (NotificationChoice took this browser's old choice): not sent.
        const { notifyDecisions: _notifyDecisions, ...shared } = local;
        const saved = await this.api.update(shared);
        this.removeLegacy();
        this.confirm(saved);
        return;
      }
      if (local !== undefined) this.removeLegacy();
      if (this.confirmed === undefined) this.confirm(stored.settings);
    } catch (error) {
      if (this.confirmed !== undefined) return;
      this.readError = `Could not read the settings: ${messageOf(error)}`;
      this.publish();
    }
  }

  private confirm(settings: ToolSettings): void {
    this.confirmed = settings;
    this.readError = null;
    this.publish();
  }

  private publish(): void {
    if (this.closed) return;
    const settings = this.optimistic ?? this.confirmed;
    const error = this.saveError ?? this.readError;
    if (settings === this.state.settings && error === this.state.error) return;
    this.state = { settings, error };
    for (const listener of this.listeners) listener();
  }

  private readLegacy(): ToolSettings | undefined {
    try {
      const raw = this.legacy?.getItem(LEGACY_STORAGE_KEY);
      return raw ? parseToolSettings(JSON.parse(raw)) : undefined;
    } catch {
      return undefined;
    }
  }

  private removeLegacy(): void {
    try {
      this.legacy?.removeItem(LEGACY_STORAGE_KEY);
    } catch {
      // Storage blocked: the server's settings win from now on anyway (they are saved).
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function useToolSettings(store: SettingsStore): SettingsState {
  return useSyncExternalStore(store.subscribe, store.getSnapshot);
}
