// Writes a session and an event, then dies without closing the store (as a killed server would).
import { SqliteStore } from './sqlite-store';

const directory = process.argv[2]!;
const store = await SqliteStore.open({ directory, log: () => {} });
await store.createSession({ sessionId: 's', title: 'before the crash', createdAt: 1, updatedAt: 1, confirmToolCalls: true, lastRunId: 'r' });
await store.createRun({ runId: 'r', sessionId: 's', options: {}, startedAt: 1, endedAt: null, endReason: null });
await store.appendEvent({ runId: 'r', sessionId: 's', seq: 1, event: { type: 'status', text: 'working' }, at: 2 });
process.kill(process.pid, 'SIGKILL');
