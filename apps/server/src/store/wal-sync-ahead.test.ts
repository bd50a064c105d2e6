import type * as nodeFs from 'node:fs';
import { fstatSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { tempFolder } from './test-support';
import { WalSyncAhead } from './wal-sync-ahead';

/** The write-outs asked of the kernel, held until the test lets each finish. */
const syncs = vi.hoisted(() => ({ held: [] as { fd: number; done: (error: Error | null) => void }[] }));

vi.mock('node:fs', async (original) => {
  const fs = await original<typeof nodeFs>();
  return { ...fs, fdatasync: (fd: number, done: (error: Error | null) => void) => syncs.held.push({ fd, done }) };
});

beforeEach(() => {
  syncs.held.length = 0;
});

/** Lets the oldest write-out going finish, and the callbacks it runs. */
async function finishOne(error: Error | null = null): Promise<void> {
  syncs.held.shift()!.done(error);
  await Promise.resolve();
}

/** The write-ahead log's path in `folder`, the file made with `content` (none: not made). */
function walFile(folder: string, content?: string): string {
  const wal = join(folder, 'airlock.db-wal');
  if (content !== undefined) writeFileSync(wal, content);
  return wal;
}

const isOpen = (fd: number) => {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
};

describe('WalSyncAhead', () => {
  it('writes the log out once at a time, and once more for any number of requests made while one is going', async () => {
    await using folder = await tempFolder();
    const ahead = new WalSyncAhead(walFile(folder.path, 'frames'));
    ahead.request();
    expect(syncs.held).toHaveLength(1);
    ahead.request();
    ahead.request();
    expect(syncs.held).toHaveLength(1);
    let idle = false;
    void ahead.whenIdle().then(() => (idle = true));
    await finishOne();
    expect(syncs.held).toHaveLength(1);
    expect(idle).toBe(false);
    await finishOne();
    expect(syncs.held).toHaveLength(0);
    await ahead.whenIdle();
    expect(idle).toBe(true);
    ahead.close();
  });

  it('closes its descriptor only once the write-out going has finished, and starts none after close', async () => {
    await using folder = await tempFolder();
    const ahead = new WalSyncAhead(walFile(folder.path, 'frames'));
    ahead.request();
    ahead.request();
    const { fd } = syncs.held[0]!;
    ahead.close();
    expect(isOpen(fd)).toBe(true);
    await finishOne();
    expect(isOpen(fd)).toBe(false);
    expect(syncs.held).toHaveLength(0);
    ahead.request();
    expect(syncs.held).toHaveLength(0);
  });

  it('does nothing while there is no log, and writes it out once there is one', async () => {
    await using folder = await tempFolder();
    const ahead = new WalSyncAhead(walFile(folder.path));
    ahead.request();
    expect(syncs.held).toHaveLength(0);
    await ahead.whenIdle();
    walFile(folder.path, 'frames');
    ahead.request();
    expect(syncs.held).toHaveLength(1);
    await finishOne();
    ahead.close();
  });

  it('goes on after a failed write-out (SQLite, syncing through its own descriptor, is told of the failure)', async () => {
    await using folder = await tempFolder();
    const ahead = new WalSyncAhead(walFile(folder.path, 'frames'));
    ahead.request();
    ahead.request();
    await finishOne(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    expect(syncs.held).toHaveLength(1);
    await finishOne();
    await ahead.whenIdle();
    ahead.close();
  });
});
