import type { Cluster, ClusterMessage } from './cluster';
import type { AirlockStore } from './store';
import { parseToolSettings, type ToolSettings, type ToolSettingsPatch } from './tool-settings';

/** The store key of the web app's tool settings (one JSON record). */
export const TOOL_SETTINGS_KEY = 'web.tool-settings';

export interface StoredToolSettings {
  settings: ToolSettings;
  /** False while nothing was ever saved (`settings` are the defaults). */
  saved: boolean;
}

export interface ToolSettingsServiceOptions {
  /** With several instances on one store: how a change made through any of them reaches every instance's watchers. */
  cluster?: Pick<Cluster, 'publish' | 'subscribe'>;
  /** Receives a line when the other instances could not be told of a change, or the settings not read again. Default `console.warn`. */
  log?: (line: string) => void;
}

/**
 * The web app's tool settings in the store, and who watches them. Alone, an instance tells its watchers of each
 * change made through it. With a cluster, a change is announced to every instance (this one too) by a message
 * without content, and each reads the settings back from the store for its watchers, one read at a time: they hear
 * of a change made through any instance, never an older state after a newer one.
 */
export class ToolSettingsService {
  private readonly listeners = new Set<(settings: ToolSettings) => void>();
  private writes: Promise<unknown> = Promise.resolve();
  private readonly log: (line: string) => void;
  /** While someone watches, with a cluster: stops listening to its messages. */
  private stopListening: (() => void) | undefined;
  /** The read of the settings under way for the watchers, and whether another must follow it (a message came meanwhile). */
  private reading: Promise<void> | undefined;
  private readAgain = false;

  constructor(
    private readonly store: Pick<AirlockStore, 'getSetting' | 'setSetting'>,
    private readonly options: ToolSettingsServiceOptions = {},
  ) {
    this.log = options.log ?? ((line) => console.warn(line));
  }

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
      if (this.options.cluster === undefined) this.tell(settings);
      else this.announce(this.options.cluster);
      return settings;
    });
    this.writes = written.catch(() => undefined);
    return written;
  }

  /** Calls `listener` with the whole settings after each change, until the returned function is called. */
  watch(listener: (settings: ToolSettings) => void): () => void {
    // Wrapped, so that the same function watching twice is called twice and stopped once each.
    const entry = (settings: ToolSettings) => listener(settings);
    this.listeners.add(entry);
    if (this.options.cluster !== undefined) this.stopListening ??= this.options.cluster.subscribe((message) => this.heard(message));
    return () => {
      this.listeners.delete(entry);
      if (this.listeners.size > 0) return;
      this.stopListening?.();
      this.stopListening = undefined;
    };
  }

  private tell(settings: ToolSettings): void {
    for (const listener of [...this.listeners]) listener(settings);
  }

  private announce(cluster: Pick<Cluster, 'publish'>): void {
    cluster.publish({ type: 'settings' }).catch((error: unknown) => {
      this.log(`Could not tell the other instances about a change of the tool settings: ${messageOf(error)}`);
      // The watchers here still hear of it.
      this.reread();
    });
  }

  private heard(message: ClusterMessage): void {
    // After a resync, a change may have been missed: read them again all the same.
    if (message.type === 'settings' || message.type === 'resync') this.reread();
  }

  /** Reads the settings for the watchers after any read under way: each read starts after the message that asked for it. */
  private reread(): void {
    if (this.reading !== undefined) {
      this.readAgain = true;
      return;
    }
    this.reading = (async () => {
      do {
        this.readAgain = false;
        try {
          const { settings } = await this.get();
          this.tell(settings);
        } catch (error) {
          this.log(`Could not read the tool settings again: ${messageOf(error)}`);
        }
      } while (this.readAgain && this.listeners.size > 0);
      this.reading = undefined;
    })();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
