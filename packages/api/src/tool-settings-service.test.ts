import { deferred } from '@airlock/core/testing';
import { describe, expect, it } from 'vitest';
import { decodeClusterMessage, encodeClusterMessage, type Cluster, type ClusterMessage } from './cluster';
import { MemoryStore } from './memory-store';
import { defaultToolSettings, type ToolSettings } from './tool-settings';
import { TOOL_SETTINGS_KEY, ToolSettingsService } from './tool-settings-service';

/** A cluster whose messages reach this instance only when the test delivers them, as a notification would. */
function manualCluster() {
  const listeners = new Set<(message: ClusterMessage) => void>();
  const published: ClusterMessage[] = [];
  const cluster: Pick<Cluster, 'publish' | 'subscribe'> & { published: ClusterMessage[]; listening: () => number; deliver: (message: ClusterMessage) => void } = {
    published,
    publish: async (message) => {
      published.push(message);
    },
    subscribe: (listener) => {
      const entry = (message: ClusterMessage) => listener(message);
      listeners.add(entry);
      return () => listeners.delete(entry);
    },
    listening: () => listeners.size,
    deliver: (message) => {
      // Through the wire format, as the store's listener hands them over; a resync comes from the listener itself.
      const decoded = message.type === 'resync' ? message : decodeClusterMessage(encodeClusterMessage(message));
      if (decoded !== undefined) for (const listener of [...listeners]) listener(decoded);
    },
  };
  return cluster;
}

/** Another instance's write: the row changes in the shared store, and its message comes later (or never). */
async function writtenElsewhere(store: MemoryStore, settings: Partial<ToolSettings>): Promise<void> {
  await store.setSetting(TOOL_SETTINGS_KEY, JSON.stringify({ ...defaultToolSettings, ...settings }));
}

describe('tool settings on one instance', () => {
  it('tells the watchers of each change at once, as before', async () => {
    const settings = new ToolSettingsService(new MemoryStore());
    const seen: ToolSettings[] = [];
    settings.watch((changed) => seen.push(changed));
    await settings.update({ maxToolCalls: 4 });
    expect(seen).toStrictEqual([{ ...defaultToolSettings, maxToolCalls: 4 }]);
  });
});

describe('tool settings on several instances', () => {
  it('a change made through another instance reaches the watchers here when its message comes, read back from the store', async () => {
    const store = new MemoryStore();
    const cluster = manualCluster();
    const settings = new ToolSettingsService(store, { cluster, log: () => {} });
    const seen: ToolSettings[] = [];
    settings.watch((changed) => seen.push(changed));
    await writtenElsewhere(store, { disabledTools: ['terminal'] });
    expect(seen).toStrictEqual([]);
    cluster.deliver({ type: 'settings' });
    await expect.poll(() => seen).toStrictEqual([{ ...defaultToolSettings, disabledTools: ['terminal'] }]);
  });

  it('a change made here is announced without its content, and the watchers here hear it from the message like everyone else', async () => {
    const cluster = manualCluster();
    const settings = new ToolSettingsService(new MemoryStore(), { cluster, log: () => {} });
    const seen: ToolSettings[] = [];
    settings.watch((changed) => seen.push(changed));
    await settings.update({ disabledTools: ['terminal'] });
    expect(cluster.published).toStrictEqual([{ type: 'settings' }]);
    cluster.deliver(cluster.published[0]!);
    await expect.poll(() => seen).toStrictEqual([{ ...defaultToolSettings, disabledTools: ['terminal'] }]);
  });

  it('after a resync the settings are read again, since a message may have been missed; other messages read nothing', async () => {
    const store = new MemoryStore();
    const cluster = manualCluster();
    let reads = 0;
    const counted = { getSetting: (key: string) => (reads++, store.getSetting(key)), setSetting: store.setSetting.bind(store) };
    const settings = new ToolSettingsService(counted, { cluster, log: () => {} });
    const seen: ToolSettings[] = [];
    settings.watch((changed) => seen.push(changed));
    await writtenElsewhere(store, { maxToolCalls: 9 });
    cluster.deliver({ type: 'rules' });
    cluster.deliver({ type: 'session', sessionId: 's1' });
    // A message of a type this version does not know, or a malformed one, never reaches a listener; one that says
    // more than "settings" is taken for just that (the settings are read from the store, never from a message).
    expect(decodeClusterMessage('{"type":"settings-v2"}')).toBeUndefined();
    expect(decodeClusterMessage('{"type":"settings"')).toBeUndefined();
    expect(decodeClusterMessage('{"type":"settings","settings":{"maxToolCalls":1}}')).toStrictEqual({ type: 'settings' });
    expect(reads).toBe(0);
    cluster.deliver({ type: 'resync' });
    await expect.poll(() => seen).toStrictEqual([{ ...defaultToolSettings, maxToolCalls: 9 }]);
  });

  it('reads one at a time: messages during a read make one more read after it, and an older state never follows a newer one', async () => {
    const store = new MemoryStore();
    const cluster = manualCluster();
    const held = deferred<void>();
    let reads = 0;
    const settings = new ToolSettingsService(
      {
        getSetting: async (key) => {
          reads++;
          const value = await store.getSetting(key);
          // The first read found the old state and is slow to answer.
          if (reads === 1) await held.promise;
          return value;
        },
        setSetting: (key, value) => store.setSetting(key, value),
      },
      { cluster, log: () => {} },
    );
    const seen: number[] = [];
    settings.watch((changed) => seen.push(changed.maxToolCalls));
    await writtenElsewhere(store, { maxToolCalls: 2 });
    cluster.deliver({ type: 'settings' });
    await expect.poll(() => reads).toBe(1);
    await writtenElsewhere(store, { maxToolCalls: 3 });
    cluster.deliver({ type: 'settings' });
    cluster.deliver({ type: 'settings' });
    expect(reads).toBe(1);
    held.resolve();
    await expect.poll(() => seen).toStrictEqual([2, 3]);
    expect(reads).toBe(2);
  });

  it('listens to the cluster only while someone watches', async () => {
    const cluster = manualCluster();
    const settings = new ToolSettingsService(new MemoryStore(), { cluster, log: () => {} });
    expect(cluster.listening()).toBe(0);
    const stopFirst = settings.watch(() => {});
    const stopSecond = settings.watch(() => {});
    expect(cluster.listening()).toBe(1);
    stopFirst();
    expect(cluster.listening()).toBe(1);
    stopSecond();
    expect(cluster.listening()).toBe(0);
  });

  it('a change the other instances could not be told of is said, and the watchers here still hear of it', async () => {
    const cluster = manualCluster();
    cluster.publish = () => Promise.reject(new Error('connection lost'));
    const lines: string[] = [];
    const settings = new ToolSettingsService(new MemoryStore(), { cluster, log: (line) => lines.push(line) });
    const seen: ToolSettings[] = [];
    settings.watch((changed) => seen.push(changed));
    await expect(settings.update({ maxToolCalls: 5 })).resolves.toMatchObject({ maxToolCalls: 5 });
    await expect.poll(() => seen).toStrictEqual([{ ...defaultToolSettings, maxToolCalls: 5 }]);
    expect(lines).toStrictEqual(['Could not tell the other instances about a change of the tool settings: connection lost']);
  });
});
