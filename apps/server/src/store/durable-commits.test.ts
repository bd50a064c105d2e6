import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DATABASE_FILE, SqliteStore } from './sqlite-store';
import { straceTraces, tempFolder } from './test-support';

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/**
 * The system calls made between each "begin <name>" and "end <name>" line the fixture wrote to stdout, from an
 * strace log of `-e trace=write,pwrite64,fsync,fdatasync -y` (file descriptors shown with their paths).
 */
function callsPerCommit(log: string): Map<string, string[]> {
  return new Map([...threadCallsPerCommit(log)].map(([name, calls]) => [name, calls.map(({ call }) => call)]));
}

/** As callsPerCommit, each call with the thread that made it. */
function threadCallsPerCommit(log: string): Map<string, { thread: number; call: string }[]> {
  const commits = new Map<string, { thread: number; call: string }[]>();
  let current: { thread: number; call: string }[] | undefined;
  for (const line of log.split('\n')) {
    const thread = Number(/^(\d+) +/.exec(line)?.[1]);
    const call = line.replace(/^\d+ +/, '');
    const marker = /^write\(1<[^>]*>, "(begin|end) ([a-z ]+)\\n"/.exec(call);
    if (marker !== null) {
      current = marker[1] === 'begin' ? [] : undefined;
      if (current !== undefined) commits.set(marker[2]!, current);
    } else if (current !== undefined && call.length > 0) {
      current.push({ thread, call });
    }
  }
  return commits;
}

describe('SqliteStore commits that let calls run', () => {
  it('run with synchronous = FULL', async () => {
    await using folder = await tempFolder();
    const store = await SqliteStore.open({ directory: folder.path, log: () => {} });
    const db = (store as unknown as { db: { pragma(text: string, options: { simple: true }): unknown } }).db;
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    await store.close();
  });

  // What cannot be tested here: a lost write-out (a sync the disk fails is, in failed-sync.test.ts). What can: that
  // each commit syncs its write-ahead log before it returns.
  it.skipIf(!straceTraces)('sync the write-ahead log to the disk before they return, one sync for those asked for at once: an allow with its start, a rule, a grant, confirmation turned off, a chat started without it, a chat deleted (commits that let nothing run are not synced each)', async () => {
    await using folder = await tempFolder();
    const log = join(folder.path, 'trace');
    const fixture = fileURLToPath(new URL('./durable-commit.fixture.ts', import.meta.url));
    const traced = spawnSync('strace', ['-f', '-qq', '-y', '-e', 'trace=write,pwrite64,fsync,fdatasync', '-o', log, process.execPath, '--import', tsx, fixture, join(folder.path, 'data')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(traced.status, traced.stderr).toBe(0);
    const trace = await readFile(log, 'utf8');
    const commits = callsPerCommit(trace);
    expect([...commits.keys()]).toStrictEqual([
      'chat',
      'run start',
      'message',
      'activity',
      'call put up',
      'text',
      'allow',
      'tool end',
      'deny',
      'rule',
      'grant',
      'confirmation off',
      'rule hit',
      'run end',
      'chat without confirmation',
      'chat deleted',
      'run begun',
      'run begun unasked',
      'allows at once',
    ]);
    // Three allows asked for in one turn of the event loop: one commit of the three, one sync of the log.
    const atOnce = commits.get('allows at once')!.filter((call) => call.includes(`${DATABASE_FILE}-wal>`));
    expect(atOnce.filter((call) => /^f(data)?sync\(/.test(call)), atOnce.join('\n')).toHaveLength(1);
    // A call put up for the person lets nothing run: its commit is not synced on its way (the thread that writes its
    // frames does not sync them), and the log is written out behind it from another thread, while the person reads
    // the card (WalSyncAhead), so that the allow that follows has only its own pages to sync.
    const putUp = threadCallsPerCommit(trace).get('call put up')!.filter(({ call }) => call.includes(`${DATABASE_FILE}-wal>`));
    const writes = putUp.filter(({ call }) => call.startsWith('pwrite64('));
    expect(writes.length).toBeGreaterThan(0);
    const committer = writes[0]!.thread;
    expect(writes.every(({ thread }) => thread === committer)).toBe(true);
    const syncs = putUp.filter(({ call }) => /^f(data)?sync\(/.test(call));
    expect(syncs.filter(({ thread }) => thread === committer)).toStrictEqual([]);
    expect(syncs.length, putUp.map(({ thread, call }) => `${thread} ${call}`).join('\n')).toBeGreaterThan(0);
    expect(putUp.indexOf(syncs.at(-1)!)).toBeGreaterThan(putUp.indexOf(writes.at(-1)!));
    commits.delete('call put up');
    // A chat asking for confirmation, a run's start and end, a message, the chat's last activity, streamed text, a
    // tool's end with its answer, a deny, a rule's hit count: they let nothing run. Written to the log, synced by the
    // next commit that is.
    for (const name of ['chat', 'run start', 'message', 'activity', 'text', 'tool end', 'deny', 'rule hit', 'run end', 'run begun']) {
      const wal = commits.get(name)!.filter((call) => call.includes(`${DATABASE_FILE}-wal>`));
      expect(wal.some((call) => call.startsWith('pwrite64(')), name).toBe(true);
      expect(wal.filter((call) => /^f(data)?sync\(/.test(call)), name).toStrictEqual([]);
      commits.delete(name);
    }
    for (const [name, calls] of commits) {
      const wal = calls.filter((call) => call.includes(`${DATABASE_FILE}-wal>`));
      // The commit wrote its frames to the log, and the last thing it did to the log was to sync it.
      expect(wal.some((call) => call.startsWith('pwrite64(')), `${name} wrote nothing to the log:\n${calls.join('\n')}`).toBe(true);
      expect(wal.at(-1), `${name}:\n${calls.join('\n')}`).toMatch(/^f(data)?sync\(/);
    }
  });
});
