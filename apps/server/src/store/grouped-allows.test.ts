import { describe, expect, it } from 'vitest';
import { SqliteStore } from './sqlite-store';
import { run, session, startChange, tempFolder } from './test-support';

/** An allow of `toolCallId` with its call's start, as the chat service writes it: one commit that lets it run. */
const allow = (runId: string, toolCallId: string, text = 'allowed') => [
  { runId, sessionId: 's', seq: 2, event: { type: 'status' as const, text }, at: 3, ledger: { kind: 'decision' as const, toolCallId, decision: 'allow' as const, source: 'user' as const, decidedAt: 3 } },
  { runId, sessionId: 's', seq: 3, event: { type: 'status' as const, text: `Running: ${toolCallId}` }, at: 3, ledger: { kind: 'running' as const, toolCallId, startedAt: 3 } },
];

/** A store in `directory` with three runs of chat `s`, each with a call waiting for its person. */
async function withWaitingCalls(directory: string): Promise<SqliteStore> {
  const store = await SqliteStore.open({ directory, log: () => {} });
  await store.createSession(session('s'));
  for (const runId of ['r1', 'r2', 'r3']) {
    await store.createRun(run(runId, 's'));
    await store.appendEvent({ runId, sessionId: 's', seq: 1, event: { type: 'status', text: 'asks' }, at: 2, ledger: startChange(`${runId}-call`, 2) });
  }
  return store;
}

const outcomes = (promises: Promise<void>[]) => Promise.all(promises.map((promise) => promise.then(() => 'stored', (error: Error) => error.message)));

async function decisionsOnDisk(directory: string): Promise<(string | null)[]> {
  const store = await SqliteStore.open({ directory, log: () => {} });
  try {
    return (await store.listSessionToolCalls('s')).map((call) => call.decision ?? null);
  } finally {
    await store.close();
  }
}

describe('allows asked for in one turn of the event loop, on the SQLite store', () => {
  it('a failure that makes SQLite roll back the whole transaction (a full disk) fails each, and stores none, then or after a restart', async () => {
    await using folder = await tempFolder();
    const store = await withWaitingCalls(folder.path);
    // SQLite fails a write past max_page_count with SQLITE_FULL, and rolls the whole transaction back, as on a full disk.
    const db = (store as unknown as { db: { pragma(text: string, options?: { simple: true }): unknown } }).db;
    db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true })) + 20}`);
    const asked = [store.appendEvents(allow('r1', 'r1-call')), store.appendEvents(allow('r2', 'r2-call', 'x'.repeat(2_000_000))), store.appendEvents(allow('r3', 'r3-call'))];
    // SQLite's own error (the server's store maps it to "the data folder is full", see storage-failure.test.ts).
    const full = 'database or disk is full';
    expect(await outcomes(asked)).toStrictEqual([full, full, full]);
    db.pragma('max_page_count = 1073741823');
    expect((await store.listSessionToolCalls('s')).map((call) => call.decision ?? null)).toStrictEqual([null, null, null]);
    await store.close();
    expect(await decisionsOnDisk(folder.path)).toStrictEqual([null, null, null]);
  });

  it('asked for just before the store closes, are made by the close, not lost with it', async () => {
    await using folder = await tempFolder();
    const store = await withWaitingCalls(folder.path);
    const asked = [store.appendEvents(allow('r1', 'r1-call')), store.appendEvents(allow('r2', 'r2-call'))];
    await store.close();
    expect(await outcomes(asked)).toStrictEqual(['stored', 'stored']);
    expect(await decisionsOnDisk(folder.path)).toStrictEqual(['allow', 'allow', null]);
  });
});
