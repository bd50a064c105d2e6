import { useSyncExternalStore } from 'react';
import { defaultToolSettings, parseToolSettings, type ToolSettings } from './tool-settings';

const STORAGE_KEY = 'airlock.settings.v1';

/** Tool settings in localStorage, shared by every tab of this origin (the storage event keeps them in step). */
export class SettingsStore {
  private snapshot: ToolSettings;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly storage: Storage | undefined) {
    this.snapshot = this.read();
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    const onStorage = (event: StorageEvent) => {
      if (event.key !== STORAGE_KEY) return;
      this.snapshot = this.read();
      listener();
    };
    window.addEventListener('storage', onStorage);
    return () => {
      this.listeners.delete(listener);
      window.removeEventListener('storage', onStorage);
    };
  };

  readonly getSnapshot = (): ToolSettings => this.snapshot;

  update(patch: Partial<ToolSettings>): void {
    this.snapshot = parseToolSettings({ ...this.snapshot, ...patch });
    try {
      this.storage?.setItem(STORAGE_KEY, JSON.stringify(this.snapshot));
    } catch {
      // Storage full or blocked: the settings still apply to this tab.
    }
    for (const listener of this.listeners) listener();
  }

  private read(): ToolSettings {
    try {
      const raw = this.storage?.getItem(STORAGE_KEY);
      return raw ? parseToolSettings(JSON.parse(raw)) : defaultToolSettings;
    } catch {
      return defaultToolSettings;
    }
  }
}

export function useToolSettings(store: SettingsStore): ToolSettings {
  return useSyncExternalStore(store.subscribe, store.getSnapshot);
}
