import type { LedgerChange } from '@airlock/api';
import type { LoopEvent } from '@airlock/core';
import { beforeEach, describe, expect, it } from 'vitest';
import { storeImplementations } from './store-implementations';
import { appendAll, run, session, startChange } from './test-support';

const implementations = await storeImplementations();

describe.each(implementations)('text holding U+0000 (a binary file, printf "a\\0b"): $name', ({ name, open, skipReason }) => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));
  // PostgreSQL's text cannot hold it: that store writes U+FFFD in its place; the others keep it.
  const stored = (text: string) => (name.startsWith('PostgresStore') ? text.replaceAll('\0', '\uFFFD') : text);

  it('is written, not refused: the ledger keeps the call that ran, and the chat its title and events', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s', 1_000, { title: 'look at a\0b' }));
    await store.createRun(run('r', 's'));
    const result = 'head a\0b tail';
    const end: LedgerChange = { kind: 'end', toolCallId: 'call-1', outcome: 'executed', result, endedAt: 10_900 };
    await appendAll(store, { runId: 'r', sessionId: 's' }, [startChange('call-1', 10_000)]);
    const toolEnd: LoopEvent = { type: 'tool-end', toolCallId: 'call-1', toolName: 'terminal', outcome: 'executed', result };
    await store.appendEvent({
      runId: 'r',
      sessionId: 's',
      seq: 2,
      event: toolEnd,
      at: 10_900,
      ledger: end,
      messages: [{ role: 'tool', toolCallId: 'call-1', toolName: 'terminal', content: result }],
    });

    const [call] = await store.listRunToolCalls('r');
    expect(call).toMatchObject({ outcome: 'executed', result: stored(result) });
    // Events and messages are JSON, which writes the character as an escape: kept exactly everywhere.
    expect(await store.loadEvents('r', 1)).toStrictEqual([toolEnd]);
    expect((await store.listSessions()).find((summary) => summary.sessionId === 's')?.title).toBe(stored('look at a\0b'));
  });
});
