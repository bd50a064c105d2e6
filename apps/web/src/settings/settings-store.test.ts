import { MemoryStore, toolSettingsPatchSchema, ToolSettingsService } from '@airlock/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LEGACY_STORAGE_KEY, SettingsStore, type SettingsApi } from './settings-store';
import { defaultToolSettings } from './tool-settings';

const stores: SettingsStore[] = [];

afterEach(() => {
  for (const store of stores.splice(0)) store.close();
  window.localStorage.clear();
});

/** The server's side of the settings as the router serves them: a real service on a memory store, patches checked by the router's schema. */
function server() {
  const service = new ToolSettingsService(new MemoryStore());
  let held: Promise<void> | undefined;
  const api: SettingsApi = {
    get: () => service.get(),
    update: async (patch) => {
      const checked = toolSettingsPatchSchema.parse(patch);
      await held;
      return service.update(checked);
    },
    watch: (handlers) => {
      const stop = service.watch(handlers.onData);
      void service.get().then(({ settings }) => handlers.onData(settings));
      return stop;
    },
  };
  const hold = () => {
    let release!: () => void;
    held = new Promise<void>((resolve) => (release = resolve));
    return () => {
      held = undefined;
      release();
    };
  };
  return { service, api, hold };
}

function open(api: SettingsApi, legacy: Storage | undefined = window.localStorage): SettingsStore {
  const store = new SettingsStore(api, legacy);
  stores.push(store);
  store.start();
  return store;
}

describe('SettingsStore', () => {
  it('has no settings until the server answers, then the server’s', async () => {
    const { service, api } = server();
    await service.update({ disabledTools: ['terminal'] });
    const store = open(api);
    expect(store.getSnapshot()).toStrictEqual({ settings: undefined, error: null });
    await vi.waitFor(() => expect(store.getSnapshot()).toStrictEqual({ settings: { ...defaultToolSettings, disabledTools: ['terminal'] }, error: null }), { timeout: 10_000 });
  });

  it('moves this origin’s old local settings to a server that has none, once, and removes the local copy', async () => {
    const { service, api } = server();
    // Notifications are not among them: they are each browser's own (NotificationChoice).
    window.localStorage.setItem(LEGACY_STORAGE_KEY, JSON.stringify({ disabledTools: ['python'], maxToolCalls: 999, notifyDecisions: true }));
    const store = open(api);
    const moved = { ...defaultToolSettings, disabledTools: ['python'], maxToolCalls: 200 };
    await vi.waitFor(() => expect(store.getSnapshot().settings).toStrictEqual(moved), { timeout: 10_000 });
    expect(await service.get()).toStrictEqual({ settings: moved, saved: true });
    expect(window.localStorage.getItem(LEGACY_STORAGE_KEY)).toBe(null);
  });

  it('keeps the server’s settings over an old local copy, and removes the copy', async () => {
    const { service, api } = server();
    await service.update({ maxToolCalls: 5 });
    window.localStorage.setItem(LEGACY_STORAGE_KEY, JSON.stringify({ disabledTools: ['python'] }));
    const store = open(api);
    await vi.waitFor(() => expect(window.localStorage.getItem(LEGACY_STORAGE_KEY)).toBe(null), { timeout: 10_000 });
    expect(store.getSnapshot().settings).toStrictEqual({ ...defaultToolSettings, maxToolCalls: 5 });
    expect((await service.get()).settings).toStrictEqual({ ...defaultToolSettings, maxToolCalls: 5 });
  });

  it('shows a change at once and saves it on the server', async () => {
    const { service, api, hold } = server();
    const store = open(api);
    await vi.waitFor(() => expect(store.getSnapshot().settings).toStrictEqual(defaultToolSettings), { timeout: 10_000 });
    const release = hold();
    store.update({ disabledTools: ['terminal'] });
    expect(store.getSnapshot()).toStrictEqual({ settings: { ...defaultToolSettings, disabledTools: ['terminal'] }, error: null });
    expect((await service.get()).saved).toBe(false);
    release();
    await vi.waitFor(async () => expect((await service.get()).settings).toStrictEqual({ ...defaultToolSettings, disabledTools: ['terminal'] }), { timeout: 10_000 });
    expect(store.getSnapshot()).toStrictEqual({ settings: { ...defaultToolSettings, disabledTools: ['terminal'] }, error: null });
  });

  it('undoes a change the server refuses, and says why', async () => {
    const { api } = server();
    const store = open(api);
    await vi.waitFor(() => expect(store.getSnapshot().settings).toStrictEqual(defaultToolSettings), { timeout: 10_000 });
    store.update({ disabledTools: ['x'.repeat(200)] });
    await vi.waitFor(() => expect(store.getSnapshot().settings).toStrictEqual(defaultToolSettings), { timeout: 10_000 });
    expect(store.getSnapshot().error).toMatch(/^Could not save the setting: /);
    store.update({ maxToolCalls: 3 });
    expect(store.getSnapshot()).toStrictEqual({ settings: { ...defaultToolSettings, maxToolCalls: 3 }, error: null });
  });

  it('follows a change made elsewhere (another tab, another browser)', async () => {
    const { service, api } = server();
    const store = open(api);
    await vi.waitFor(() => expect(store.getSnapshot().settings).toStrictEqual(defaultToolSettings), { timeout: 10_000 });
    const heard = vi.fn();
    store.subscribe(heard);
    await service.update({ notifyDecisions: true });
    expect(store.getSnapshot()).toStrictEqual({ settings: { ...defaultToolSettings, notifyDecisions: true }, error: null });
    expect(heard).toHaveBeenCalledTimes(1);
  });

  it('says so when the settings cannot be read, and keeps none (runs then get no tools)', async () => {
    const { api } = server();
    const store = open({ ...api, get: () => Promise.reject(new Error('this server keeps no settings')), watch: () => () => undefined });
    await vi.waitFor(() => expect(store.getSnapshot()).toStrictEqual({ settings: undefined, error: 'Could not read the settings: this server keeps no settings' }), {
      timeout: 10_000,
    });
  });
});
