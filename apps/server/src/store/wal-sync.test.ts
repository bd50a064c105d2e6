import type * as nodeFs from 'node:fs';
import { fstatSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { tempFolder } from './test-support';
import { WalSync } from './wal-sync';

/** The write-outs asked of the kernel, held until the test lets each finish; the folders synced. */
const syncs = vi.hoisted(() => ({ held: [] as { fd: number; done: (error: Error | null) => void }[], folders: 0 }));

vi.mock('node:fs', async (original) => {
  const fs = await original<typeof nodeFs>();
  return {
    ...fs,
    fdatasync: (fd: number, done: (error: Error | null) => void) => syncs.held.push({ fd, done }),
    fsyncSync: (fd: number) => {
      syncs.folders += 1;
      fs.fsyncSync(fd);
    },
  };
});

beforeEach(() => {
  syncs.held.length = 0;
  syncs.folders = 0;
});

const ioError = () => Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });

/** What `promise` has come to so far: 'pending', 'resolved', or the message it rejected with. */
function tracked(promise: Promise<void>): { state: string } {
  const seen = { state: 'pending' };
  promise.then(
    () => (seen.state = 'resolved'),
    (error: Error) => (seen.state = error.message),
  );
  return seen;
}

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

describe('WalSync.ahead', () => {
  it('writes the log out once at a time, and once more for any number of requests made while one is going', async () => {
    await using folder = await tempFolder();
    const ahead = new WalSync(walFile(folder.path, 'frames'));
    ahead.ahead();
    expect(syncs.held).toHaveLength(1);
    ahead.ahead();
    ahead.ahead();
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
    const ahead = new WalSync(walFile(folder.path, 'frames'));
    ahead.ahead();
    ahead.ahead();
    const { fd } = syncs.held[0]!;
    ahead.close();
    expect(isOpen(fd)).toBe(true);
    await finishOne();
    expect(isOpen(fd)).toBe(false);
    expect(syncs.held).toHaveLength(0);
    ahead.ahead();
    expect(syncs.held).toHaveLength(0);
  });

  it('does nothing while there is no log, and writes it out once there is one', async () => {
    await using folder = await tempFolder();
    const ahead = new WalSync(walFile(folder.path));
    ahead.ahead();
    expect(syncs.held).toHaveLength(0);
    await ahead.whenIdle();
    walFile(folder.path, 'frames');
    ahead.ahead();
    expect(syncs.held).toHaveLength(1);
    await finishOne();
    ahead.close();
  });

  it('a failed write-out is final: it starts no more, and the next durable() is refused with its error', async () => {
    await using folder = await tempFolder();
    const sync = new WalSync(walFile(folder.path, 'frames'));
    sync.ahead();
    sync.ahead();
    await finishOne(ioError());
    // The kernel may have dropped the pages it could not write: a sync that succeeds after it says nothing of them.
    expect(syncs.held).toHaveLength(0);
    expect(sync.failure?.message).toBe('EIO: i/o error, fdatasync');
    await expect(sync.durable()).rejects.toThrow('EIO: i/o error, fdatasync');
    sync.ahead();
    expect(syncs.held).toHaveLength(0);
    sync.close();
  });
});

describe('WalSync.durable', () => {
  it('resolves only after a sync that started after it was asked for; those asked for meanwhile share the next', async () => {
    await using folder = await tempFolder();
    const sync = new WalSync(walFile(folder.path, 'frames'));
    const first = tracked(sync.durable());
    expect(syncs.held).toHaveLength(1);
    // Asked for while the first sync is going: their commits may have come after its start, so it does not count.
    const second = tracked(sync.durable());
    const third = tracked(sync.durable());
    expect(syncs.held).toHaveLength(1);
    await finishOne();
    expect([first.state, second.state, third.state]).toStrictEqual(['resolved', 'pending', 'pending']);
    expect(syncs.held).toHaveLength(1);
    await finishOne();
    expect([second.state, third.state]).toStrictEqual(['resolved', 'resolved']);
    expect(syncs.held).toHaveLength(0);
    sync.close();
  });

  it('a write-out ahead going when it is asked for is not counted: one more sync follows', async () => {
    await using folder = await tempFolder();
    const sync = new WalSync(walFile(folder.path, 'frames'));
    sync.ahead();
    const durable = tracked(sync.durable());
    await finishOne();
    expect(durable.state).toBe('pending');
    await finishOne();
    expect(durable.state).toBe('resolved');
    sync.close();
  });

  it('rejects with the failed sync\'s error, and so does every one after it, even once the disk answers again', async () => {
    await using folder = await tempFolder();
    const sync = new WalSync(walFile(folder.path, 'frames'));
    const first = tracked(sync.durable());
    const second = tracked(sync.durable());
    await finishOne(ioError());
    expect([first.state, second.state]).toStrictEqual(['EIO: i/o error, fdatasync', 'EIO: i/o error, fdatasync']);
    expect(syncs.held).toHaveLength(0);
    await expect(sync.durable()).rejects.toThrow('EIO: i/o error, fdatasync');
    sync.close();
  });

  it('a write-out ahead that failed fails the durable() asked for after it, though no sync of its own failed', async () => {
    await using folder = await tempFolder();
    const sync = new WalSync(walFile(folder.path, 'frames'));
    sync.ahead();
    const durable = tracked(sync.durable());
    await finishOne(ioError());
    expect(durable.state).toBe('EIO: i/o error, fdatasync');
    expect(syncs.held).toHaveLength(0);
    sync.close();
  });

  it('rejects when there is no log to sync (a commit was made, so it cannot be said to be on the disk)', async () => {
    await using folder = await tempFolder();
    const sync = new WalSync(walFile(folder.path));
    await expect(sync.durable()).rejects.toThrow(/ENOENT/);
    expect(syncs.held).toHaveLength(0);
    sync.close();
  });

  it('syncs the log\'s folder once, when it first opens the log (SQLite makes the log anew at each open)', async () => {
    await using folder = await tempFolder();
    const sync = new WalSync(walFile(folder.path, 'frames'));
    const first = sync.durable();
    expect(syncs.folders).toBe(1);
    await finishOne();
    await first;
    const second = sync.durable();
    await finishOne();
    await second;
    expect(syncs.folders).toBe(1);
    sync.close();
  });

  it('close() still runs the syncs that commits made before it wait for, then closes the descriptor; after it, refuses', async () => {
    await using folder = await tempFolder();
    const sync = new WalSync(walFile(folder.path, 'frames'));
    const first = tracked(sync.durable());
    const second = tracked(sync.durable());
    const { fd } = syncs.held[0]!;
    sync.close();
    await expect(sync.durable()).rejects.toThrow('The write-ahead log is closed');
    await finishOne();
    expect(first.state).toBe('resolved');
    expect(syncs.held).toHaveLength(1);
    expect(isOpen(fd)).toBe(true);
    await finishOne();
    expect(second.state).toBe('resolved');
    expect(isOpen(fd)).toBe(false);
  });
});
