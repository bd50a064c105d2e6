// Opens a data folder whose calls wait for their person, writes a run's text (in mode `restarted`, until SQLite's
// automatic checkpoint has copied the log into the database file, so that the next commit starts the log over), then
// asks for allows whose sync the
// test makes fail, prints what each came to and the log's size after them on stdout, and dies without closing the
// store, as a killed server would. Before the allows it writes "allow" to the marker file, which the test's trace
// shows among the log's system calls.
import { openSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { AppendEventInput } from '@airlock/api';
import { DATABASE_FILE, SqliteStore } from './sqlite-store';

const [directory, markers, mode] = process.argv.slice(2) as [string, string, 'alone' | 'together' | 'later' | 'restarted'];
const store = await SqliteStore.open({ directory, log: () => {} });

/** The allow of run `runId`'s waiting call with its start, as the chat service writes it: one synced commit. */
const allow = (runId: string): AppendEventInput[] => [
  { runId, sessionId: 's', seq: 3, event: { type: 'status', text: 'allowed' }, at: 3, ledger: { kind: 'decision', toolCallId: `${runId}-call`, decision: 'allow', source: 'user', decidedAt: 3 } },
  { runId, sessionId: 's', seq: 4, event: { type: 'status', text: `Running: ${runId}-call` }, at: 3, ledger: { kind: 'running', toolCallId: `${runId}-call`, startedAt: 3 } },
];
const text = (runId: string, seq: number, written = 'written'): AppendEventInput => ({ runId, sessionId: 's', seq, event: { type: 'text-delta', text: written }, at: 3 });
/** What each came to: 'stored', or its error's code (SQLite's), else its message. */
const outcomes = (promises: Promise<void>[]) => Promise.all(promises.map((promise) => promise.then(() => 'stored', (error: Error & { code?: string }) => error.code ?? error.message)));

// Unsynced: the log now has frames, as it has at almost any allow, and the allow's frames follow them.
await store.appendEvent(text('r1', 2));
if (mode === 'restarted') {
  // The database file grows once the automatic checkpoint (at about 1,000 pages of log) has copied the log into it.
  const database = join(directory, DATABASE_FILE);
  const before = statSync(database).size;
  for (let seq = 3; statSync(database).size === before; seq += 1) await store.appendEvent(text('r3', seq, 'x'.repeat(3_000)));
}
writeSync(openSync(markers, 'w'), 'allow\n');
const asked = await outcomes(mode === 'together' ? [store.appendEvents(allow('r1')), store.appendEvents(allow('r2'))] : [store.appendEvents(allow('r1'))]);
const log = statSync(join(directory, `${DATABASE_FILE}-wal`)).size;
// Then a later allow, and a later commit that is not synced.
const later = mode === 'later' ? [...(await outcomes([store.appendEvents(allow('r2'))])), ...(await outcomes([store.appendEvent(text('r3', 2))]))] : [];
writeSync(1, `${JSON.stringify({ asked, log, later })}\n`);
process.kill(process.pid, 'SIGKILL');
