import type { AirlockStore } from './store';
import { parseToolSettings, type ToolSettings, type ToolSettingsPatch } from './tool-settings';

/** The store key of the web app's tool settings (one JSON record). */
export const TOOL_SETTINGS_KEY = 'web.tool-settings';

export interface StoredToolSettings {
  settings: ToolSettings;
  /** False while nothing was ever saved (`settings` are the defaults). */
  saved: boolean;
}

/**
 * The web app's tool settings in the store, and who watches them. Watchers hear of changes made through this
 * instance; with several instances on one database, another instance's watchers see a change on their next read.
 */
export class ToolSettingsService {
  private readonly listeners = new Set<(settings: ToolSettings) => void>();
  private writes: Promise<unknown> = Promise.resolve();

  constructor(private readonly store: Pick<AirlockStore, 'getSetting' | 'setSetting'>) {}

  async get(): Promise<StoredToolSettings> {
    const raw = await this.store.getSetting(TOOL_SETTINGS_KEY);
    if (raw === undefined) return { settings: parseToolSettings(undefined), saved: false };
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = undefined;
    }
    return { settings: parseToolSettings(parsed), saved: true };
  }

  /** Applies a patch already checked against its limits; answers the settings as saved. */
  update(patch: ToolSettingsPatch): Promise<ToolSettings> {
    // One write at a time: two patches sent together each keep the other's fields.
    const written = this.writes.then(async () => {
      const { settings: current } = await this.get();
      const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
      const settings = parseToolSettings({ ...current, ...changes });
      await this.store.setSetting(TOOL_SETTINGS_KEY, JSON.stringify(settings));
      for (const listener of this.listeners) listener(settings);
      return settings;
    });
    this.writes = written.catch(() => undefined);
    return written;
  }

  /** Calls `listener` with the whole settings after each change, until the returned function is called. */
  watch(listener: (settings: ToolSettings) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
