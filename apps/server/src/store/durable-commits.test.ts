import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DATABASE_FILE, SqliteStore } from './sqlite-store';
import { tempFolder } from './test-support';

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const strace = spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0;

/**
 * The system calls made between each "begin <name>" and "end <name>" line the fixture wrote to stdout, from an
 * strace log of `-e trace=write,pwrite64,fsync,fdatasync -y` (file descriptors shown with their paths).
 */
function callsPerCommit(log: string): Map<string, string[]> {
  const commits = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of log.split('\n')) {
    const call = line.replace(/^\d+ +/, '');
    const marker = /^write\(1<[^>]*>, "(begin|end) ([a-z ]+)\\n"/.exec(call);
    if (marker !== null) {
      current = marker[1] === 'begin' ? [] : undefined;
      if (current !== undefined) commits.set(marker[2]!, current);
    } else if (current !== undefined && call.length > 0) {
      current.push(call);
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

  // What cannot be tested: a sync the disk fails (SQLite then fails the commit with SQLITE_IOERR_FSYNC), or a lost
  // write-out. What can: that each commit syncs its write-ahead log before it returns.
  it.skipIf(!strace)('sync the write-ahead log to the disk before they return: an allow with its start, a rule, a grant, confirmation turned off, a chat started without it, a chat deleted (commits that let nothing run are not synced each)', async () => {
    await using folder = await tempFolder();
    const log = join(folder.path, 'trace');
    const fixture = fileURLToPath(new URL('./durable-commit.fixture.ts', import.meta.url));
    const traced = spawnSync('strace', ['-f', '-qq', '-y', '-e', 'trace=write,pwrite64,fsync,fdatasync', '-o', log, process.execPath, '--import', tsx, fixture, join(folder.path, 'data')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(traced.status, traced.stderr).toBe(0);
    const commits = callsPerCommit(await readFile(log, 'utf8'));
    expect([...commits.keys()]).toStrictEqual([
      'chat',
      'run start',
      'message',
      'activity',
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
    ]);
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
