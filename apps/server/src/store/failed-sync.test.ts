import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DATABASE_FILE, SqliteStore } from './sqlite-store';
import { run, session, startChange, straceTraces, tempFolder } from './test-support';

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** Chat `s` with runs r1, r2 and r3, each with a call waiting for its person; the store closed (its log emptied). */
async function waitingCalls(directory: string): Promise<void> {
  const store = await SqliteStore.open({ directory, log: () => {} });
  await store.createSession(session('s'));
  for (const runId of ['r1', 'r2', 'r3']) {
    await store.createRun(run(runId, 's'));
    await store.appendEvent({ runId, sessionId: 's', seq: 1, event: { type: 'status', text: 'asks' }, at: 2, ledger: startChange(`${runId}-call`, 2) });
  }
  await store.close();
}

interface Crash {
  /** What each allow came to: 'stored', or its error's code. */
  asked: string[];
  /** The log's size in bytes after the allows. */
  log: number;
  /** In mode `later`: what a later allow and a later unsynced commit came to. */
  later: string[];
  /** The trace's lines from the allows' marker on: the log's writes and syncs. */
  trace: string[];
}

/**
 * Runs failed-sync.fixture.ts in `mode` under strace, which fails the log's syncs numbered `when` (strace's syntax:
 * `2` the second, `2+` the second and every one after, `2..3`) with EIO, as a disk that fails a write-out does; the
 * fixture kills itself after its writes.
 */
async function crashAfterFailedSync(folder: string, mode: 'alone' | 'together' | 'later' | 'restarted', when: string): Promise<Crash> {
  const directory = join(folder, 'data');
  await waitingCalls(directory);
  const log = join(folder, 'trace');
  const markers = join(folder, 'markers');
  const fixture = fileURLToPath(new URL('./failed-sync.fixture.ts', import.meta.url));
  // -P: only the calls on the log (and the marker file) are traced, and so only they can be failed.
  const traced = spawnSync(
    'strace',
    [
      ...['-f', '-qq', '-y', '-o', log, '-P', join(directory, `${DATABASE_FILE}-wal`), '-P', markers],
      ...['-e', 'trace=write,pwrite64,fsync,fdatasync', '-e', `inject=fdatasync:error=EIO:when=${when}`, '-e', `inject=fsync:error=EIO:when=${when}`],
      ...[process.execPath, '--import', tsx, fixture, directory, markers, mode],
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  const lines = (await readFile(log, 'utf8')).split('\n').map((line) => line.replace(/^\d+ +/, ''));
  const trace = lines.slice(lines.findIndex((line) => line.includes('markers>, "allow')) + 1).filter((line) => line.length > 0);
  const printed = traced.stdout.trim();
  expect(printed, `${traced.stderr}\n${lines.join('\n')}`).not.toBe('');
  return { ...(JSON.parse(printed) as Omit<Crash, 'trace'>), trace };
}

/** The calls of chat `s` as a new store opened on the data folder reads them: decision and start. */
async function callsAfterRestart(directory: string): Promise<{ toolCallId: string; decision: string | null; startedAt: number | null }[]> {
  const store = await SqliteStore.open({ directory, log: () => {} });
  try {
    return (await store.listSessionToolCalls('s')).map(({ toolCallId, decision, startedAt }) => ({ toolCallId, decision, startedAt }));
  } finally {
    await store.close();
  }
}

async function eventsAfterRestart(directory: string, runId: string): Promise<string[]> {
  const store = await SqliteStore.open({ directory, log: () => {} });
  try {
    return (await store.loadEvents(runId, 0)).map((event) => event.type);
  } finally {
    await store.close();
  }
}

const waiting = (...runIds: string[]) => runIds.map((runId) => ({ toolCallId: `${runId}-call`, decision: null, startedAt: null }));
const diskError = 'SQLITE_IOERR_FSYNC';

// The log's syncs in the fixture: the first is its header's (SQLite syncs a new log's header before its first frames,
// here those of the run's text), the second the allows' commit.
describe.skipIf(!straceTraces)('an allow whose sync fails, then a crash (SIGKILL) before anything else is written', () => {
  it('is not read back as allowed or started after the restart: the call still waits', async () => {
    await using folder = await tempFolder();
    const crash = await crashAfterFailedSync(folder.path, 'alone', '2');
    expect(crash.asked).toStrictEqual([diskError]);
    // The sync that failed came after the allow's frames were written to the log.
    const failed = crash.trace.findIndex((line) => line.endsWith('(INJECTED)'));
    expect(crash.trace.slice(0, failed).some((line) => line.startsWith('pwrite64(')), crash.trace.join('\n')).toBe(true);
    expect(crash.trace.slice(0, failed).some((line) => /^f(data)?sync\(/.test(line)), crash.trace.join('\n')).toBe(false);
    const directory = join(folder.path, 'data');
    expect(await callsAfterRestart(directory)).toStrictEqual(waiting('r1', 'r2', 'r3'));
    // The commit before it is kept.
    expect(await eventsAfterRestart(directory, 'r1')).toStrictEqual(['status', 'text-delta']);
    // Repaired, the log was copied into the database file and emptied.
    expect(crash.log).toBe(0);
  });

  it('made together with another in one turn of the event loop (one transaction, one sync): neither is read back', async () => {
    await using folder = await tempFolder();
    const crash = await crashAfterFailedSync(folder.path, 'together', '2');
    expect(crash.asked).toStrictEqual([diskError, diskError]);
    expect(crash.trace.filter((line) => line.endsWith('(INJECTED)'))).toHaveLength(1);
    expect(await callsAfterRestart(join(folder.path, 'data'))).toStrictEqual(waiting('r1', 'r2', 'r3'));
  });

  it("with every sync failing from the allow's on, the repair's too: the allow is not read back, and the store takes no later write", async () => {
    await using folder = await tempFolder();
    const crash = await crashAfterFailedSync(folder.path, 'later', '2+');
    expect(crash.asked).toStrictEqual([diskError]);
    expect(crash.log).toBeGreaterThan(0);
    // Each later write first tries the repair again, and is refused with its error.
    expect(crash.later).toStrictEqual([diskError, diskError]);
    expect(crash.trace.filter((line) => line.endsWith('(INJECTED)'))).toHaveLength(4);
    const directory = join(folder.path, 'data');
    expect(await callsAfterRestart(directory)).toStrictEqual(waiting('r1', 'r2', 'r3'));
    expect(await eventsAfterRestart(directory, 'r3')).toStrictEqual(['status']);
  });

  it("in a log SQLite started over after its automatic checkpoint, the repair's first sync failing too: the allow is not read back (found in review)", async () => {
    await using folder = await tempFolder();
    // The log's syncs here: its first header's, the checkpoint's, the restarted log's header, the allow's commit (4),
    // then the repair's first (5). A log started over keeps its salts for the next commit, the repair's: had the
    // repair synced the header before writing its frame, the failed commit's frames would have stayed whole.
    const crash = await crashAfterFailedSync(folder.path, 'restarted', '4..5');
    expect(crash.asked).toStrictEqual([diskError]);
    expect(await callsAfterRestart(join(folder.path, 'data'))).toStrictEqual(waiting('r1', 'r2', 'r3'));
  });

  it("with the repair's first sync failing too: a later write repairs the log first, and is stored", async () => {
    await using folder = await tempFolder();
    const crash = await crashAfterFailedSync(folder.path, 'later', '2..3');
    expect(crash.asked).toStrictEqual([diskError]);
    expect(crash.later).toStrictEqual(['stored', 'stored']);
    const directory = join(folder.path, 'data');
    expect(await callsAfterRestart(directory)).toStrictEqual([...waiting('r1'), { toolCallId: 'r2-call', decision: 'allow', startedAt: 3 }, ...waiting('r3')]);
    expect(await eventsAfterRestart(directory, 'r3')).toStrictEqual(['status', 'text-delta']);
  });
});
