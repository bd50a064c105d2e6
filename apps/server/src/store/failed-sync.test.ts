import type * as nodeFs from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteStore } from './sqlite-store';
import { StorageFailure } from './storage-failure';
import { run, session, startChange, statusEvent, tempFolder } from './test-support';

/** Whether the kernel fails the next syncs of the write-ahead log, as a failing disk does. */
const disk = vi.hoisted(() => ({ failing: false }));

vi.mock('node:fs', async (original) => {
  const fs = await original<typeof nodeFs>();
  return {
    ...fs,
    fdatasync: (fd: number, done: (error: Error | null) => void) => {
      if (disk.failing) setImmediate(() => done(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })));
      else fs.fdatasync(fd, done);
    },
  };
});

beforeEach(() => {
  disk.failing = false;
});

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

const allow = (seq: number) => ({ runId: 'r', sessionId: 's', seq, event: statusEvent('allowed'), at: 3, ledger: { kind: 'decision' as const, toolCallId: 'call-1', decision: 'allow' as const, source: 'user' as const, decidedAt: 3 } });

describe('a sync of the write-ahead log that fails', () => {
  it('fails the allow waiting for it, and every write after it until the store is opened again; reads go on', async () => {
    await using folder = await tempFolder();
    const directory = join(folder.path, 'data');
    const store = await SqliteStore.open({ directory, log: () => {} });
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'));
    await store.appendEvent({ runId: 'r', sessionId: 's', seq: 1, event: statusEvent('asks'), at: 2, ledger: startChange('call-1', 2) });

    disk.failing = true;
    const failed = await failureOf(store.appendEvents([allow(2), { runId: 'r', sessionId: 's', seq: 3, event: statusEvent('Running'), at: 3, ledger: { kind: 'running', toolCallId: 'call-1', startedAt: 3 } }]));
    expect(failed).toBeInstanceOf(StorageFailure);
    expect(store.isUnavailable(failed)).toBe(true);
    const message = `Airlock could not write its data folder ${directory} out to the disk (Error: EIO: i/o error, fdatasync), and takes no more changes: check the disk (errors in the system log), then restart Airlock`;
    expect((failed as StorageFailure).message).toBe(message);

    // The disk answers again; what was written since the last good sync may still be lost, so nothing more is taken,
    // synced or not, rather than be said to be stored.
    disk.failing = false;
    for (const write of [
      () => store.appendEvent({ runId: 'r', sessionId: 's', seq: 4, event: statusEvent('more'), at: 4 }),
      () => store.endRun('r', 'done', 5),
      () => store.updateSession('s', { confirmToolCalls: false }),
      () => store.saveGrant({ grantId: 'g', scope: 'session', sessionId: 's', toolName: 'read_file', arguments: null, toolVersion: 'v1', createdAt: 4 }),
    ]) {
      const error = await failureOf(write());
      expect(error).toBeInstanceOf(StorageFailure);
      expect((error as StorageFailure).message).toBe(message);
    }
    expect((await store.listSessions()).map(({ sessionId }) => sessionId)).toStrictEqual(['s']);
    expect(await store.listGrants()).toStrictEqual([]);
    await store.close();

    // Opened again, the database is read from the disk and takes writes.
    const reopened = await SqliteStore.open({ directory, log: () => {} });
    await reopened.endRun('r', 'done', 6);
    expect((await reopened.listUnfinishedRuns()).map(({ runId }) => runId)).toStrictEqual([]);
    await reopened.close();
  });

  it('made ahead while a call waits, fails the allow that follows though its own sync would succeed', async () => {
    await using folder = await tempFolder();
    const store = await SqliteStore.open({ directory: join(folder.path, 'data'), log: () => {} });
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'));
    disk.failing = true;
    await store.appendEvent({ runId: 'r', sessionId: 's', seq: 1, event: statusEvent('asks'), at: 2, ledger: startChange('call-1', 2) });
    const walSync = (store as unknown as { walSync: { whenIdle(): Promise<void> } }).walSync;
    await walSync.whenIdle();
    disk.failing = false;
    expect(await failureOf(store.appendEvent(allow(2)))).toBeInstanceOf(StorageFailure);
    await store.close();
  });
});
