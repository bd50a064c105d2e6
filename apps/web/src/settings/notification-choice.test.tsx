import { MemoryStore, toolSettingsPatchSchema, ToolSettingsService } from '@airlock/api';
import { cleanup, fireEvent, render, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NOTIFY_STORAGE_KEY, NotificationChoice, useNotificationChoice } from './notification-choice';
import { SettingsDialog } from './settings-dialog';
import { LEGACY_STORAGE_KEY, SettingsStore, useToolSettings, type SettingsApi } from './settings-store';
import { defaultToolSettings } from './tool-settings';

/** A Storage of its own: what one browser profile keeps for the page's origin. */
class ProfileStorage implements Storage {
  private readonly items = new Map<string, string>();
  get length(): number {
    return this.items.size;
  }
  clear(): void {
    this.items.clear();
  }
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  key(index: number): string | null {
    return [...this.items.keys()][index] ?? null;
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
  setItem(key: string, value: string): void {
    this.items.set(key, value);
  }
}

// The Ledger section's button reads through the app's tRPC client, which these dialogs have no need of.
vi.mock('../ledger/export-ledger-button', () => ({ ExportLedgerButton: () => null }));

const closing: { close(): void }[] = [];

beforeEach(() => {
  vi.stubGlobal('Notification', { permission: 'granted', requestPermission: () => Promise.resolve('granted') });
});

afterEach(() => {
  cleanup();
  for (const item of closing.splice(0)) item.close();
  vi.unstubAllGlobals();
});

/** The server's settings as the router serves them: a real service on a memory store. */
function settingsServer(): { service: ToolSettingsService; api: SettingsApi } {
  const service = new ToolSettingsService(new MemoryStore());
  const api: SettingsApi = {
    get: () => service.get(),
    update: (patch) => service.update(toolSettingsPatchSchema.parse(patch)),
    watch: (handlers) => {
      const stop = service.watch(handlers.onData);
      void service.get().then(({ settings }) => handlers.onData(settings));
      return stop;
    },
  };
  return { service, api };
}

/** One browser profile's Settings dialog, wired as the app wires it. */
function openBrowser(api: SettingsApi, storage: Storage) {
  const choice = new NotificationChoice(storage, new EventTarget());
  const store = new SettingsStore(api, storage);
  choice.start();
  store.start();
  closing.push(choice, store);
  function Dialog() {
    const { settings, error } = useToolSettings(store);
    const notifications = useNotificationChoice(choice, settings?.notifyDecisions);
    return (
      <SettingsDialog
        settings={settings}
        settingsError={error}
        tools={undefined}
        onChange={(patch) => store.update(patch)}
        confirmToolCalls={{ value: true, forFirstMessage: undefined, set: () => undefined, error: null }}
        sessionId="chat_1"
        notifications={notifications}
        onNotificationsChange={(enabled) => choice.set(enabled)}
        onClose={() => undefined}
      />
    );
  }
  const view = within(render(<Dialog />).container);
  const checkbox = () => view.getByRole<HTMLInputElement>('checkbox', { name: /Notify me when a decision is needed/ });
  return { store, checkbox, view };
}

describe('the notification setting', () => {
  it('is each browser’s own: turning it on or off in one leaves another on the same server as it was', async () => {
    const { service, api } = settingsServer();
    const first = openBrowser(api, new ProfileStorage());
    const second = openBrowser(api, new ProfileStorage());
    await vi.waitFor(() => expect(second.store.getSnapshot().settings).toStrictEqual(defaultToolSettings), { timeout: 10_000 });

    fireEvent.click(first.checkbox());
    await vi.waitFor(() => expect(first.checkbox().checked).toBe(true), { timeout: 10_000 });
    // A shared setting changed after it would reach the second browser after the notifications would have.
    first.store.update({ maxToolCalls: 3 });
    await vi.waitFor(() => expect(second.store.getSnapshot().settings?.maxToolCalls).toBe(3), { timeout: 10_000 });
    expect(second.checkbox().checked).toBe(false);

    fireEvent.click(second.checkbox());
    await vi.waitFor(() => expect(second.checkbox().checked).toBe(true), { timeout: 10_000 });
    fireEvent.click(second.checkbox());
    await vi.waitFor(() => expect(second.checkbox().checked).toBe(false), { timeout: 10_000 });
    second.store.update({ maxToolCalls: 4 });
    await vi.waitFor(() => expect(first.store.getSnapshot().settings?.maxToolCalls).toBe(4), { timeout: 10_000 });
    expect(first.checkbox().checked).toBe(true);
    expect((await service.get()).settings).toStrictEqual({ ...defaultToolSettings, maxToolCalls: 4 });
    expect(first.view.getByText(/Kept by this browser for this address; other browsers and profiles keep their own\./)).toBeTruthy();
  });
});

describe('NotificationChoice', () => {
  it('is kept in the origin’s storage across reloads, and takes the server’s old setting only while it has none', () => {
    const storage = new ProfileStorage();
    const before = new NotificationChoice(storage, new EventTarget());
    expect(before.getSnapshot()).toStrictEqual({ enabled: undefined, kept: true });
    before.adopt(true);
    before.adopt(false);
    expect(before.getSnapshot()).toStrictEqual({ enabled: true, kept: true });
    before.set(false);
    const reloaded = new NotificationChoice(storage, new EventTarget());
    reloaded.adopt(true);
    expect(reloaded.getSnapshot()).toStrictEqual({ enabled: false, kept: true });
    expect(storage.getItem(NOTIFY_STORAGE_KEY)).toBe('false');
  });

  it('takes the choice the browser kept with its old local tool settings', () => {
    const storage = new ProfileStorage();
    storage.setItem(LEGACY_STORAGE_KEY, JSON.stringify({ maxToolCalls: 5, notifyDecisions: true }));
    const choice = new NotificationChoice(storage, new EventTarget());
    choice.adopt(false);
    expect(choice.getSnapshot()).toStrictEqual({ enabled: true, kept: true });
  });

  it('follows a change another tab of this browser made', () => {
    const storage = new ProfileStorage();
    const events = new EventTarget();
    const choice = new NotificationChoice(storage, events);
    choice.start();
    closing.push(choice);
    const heard = vi.fn();
    choice.subscribe(heard);
    storage.setItem(NOTIFY_STORAGE_KEY, 'true');
    events.dispatchEvent(Object.assign(new Event('storage'), { key: NOTIFY_STORAGE_KEY }));
    expect(choice.getSnapshot()).toStrictEqual({ enabled: true, kept: true });
    expect(heard).toHaveBeenCalledTimes(1);
  });

  it('lasts as long as the tab, and says so, where the browser blocks storage', () => {
    const refuse = () => {
      throw new DOMException('blocked', 'SecurityError');
    };
    const blocked = Object.assign(new ProfileStorage(), { getItem: refuse, setItem: refuse });
    const choice = new NotificationChoice(blocked, new EventTarget());
    choice.set(true);
    expect(choice.getSnapshot()).toStrictEqual({ enabled: true, kept: false });
    expect(new NotificationChoice(undefined, new EventTarget()).getSnapshot()).toStrictEqual({ enabled: undefined, kept: false });
  });
});
