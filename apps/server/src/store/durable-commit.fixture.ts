// Makes the commits that let a tool start, or let later calls run unasked, and some that let nothing run, each between
// two marker lines on stdout, so a trace of the process shows which system calls each commit made.
import { writeSync } from 'node:fs';
import { SqliteStore } from './sqlite-store';
import { startChange } from './test-support';
import type { WalSyncAhead } from './wal-sync-ahead';

const directory = process.argv[2]!;
const store = await SqliteStore.open({ directory, log: () => {} });

async function marked(name: string, commit: () => Promise<void>): Promise<void> {
  writeSync(1, `begin ${name}\n`);
  await commit();
  writeSync(1, `end ${name}\n`);
}

await marked('chat', () => store.createSession({ sessionId: 's', title: 'a chat', createdAt: 1, updatedAt: 1, confirmToolCalls: true, lastRunId: 'r' }));
await marked('run start', () => store.createRun({ runId: 'r', sessionId: 's', options: {}, startedAt: 1, endedAt: null, endReason: null }));
await marked('message', () => store.appendMessage('s', { role: 'user', content: 'list the files' }, 1, { runId: 'r' }));
await marked('activity', () => store.updateSession('s', { updatedAt: 2, lastRunId: 'r' }));
// A call put up for the person: its commit is not synced, and the log is written out behind it, waited for here so
// that write-out falls in this commit's lines of the trace and no other's.
const syncAhead = (store as unknown as { syncAhead: WalSyncAhead }).syncAhead;
await marked('call put up', async () => {
  await store.appendEvent({ runId: 'r', sessionId: 's', seq: 1, event: { type: 'status', text: 'asks' }, at: 2, ledger: startChange('call-1', 2) });
  await syncAhead.whenIdle();
});

await marked('text', () => store.appendEvent({ runId: 'r', sessionId: 's', seq: 2, event: { type: 'text-delta', text: 'Let me look' }, at: 2 }));
await marked('allow', () =>
  store.appendEvents([
    { runId: 'r', sessionId: 's', seq: 3, event: { type: 'status', text: 'allowed' }, at: 3, ledger: { kind: 'decision', toolCallId: 'call-1', decision: 'allow', source: 'user', decidedAt: 3 } },
    { runId: 'r', sessionId: 's', seq: 4, event: { type: 'status', text: 'Running: echo call-1' }, at: 3, ledger: { kind: 'running', toolCallId: 'call-1', startedAt: 3 } },
  ]),
);
await marked('tool end', () =>
  store.appendEvent({
    runId: 'r',
    sessionId: 's',
    seq: 5,
    event: { type: 'status', text: 'ended' },
    at: 4,
    ledger: { kind: 'end', toolCallId: 'call-1', outcome: 'executed', result: 'done', endedAt: 4 },
    messages: [{ role: 'tool', toolCallId: 'call-1', toolName: 'terminal', content: 'done' }],
  }),
);
await marked('deny', () =>
  store.appendEvents([
    { runId: 'r', sessionId: 's', seq: 6, event: { type: 'status', text: 'asks again' }, at: 5, ledger: startChange('call-2', 5) },
    { runId: 'r', sessionId: 's', seq: 7, event: { type: 'status', text: 'denied' }, at: 5, ledger: { kind: 'decision', toolCallId: 'call-2', decision: 'deny', source: 'user', decidedAt: 5 } },
  ]),
);
await marked('rule', () =>
  store.saveRule({
    id: 'rule-1',
    effect: 'allow',
    tool: 'terminal',
    match: { kind: 'command-prefix', tokens: ['npm', 'test'], exact: false },
    source: 'user',
    scope: { kind: 'chat', sessionId: 's' },
    createdAt: '2026-12-02T08:00:00.000Z',
  }),
);
await marked('grant', () => store.saveGrant({ grantId: 'g', scope: 'session', sessionId: 's', toolName: 'read_file', arguments: null, toolVersion: 'v1', createdAt: 4 }));
await marked('confirmation off', () => store.updateSession('s', { confirmToolCalls: false }));
await marked('rule hit', () => store.recordRuleHit('rule-1', 6));
await marked('run end', () => store.endRun('r', 'done', 7));
await marked('chat without confirmation', () => store.createSession({ sessionId: 't', title: 'unasked', createdAt: 8, updatedAt: 8, confirmToolCalls: false, lastRunId: null }));
await marked('chat deleted', () => store.deleteSession('t'));
await store.createSession({ sessionId: 'u', title: 'another', createdAt: 9, updatedAt: 9, confirmToolCalls: true, lastRunId: null });
const begun = (runId: string, at: number) => ({ run: { runId, sessionId: 'u', options: {}, startedAt: at, endedAt: null, endReason: null }, message: { role: 'user' as const, content: 'go' } });
await marked('run begun', () => store.beginRun({ ...begun('r2', 10), session: { updatedAt: 10, lastRunId: 'r2' } }));
await store.endRun('r2', 'done', 11);
await marked('run begun unasked', () => store.beginRun({ ...begun('r3', 12), session: { updatedAt: 12, lastRunId: 'r3', confirmToolCalls: false } }));
// Allows asked for in one turn of the event loop (a drain, many people at once): one transaction, one sync.
await store.createRun({ runId: 'r4', sessionId: 'u', options: {}, startedAt: 13, endedAt: null, endReason: null });
const calls = ['call-a', 'call-b', 'call-c'];
await store.appendEvents(calls.map((id, i) => ({ runId: 'r4', sessionId: 'u', seq: i + 1, event: { type: 'status' as const, text: 'asks' }, at: 13, ledger: startChange(id, 13) })));
await syncAhead.whenIdle();
await marked('allows at once', async () => {
  await Promise.all(
    calls.map((id, i) =>
      store.appendEvents([
        { runId: 'r4', sessionId: 'u', seq: 10 + 2 * i, event: { type: 'status', text: 'allowed' }, at: 14, ledger: { kind: 'decision', toolCallId: id, decision: 'allow', source: 'user', decidedAt: 14 } },
        { runId: 'r4', sessionId: 'u', seq: 11 + 2 * i, event: { type: 'status', text: `Running: echo ${id}` }, at: 14, ledger: { kind: 'running', toolCallId: id, startedAt: 14 } },
      ]),
    ),
  );
});
await store.close();
