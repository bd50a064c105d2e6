import { MAX_AUDIT_PAGE_CHARS, type AirlockStore, type AuditQuery, type SessionPosition, type ChatMessage, type Decision, type LedgerChange, type ToolCallRecord } from '@airlock/api';
import { NotFoundError } from '@airlock/core';
import { beforeEach, describe, expect, it } from 'vitest';
import { storeImplementations } from './store-implementations';
import { appendAll, openWithRun, run, session, startChange, statusEvent, undecidedRecord } from './test-support';

const implementations = await storeImplementations();

describe.each(implementations)('AirlockStore contract: $name', ({ open, skipReason }) => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('creates, lists newest first, changes some fields and deletes sessions', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('old', 1_000));
    await store.createSession(session('new', 3_000, { confirmToolCalls: false }));
    await store.createSession(session('middle', 2_000));

    expect((await store.listSessions()).map((s) => s.sessionId)).toStrictEqual(['new', 'middle', 'old']);
    expect(await store.getSession('new')).toStrictEqual(session('new', 3_000, { confirmToolCalls: false }));
    expect(await store.getSession('missing')).toBeUndefined();
    await expect(store.createSession(session('old', 5_000))).rejects.toThrow();

    await store.updateSession('old', { updatedAt: 4_000, lastRunId: 'run-9' });
    expect(await store.getSession('old')).toStrictEqual({ ...session('old', 1_000), updatedAt: 4_000, lastRunId: 'run-9' });
    await store.updateSession('old', { title: 'renamed', confirmToolCalls: false });
    expect(await store.getSession('old')).toStrictEqual({ ...session('old', 1_000), title: 'renamed', confirmToolCalls: false, updatedAt: 4_000, lastRunId: 'run-9' });
    await store.updateSession('old', { lastRunId: null });
    expect((await store.getSession('old'))?.lastRunId).toBeNull();
    expect((await store.listSessions()).map((s) => s.sessionId)).toStrictEqual(['old', 'new', 'middle']);

    await store.deleteSession('new');
    expect(await store.getSession('new')).toBeUndefined();
    expect((await store.listSessions()).map((s) => s.sessionId)).toStrictEqual(['old', 'middle']);
  });

  it('reads the sessions a page at a time, most recently active first and the greater id first among ties, each once while others change', async () => {
    await using opened = await open();
    const { store } = opened;
    // Four to a millisecond, so pages end inside runs of ties; ids that sort differently by byte and by language.
    const ids = Array.from({ length: 23 }, (_, index) => `${index % 2 === 0 ? 'S' : 's'}-${String(index).padStart(2, '0')}`);
    for (const [index, sessionId] of ids.entries()) await store.createSession(session(sessionId, 1_000 + Math.floor(index / 4)));
    const order = (await store.listSessionPage({ limit: 100 })).map((s) => s.sessionId);
    const expected = ids
      .map((sessionId, index) => ({ sessionId, updatedAt: 1_000 + Math.floor(index / 4) }))
      .sort((a, b) => b.updatedAt - a.updatedAt || (a.sessionId < b.sessionId ? 1 : -1))
      .map((s) => s.sessionId);
    expect(order).toStrictEqual(expected);

    const listed: string[] = [];
    let after: SessionPosition | undefined;
    for (let pages = 1; ; pages++) {
      const page = await store.listSessionPage({ limit: 5, ...(after === undefined ? {} : { after }) });
      listed.push(...page.map((s) => s.sessionId));
      const last = page.at(-1);
      if (last === undefined) break;
      after = { updatedAt: last.updatedAt, sessionId: last.sessionId };
      if (pages === 2) {
        // One listed already and one still ahead move to the top; one ahead goes; a new one comes.
        await store.updateSession(listed[0]!, { updatedAt: 9_000 });
        await store.updateSession(expected[20]!, { updatedAt: 9_001 });
        await store.deleteSession(expected[21]!);
        await store.createSession(session('new', 9_002));
      }
    }
    expect(listed).toStrictEqual(expected.filter((sessionId) => sessionId !== expected[20] && sessionId !== expected[21]));
    expect((await store.listSessionPage({ limit: 3 })).map((s) => s.sessionId)).toStrictEqual(['new', expected[20], expected[0]]);
    expect(await store.listSessionPage({ limit: 1, after: { updatedAt: 1_000, sessionId: 'S-00' } })).toStrictEqual([]);
    expect(await store.listSessionPage({ limit: 2, after: { updatedAt: 1_003, sessionId: 'a-missing-one' } })).toStrictEqual([session('S-14', 1_003), session('S-12', 1_003)]);
  });

  it('searches every session by title, whatever the case, a page at a time in the list\'s order', async () => {
    await using opened = await open();
    const { store } = opened;
    // More than one batch a search reads at a time, three to a millisecond so pages end inside runs of ties. Titles
    // that match in each case (Unicode's too), and ones that must not: another letter, and % and _ read as text.
    const titleOf = (index: number) =>
      index % 97 === 3 ? `Deploy the ÜBER ${index}` : index % 97 === 40 ? `über ${index} notes` : index % 97 === 80 ? `Uber ${index}` : index % 101 === 7 ? `${index}% done_` : `chat ${index}`;
    const count = 620;
    for (let index = 0; index < count; index++) {
      await store.createSession(session(`s-${String(index).padStart(4, '0')}`, 1_000 + Math.floor(index / 3), { title: titleOf(index) }));
    }
    const newestFirst = Array.from({ length: count }, (_, index) => count - 1 - index);
    const ids = (indexes: number[]) => indexes.map((index) => `s-${String(index).padStart(4, '0')}`);
    const found: string[] = [];
    let after: SessionPosition | undefined;
    for (;;) {
      const page = await store.listSessionPage({ limit: 5, titleContains: 'üBeR', ...(after === undefined ? {} : { after }) });
      found.push(...page.map((s) => s.sessionId));
      const last = page.at(-1);
      if (last === undefined) break;
      after = { updatedAt: last.updatedAt, sessionId: last.sessionId };
    }
    expect(found).toStrictEqual(ids(newestFirst.filter((index) => index % 97 === 3 || index % 97 === 40)));
    expect(found).toHaveLength(13);

    // Read as LIKE '%0% done_%' would find 1017% done_ too.
    expect(await store.listSessionPage({ limit: 2, titleContains: '0% DONE_' })).toStrictEqual([session('s-0310', 1_103, { title: '310% done_' })]);
    expect((await store.listSessionPage({ limit: 100, titleContains: '% done_' })).map((s) => s.sessionId)).toStrictEqual(ids(newestFirst.filter((index) => index % 101 === 7)));
    expect(await store.listSessionPage({ limit: 100, titleContains: 'no such title' })).toStrictEqual([]);
    expect(await store.listSessionPage({ limit: 100, titleContains: 'über', after: { updatedAt: 1_000, sessionId: 's-0003' } })).toStrictEqual([]);
  });

  it('appends messages and loads them back in order, per session', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('a'));
    await store.createSession(session('b'));
    const messages: ChatMessage[] = [
      { role: 'user', content: 'list the files' },
      { role: 'assistant', content: '', reasoning: 'use a tool', toolCalls: [{ id: 'call-1', name: 'list_directory', arguments: { path: '.' } }] },
      { role: 'tool', toolCallId: 'call-1', toolName: 'list_directory', content: 'a.txt' },
      { role: 'assistant', content: 'There is a.txt.' },
    ];
    for (const [index, message] of messages.entries()) {
      await store.appendMessage('a', message, 5_000 + index);
      if (index === 1) await store.appendMessage('b', { role: 'user', content: 'other chat' }, 5_100);
    }

    expect(await store.loadMessages('a')).toStrictEqual(messages);
    expect(await store.loadMessages('b')).toStrictEqual([{ role: 'user', content: 'other chat' }]);
    expect(await store.loadMessages('missing')).toStrictEqual([]);
    await expect(store.appendMessage('missing', { role: 'user', content: 'x' }, 1)).rejects.toThrow();
  });

  it('reads one page of a chat, newest first, by messages and by characters, saying how many come before it', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    await store.createSession(session('other'));
    // Two bytes a character in UTF-8: a page's size is counted in characters, as the answer is.
    const messages: ChatMessage[] = Array.from({ length: 10 }, (_, n) => ({ role: 'user', content: `m${n} ${'é'.repeat(n * 100)}` }));
    for (const [n, message] of messages.entries()) {
      await store.appendMessage('s', message, 1_000 + n);
      await store.appendMessage('other', { role: 'user', content: `other ${n}` }, 1_000 + n);
    }
    const chars = (message: ChatMessage) => JSON.stringify(message).length;
    const page = async (query: { before?: number; limit?: number; maxChars?: number }, sessionId = 's') => {
      const read = await store.loadMessagePage(sessionId, { limit: 4, maxChars: 1_000_000, ...query });
      return { start: read.start, contents: read.messages.map((message) => message.content.slice(0, 3)), toolCalls: read.toolCalls };
    };

    expect(await page({})).toStrictEqual({ start: 6, contents: ['m6 ', 'm7 ', 'm8 ', 'm9 '], toolCalls: [] });
    expect(await page({ before: 6 })).toStrictEqual({ start: 2, contents: ['m2 ', 'm3 ', 'm4 ', 'm5 '], toolCalls: [] });
    expect(await page({ before: 2 })).toStrictEqual({ start: 0, contents: ['m0 ', 'm1 '], toolCalls: [] });
    expect(await page({ before: 0 })).toStrictEqual({ start: 0, contents: [], toolCalls: [] });
    expect(await page({ before: 50, limit: 3 })).toStrictEqual({ start: 7, contents: ['m7 ', 'm8 ', 'm9 '], toolCalls: [] });
    expect(await page({ before: 1e20, limit: 3 })).toStrictEqual({ start: 7, contents: ['m7 ', 'm8 ', 'm9 '], toolCalls: [] });
    expect((await store.loadMessagePage('s', { limit: 100, maxChars: 1_000_000 })).messages).toStrictEqual(messages);

    // Exactly the newest two fit; the third would take the page past its size, though fewer bytes would have.
    const two = chars(messages[9]!) + chars(messages[8]!);
    expect(await page({ maxChars: two })).toStrictEqual({ start: 8, contents: ['m8 ', 'm9 '], toolCalls: [] });
    expect(await page({ maxChars: two - 1 })).toStrictEqual({ start: 9, contents: ['m9 '], toolCalls: [] });
    // The newest always fits, however large.
    expect(await page({ maxChars: 10 })).toStrictEqual({ start: 9, contents: ['m9 '], toolCalls: [] });
    expect(await page({ before: 5, maxChars: 10 })).toStrictEqual({ start: 4, contents: ['m4 '], toolCalls: [] });

    expect(await page({}, 'other')).toStrictEqual({ start: 6, contents: ['oth', 'oth', 'oth', 'oth'], toolCalls: [] });
    expect(await page({}, 'missing')).toStrictEqual({ start: 0, contents: [], toolCalls: [] });
    await store.createSession(session('empty'));
    expect(await page({ before: 3 }, 'empty')).toStrictEqual({ start: 0, contents: [], toolCalls: [] });
  });

  it('gives a page the ledger rows of its own calls, found through the run of each message, when runs reuse a call id', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    const runs = ['r1', 'r2'];
    for (const [n, runId] of runs.entries()) {
      await store.createRun({ ...run(runId, 's', 2_000 + n * 1_000), endedAt: 2_500 + n * 1_000, endReason: 'done' });
      const at = 2_000 + n * 1_000;
      await store.appendMessage('s', { role: 'user', content: `go ${runId}` }, at, { runId });
      const turn: ChatMessage = { role: 'assistant', content: '', toolCalls: [{ id: 'call-1', name: 'terminal', arguments: { command: `echo ${runId}` } }] };
      await store.appendEvent({ runId, sessionId: 's', seq: 1, event: statusEvent('start'), at: at + 1, messages: [turn], ledger: startChange('call-1', at + 1) });
      const result: ChatMessage = { role: 'tool', toolCallId: 'call-1', toolName: 'terminal', content: runId };
      await store.appendEvent({ runId, sessionId: 's', seq: 2, event: statusEvent('end'), at: at + 2, messages: [result], ledger: { kind: 'end', toolCallId: 'call-1', outcome: 'executed', result: runId, endedAt: at + 2 } });
      await store.appendMessage('s', { role: 'assistant', content: `done ${runId}` }, at + 3, { runId });
    }
    const [first, second] = await store.listSessionToolCalls('s');
    const pageOf = (query: { before?: number; limit: number }) => store.loadMessagePage('s', { ...query, maxChars: 1_000_000 });

    expect((await pageOf({ limit: 4 })).toolCalls).toStrictEqual([second]);
    expect((await pageOf({ before: 4, limit: 4 })).toolCalls).toStrictEqual([first]);
    expect((await pageOf({ limit: 8 })).toolCalls).toStrictEqual([first, second]);
    // A page holding a call's result but not the call has no row of it.
    expect((await pageOf({ limit: 2 })).toolCalls).toStrictEqual([]);
    expect((await pageOf({ before: 6, limit: 5 })).toolCalls).toStrictEqual([first, second]);

    // A message of no run (a chat imported from files, say) finds no row, even with an id a run used.
    await store.appendMessage('s', { role: 'assistant', content: '', toolCalls: [{ id: 'call-1', name: 'terminal', arguments: {} }] }, 9_000);
    expect((await pageOf({ limit: 1 })).toolCalls).toStrictEqual([]);
  });

  it('reads the first message of a run, the one that started it, in the run’s own chat only', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    await store.createSession(session('other'));
    await store.appendMessage('s', { role: 'user', content: 'of no run' }, 1_000);
    for (const [n, runId] of ['r1', 'r2'].entries()) {
      const at = 2_000 + n * 1_000;
      await store.createRun({ ...run(runId, 's', at), endedAt: at + 500, endReason: 'done' });
      await store.appendMessage('s', { role: 'user', content: `go ${runId}` }, at, { runId });
      await store.appendEvent({ runId, sessionId: 's', seq: 1, event: statusEvent('start'), at: at + 1, messages: [{ role: 'assistant', content: `done ${runId}` }] });
    }

    expect(await store.loadFirstRunMessage('s', 'r1')).toStrictEqual({ role: 'user', content: 'go r1' });
    expect(await store.loadFirstRunMessage('s', 'r2')).toStrictEqual({ role: 'user', content: 'go r2' });
    expect(await store.loadFirstRunMessage('other', 'r1')).toBeUndefined();
    expect(await store.loadFirstRunMessage('s', 'never')).toBeUndefined();
  });

  it('keeps a run from start to end; it stays known after its end', async () => {
    await using opened = await open();
    const { store } = opened;
    // One unfinished run per session: a store shared by several instances refuses a second one.
    for (const id of ['s-late', 's-early', 's-done', 's-free']) await store.createSession(session(id));
    await store.createRun(run('late', 's-late', 3_000));
    await store.createRun(run('early', 's-early', 1_000));
    await store.createRun(run('done', 's-done', 2_000));
    await expect(store.createRun(run('early', 's-free', 1_000))).rejects.toThrow();

    expect(await store.getRun('early')).toStrictEqual(run('early', 's-early', 1_000));
    expect(await store.hasRun('early')).toBe(true);
    expect(await store.hasRun('never')).toBe(false);
    expect(await store.getRun('never')).toBeUndefined();

    await store.endRun('done', 'cancelled', 2_500);
    expect(await store.getRun('done')).toStrictEqual({ ...run('done', 's-done', 2_000), endedAt: 2_500, endReason: 'cancelled' });
    await store.createRun(run('after', 's-done', 4_000));
    expect(await store.hasRun('done')).toBe(true);
    expect((await store.listUnfinishedRuns()).map((r) => r.runId)).toStrictEqual(['early', 'late', 'after']);
  });

  it('records a stop of an unfinished run for whoever resumes it, and none of an ended or unknown run', async () => {
    await using opened = await open();
    const { store } = opened;
    for (const id of ['s-going', 's-done']) await store.createSession(session(id));
    await store.createRun(run('going', 's-going', 1_000));
    await store.createRun(run('done', 's-done', 2_000));
    await store.endRun('done', 'done', 2_500);

    expect(await store.requestCancel?.('going')).toBe(true);
    expect(await store.requestCancel?.('done')).toBe(false);
    expect(await store.requestCancel?.('never')).toBe(false);
    expect(await store.getRun('going')).toStrictEqual({ ...run('going', 's-going', 1_000), cancelRequested: true });
    expect((await store.listUnfinishedRuns()).map((r) => [r.runId, r.cancelRequested])).toStrictEqual([['going', true]]);
    expect(await store.getRun('done')).toStrictEqual({ ...run('done', 's-done', 2_000), endedAt: 2_500, endReason: 'done' });
  });

  it('refuses the write that marks a call running once its run’s Stop is stored, alone or with the call’s start and decision, writing none of it; its decision and end still go in', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'));
    const allow = (toolCallId: string): LedgerChange => ({ kind: 'decision', toolCallId, decision: 'allow', source: 'confirmation-off', decidedAt: 11_000 });
    const at = (seq: number, ledger: LedgerChange) => ({ runId: 'r', sessionId: 's', seq, event: statusEvent(`event ${seq}`), at: seq, ledger });
    // The first call waited for a place: its start and decision are written, its running status comes alone.
    await appendAll(store, { runId: 'r', sessionId: 's' }, [startChange('call-1', 10_000), allow('call-1')]);
    expect(await store.requestCancel?.('r')).toBe(true);

    await expect(store.appendEvent(at(3, { kind: 'running', toolCallId: 'call-1', startedAt: 11_100 }))).rejects.toMatchObject({ name: 'RunStoppedError', runId: 'r', toolCallId: 'call-1' });
    const second = [at(3, startChange('call-2', 10_100)), at(4, allow('call-2'))];
    await expect(store.appendEvents([...second, at(5, { kind: 'running', toolCallId: 'call-2', startedAt: 11_200 })])).rejects.toMatchObject({ name: 'RunStoppedError', runId: 'r', toolCallId: 'call-2' });
    expect(await store.lastEventSeq('r')).toBe(2);
    expect((await store.listRunToolCalls('r')).map((row) => [row.toolCallId, row.decision, row.startedAt])).toStrictEqual([['call-1', 'allow', null]]);

    await store.appendEvents([...second, at(5, { kind: 'end', toolCallId: 'call-2', outcome: 'cancelled', result: 'cancelled', endedAt: 11_300, startedAt: null })]);
    expect((await store.listRunToolCalls('r')).map((row) => [row.toolCallId, row.decision, row.outcome, row.startedAt])).toStrictEqual([
      ['call-1', 'allow', null, null],
      ['call-2', 'allow', 'cancelled', null],
    ]);
  });

  it('appends events in seq order and loads those after a seq', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'));
    await appendAll(store, { runId: 'r', sessionId: 's' }, [undefined, undefined, undefined, undefined, undefined]);

    expect(await store.loadEvents('r', 0)).toStrictEqual([1, 2, 3, 4, 5].map((seq) => statusEvent(`event ${seq}`)));
    expect(await store.loadEvents('r', 3)).toStrictEqual([statusEvent('event 4'), statusEvent('event 5')]);
    expect(await store.loadEvents('r', 5)).toStrictEqual([]);
    expect(await store.loadEvents('other', 0)).toStrictEqual([]);
    expect(await store.loadLastEvent('r')).toStrictEqual(statusEvent('event 5'));
    expect(await store.loadLastEvent('other')).toBeUndefined();
  });

  it('builds a ledger row from the start, decision, running and end of a call', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'));
    const start = startChange('call-1', 10_000);
    const changes: LedgerChange[] = [
      start,
      { kind: 'decision', toolCallId: 'call-1', decision: 'allow', source: 'user', reason: 'looks fine', decidedAt: 10_500, by: { connectionId: 'conn-1', clientLabel: 'web' } },
      { kind: 'running', toolCallId: 'call-1', startedAt: 10_600 },
    ];
    await appendAll(store, { runId: 'r', sessionId: 's' }, changes);
    const undecided = startChange('call-2', 10_700, 'read_file');
    await appendAll(store, { runId: 'r', sessionId: 's' }, [{ kind: 'end', toolCallId: 'call-1', outcome: 'executed', result: 'ok\n', endedAt: 10_900 }, undecided], 4);

    const expected: ToolCallRecord = {
      runId: 'r',
      sessionId: 's',
      toolCallId: 'call-1',
      toolName: 'terminal',
      arguments: { command: 'echo call-1' },
      editedArguments: null,
      approvalId: 'approval-call-1',
      executesCode: true,
      toolVersion: 'v1',
      tool: null,
      exactGrantsOnly: false,
      askedBecause: null,
      requestedAt: 10_000,
      expiresAt: 70_000,
      decision: 'allow',
      source: 'user',
      reason: 'looks fine',
      decidedByGrant: null,
      decidedByRule: null,
      decidedByRuleText: null,
      decidedAt: 10_500,
      connectionId: 'conn-1',
      clientLabel: 'web',
      startedAt: 10_600,
      outcome: 'executed',
      result: 'ok\n',
      cut: null,
      endedAt: 10_900,
    };
    const pending = { ...undecidedRecord('r', 's', undecided) };
    expect(await store.listRunToolCalls('r')).toStrictEqual([expected, pending]);
    expect(await store.listSessionToolCalls('s')).toStrictEqual([expected, pending]);

    await appendAll(store, { runId: 'r', sessionId: 's' }, [{ kind: 'decision', toolCallId: 'call-2', decision: 'allow', source: 'grant', decidedByGrant: 'grant-1', decidedAt: 11_000 }], 6);
    expect((await store.listRunToolCalls('r'))[1]).toStrictEqual({ ...pending, decision: 'allow', source: 'grant', decidedByGrant: 'grant-1', decidedAt: 11_000 });

    // A rule's decision keeps how the rule read then, in its parts, whatever becomes of the rule.
    const byRule = startChange('call-3', 11_100);
    const read = [{ text: 'Allow commands starting with ' }, { code: 'ls' }, { text: ' everywhere: ' }, { quote: '[{"code":"x"}]' }];
    await appendAll(store, { runId: 'r', sessionId: 's' }, [byRule, { kind: 'decision', toolCallId: 'call-3', decision: 'allow', source: 'rule', decidedByRule: 'rule_1', decidedByRuleText: read, decidedAt: 11_200 }], 7);
    expect((await store.listRunToolCalls('r'))[2]).toMatchObject({ source: 'rule', decidedByRule: 'rule_1', decidedByRuleText: read });
    // A row kept before reasons were typed reads back as the sentence it kept.
    await appendAll(store, { runId: 'r', sessionId: 's' }, [startChange('call-4', 11_300), { kind: 'decision', toolCallId: 'call-4', decision: 'allow', source: 'rule', decidedByRule: 'rule_1', decidedByRuleText: 'Allow commands starting with `ls` everywhere', decidedAt: 11_400 }], 9);
    expect((await store.listRunToolCalls('r'))[3]).toMatchObject({ decidedByRuleText: 'Allow commands starting with `ls` everywhere' });

    // A call only a grant for its exact arguments may release keeps that, to be restored with it.
    const exactOnly = { ...startChange('call-5', 11_500), exactGrantsOnly: true };
    await appendAll(store, { runId: 'r', sessionId: 's' }, [exactOnly], 11);
    expect((await store.listRunToolCalls('r'))[4]).toStrictEqual(undecidedRecord('r', 's', exactOnly));
    expect((await store.listRunToolCalls('r')).map((call) => call.exactGrantsOnly)).toStrictEqual([false, false, false, false, true]);
  });

  it('finds the decision recorded for an approval id in its own session only, none while the call waits', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'));
    const automatic = { ...startChange('call-3', 10_200), approvalId: '' };
    await appendAll(store, { runId: 'r', sessionId: 's' }, [
      startChange('call-1', 10_000),
      { kind: 'decision', toolCallId: 'call-1', decision: 'deny', source: 'user', reason: 'not now', decidedAt: 10_100 },
      startChange('call-2', 10_150),
      automatic,
      { kind: 'decision', toolCallId: 'call-3', decision: 'allow', source: 'confirmation-off', decidedAt: 10_300 },
    ]);

    expect(await store.findDecision('s', 'approval-call-1')).toBe('deny');
    expect(await store.findDecision('other-session', 'approval-call-1')).toBeUndefined();
    expect(await store.findDecision('s', 'approval-call-2')).toBeUndefined();
    expect(await store.findDecision('s', '')).toBeUndefined();
    expect(await store.findDecision('s', 'approval-never')).toBeUndefined();
    await appendAll(store, { runId: 'r', sessionId: 's' }, [{ kind: 'decision', toolCallId: 'call-2', decision: 'timeout', source: 'system', decidedAt: 70_150 }], 6);
    expect(await store.findDecision('s', 'approval-call-2')).toBe('timeout');
  });

  it('keeps an event and its ledger change together: a failed append changes neither', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'));
    await appendAll(store, { runId: 'r', sessionId: 's' }, [startChange('call-1', 10_000)]);
    const before = await store.listRunToolCalls('r');

    await expect(store.appendEvent({ runId: 'r', sessionId: 's', seq: 1, event: statusEvent('again'), at: 1, ledger: startChange('call-2', 10_100) })).rejects.toThrow();
    await expect(
      store.appendEvent({ runId: 'r', sessionId: 's', seq: 1, event: statusEvent('again'), at: 1, ledger: { kind: 'decision', toolCallId: 'call-1', decision: 'deny', source: 'user', decidedAt: 2 } }),
    ).rejects.toThrow();
    await expect(
      store.appendEvent({ runId: 'r', sessionId: 's', seq: 2, event: statusEvent('for a call never started'), at: 1, ledger: { kind: 'running', toolCallId: 'nope', startedAt: 2 } }),
    ).rejects.toThrow();
    await expect(store.appendEvent({ runId: 'r', sessionId: 's', seq: 2, event: statusEvent('started twice'), at: 1, ledger: startChange('call-1', 10_200) })).rejects.toThrow();

    expect(await store.listRunToolCalls('r')).toStrictEqual(before);
    expect(await store.loadEvents('r', 0)).toStrictEqual([statusEvent('event 1')]);
    expect((await store.listAudit({})).entries).toStrictEqual(before);
  });

  it('writes the messages that come with an event in its transaction, before it: both land or neither does', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'));
    await appendAll(store, { runId: 'r', sessionId: 's' }, [startChange('call-1', 10_000)]);
    await store.appendMessage('s', { role: 'user', content: 'list it' }, 9_000);
    const answer: ChatMessage = { role: 'tool', toolCallId: 'call-1', toolName: 'list_directory', content: 'a.txt' };
    const end: LedgerChange = { kind: 'end', toolCallId: 'call-1', outcome: 'executed', result: 'a.txt', endedAt: 10_500 };

    // The same seq again fails: the message must not land without its event.
    await expect(store.appendEvent({ runId: 'r', sessionId: 's', seq: 1, event: statusEvent('again'), at: 10_500, messages: [answer], ledger: end })).rejects.toThrow();
    await expect(store.appendEvents([{ runId: 'r', sessionId: 's', seq: 1, event: statusEvent('again'), at: 10_500, messages: [answer] }])).rejects.toThrow();
    expect(await store.loadMessages('s')).toStrictEqual([{ role: 'user', content: 'list it' }]);

    await store.appendEvent({ runId: 'r', sessionId: 's', seq: 2, event: statusEvent('tool ended'), at: 10_500, messages: [answer], ledger: end });
    await store.appendEvents([
      { runId: 'r', sessionId: 's', seq: 3, event: statusEvent('more'), at: 10_600, messages: [{ role: 'assistant', content: 'one' }, { role: 'assistant', content: 'two' }] },
      { runId: 'r', sessionId: 's', seq: 4, event: statusEvent('and more'), at: 10_700, messages: [{ role: 'assistant', content: 'three' }] },
    ]);
    expect(await store.loadMessages('s')).toStrictEqual([
      { role: 'user', content: 'list it' },
      answer,
      { role: 'assistant', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'assistant', content: 'three' },
    ]);
    expect(await store.loadEvents('r', 1)).toStrictEqual([statusEvent('tool ended'), statusEvent('more'), statusEvent('and more')]);
    expect((await store.listRunToolCalls('r'))[0]).toMatchObject({ outcome: 'executed', result: 'a.txt', endedAt: 10_500 });
  });

  it('records when a call started from its end, written alone or in a batch; an end that says it never began clears a recorded start, one that says nothing keeps it', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'));
    const next = await appendAll(store, { runId: 'r', sessionId: 's' }, [
      startChange('alone', 10_000),
      startChange('batched', 10_001),
      startChange('refused', 10_002),
      startChange('marked, then refused', 10_003),
      { kind: 'running', toolCallId: 'marked, then refused', startedAt: 10_050 },
      startChange('marked, then interrupted', 10_004),
      { kind: 'running', toolCallId: 'marked, then interrupted', startedAt: 10_060 },
    ]);
    await store.appendEvent({ runId: 'r', sessionId: 's', seq: next, event: statusEvent('alone ended'), at: 10_900, ledger: { kind: 'end', toolCallId: 'alone', outcome: 'executed', result: 'a', endedAt: 10_900, startedAt: 10_100 } });
    await store.appendEvents([
      { runId: 'r', sessionId: 's', seq: next + 1, event: statusEvent('batched ended'), at: 11_000, ledger: { kind: 'end', toolCallId: 'batched', outcome: 'error', result: 'b', endedAt: 11_000, startedAt: 10_200 } },
      { runId: 'r', sessionId: 's', seq: next + 2, event: statusEvent('refused ended'), at: 11_001, ledger: { kind: 'end', toolCallId: 'refused', outcome: 'denied', result: 'no', endedAt: 11_001 } },
      {
        runId: 'r',
        sessionId: 's',
        seq: next + 3,
        event: statusEvent('never began'),
        at: 11_002,
        ledger: { kind: 'end', toolCallId: 'marked, then refused', outcome: 'error', result: 'gone', endedAt: 11_002, startedAt: null },
      },
    ]);
    await store.appendEvent({
      runId: 'r',
      sessionId: 's',
      seq: next + 4,
      event: statusEvent('interrupted'),
      at: 11_003,
      ledger: { kind: 'end', toolCallId: 'marked, then interrupted', outcome: 'interrupted', result: 'may have run', endedAt: 11_003 },
    });
    const calls = await store.listRunToolCalls('r');
    expect(calls.map(({ toolCallId, startedAt, endedAt }) => ({ toolCallId, startedAt, endedAt }))).toStrictEqual([
      { toolCallId: 'alone', startedAt: 10_100, endedAt: 10_900 },
      { toolCallId: 'batched', startedAt: 10_200, endedAt: 11_000 },
      { toolCallId: 'refused', startedAt: null, endedAt: 11_001 },
      { toolCallId: 'marked, then refused', startedAt: null, endedAt: 11_002 },
      { toolCallId: 'marked, then interrupted', startedAt: 10_060, endedAt: 11_003 },
    ]);
  });

  it('pages the audit newest first over 250 calls, without duplicates or gaps, under every filter', async () => {
    await using opened = await open();
    const { store } = opened;
    const calls = await fillLedger(store, 250);

    for (const limit of [40, 50, 1000]) {
      const pages = await allPages(store, { limit });
      expect(pages.length).toBe(Math.ceil(250 / limit));
      expect(pages.flat().map((r) => r.toolCallId)).toStrictEqual(expectedAudit(calls, () => true));
    }
    const queries: [AuditQuery, (call: LedgerCall) => boolean][] = [
      [{ sessionId: 's1' }, (c) => c.sessionId === 's1'],
      [{ toolName: 'read_file' }, (c) => c.toolName === 'read_file'],
      [{ decision: 'allow' }, (c) => c.decision === 'allow'],
      [{ decision: 'none' }, (c) => c.decision === null],
      [{ from: 10_200, to: 10_400 }, (c) => c.requestedAt >= 10_200 && c.requestedAt < 10_400],
      [
        { sessionId: 's2', toolName: 'read_file', decision: 'deny', from: 10_100 },
        (c) => c.sessionId === 's2' && c.toolName === 'read_file' && c.decision === 'deny' && c.requestedAt >= 10_100,
      ],
    ];
    for (const [query, keep] of queries) {
      const expected = expectedAudit(calls, keep);
      expect(expected.length).toBeGreaterThan(0);
      expect((await allPages(store, { ...query, limit: 7 })).flat().map((r) => r.toolCallId)).toStrictEqual(expected);
    }
    const firstPage = await store.listAudit({});
    expect(firstPage.entries).toHaveLength(100);
    await expect(store.listAudit({ cursor: 'not a cursor' })).rejects.toThrow();
  });

  it('ends an audit page before the row that would take it past MAX_AUDIT_PAGE_CHARS; the next page goes on right after it', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'));
    const MiB = 1024 * 1024;
    // Oldest first, all asked at one instant (the cursor's tie-break decides). Characters are counted as JSON, not as
    // stored: 'é' is two bytes, a line end two characters.
    const large: Record<string, LedgerChange[]> = {
      ascii: [{ ...startChange('ascii', 10_000), arguments: { content: 'a'.repeat(1.5 * MiB) } }],
      accented: [{ ...startChange('accented', 10_000), arguments: { content: 'é'.repeat(1.5 * MiB) } }],
      'line ends': [startChange('line ends', 10_000), { kind: 'end', toolCallId: 'line ends', outcome: 'executed', result: '\n'.repeat(MiB), endedAt: 10_001 }],
      'over the cap alone': [{ ...startChange('over the cap alone', 10_000), arguments: { content: 'b'.repeat(5 * MiB) } }],
      edited: [
        startChange('edited', 10_000),
        { kind: 'decision', toolCallId: 'edited', decision: 'allow', source: 'user', decidedAt: 10_001, editedArguments: { content: 'c'.repeat(2 * MiB) } },
      ],
    };
    const order = ['small 0', 'ascii', 'accented', 'line ends', 'small 1', 'over the cap alone', 'small 2', 'edited', ...Array.from({ length: 20 }, (_, index) => `small ${index + 3}`)];
    let seq = 1;
    for (const id of order) seq = await appendAll(store, { runId: 'r', sessionId: 's' }, large[id] ?? [startChange(id, 10_000)], seq);

    const pages = await allPages(store, {});
    expect(pages.flat().map((entry) => entry.toolCallId)).toStrictEqual(order.toReversed());
    const chars = (entries: ToolCallRecord[]) => entries.reduce((sum, entry) => sum + JSON.stringify(entry).length, 0);
    for (const [index, page] of pages.entries()) {
      if (page.length > 1) expect(chars(page)).toBeLessThanOrEqual(MAX_AUDIT_PAGE_CHARS);
      // Cut only where the next row would not have fitted.
      if (index < pages.length - 1) expect(chars([...page, pages[index + 1]![0]!])).toBeGreaterThan(MAX_AUDIT_PAGE_CHARS);
    }
    expect(pages.map((page) => page.map((entry) => entry.toolCallId))).toStrictEqual([
      [...Array.from({ length: 20 }, (_, index) => `small ${22 - index}`), 'edited', 'small 2'],
      ['over the cap alone'],
      ['small 1', 'line ends', 'accented'],
      ['ascii', 'small 0'],
    ]);
    // The row limit still applies within the size bound, and the cursor after a cut page is the same as after a short one.
    const two = await store.listAudit({ limit: 2 });
    expect(two.entries.map((entry) => entry.toolCallId)).toStrictEqual(['small 22', 'small 21']);
    const afterCut = await store.listAudit({ cursor: (await store.listAudit({})).nextCursor!, limit: 1 });
    expect(afterCut.entries.map((entry) => entry.toolCallId)).toStrictEqual(['over the cap alone']);
  });

  it('saves, replaces, lists and deletes grants, only of a chat that is there', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    const byTool = { grantId: 'g-tool', scope: 'session' as const, sessionId: 's', toolName: 'read_file', arguments: null, toolVersion: 'v1', createdAt: 2_000 };
    const exact = { grantId: 'g-exact', scope: 'session' as const, sessionId: 's', toolName: 'terminal', arguments: { command: 'ls' }, toolVersion: 'v2', createdAt: 1_000 };
    await store.saveGrant(byTool);
    await store.saveGrant(exact);
    expect(await store.listGrants()).toStrictEqual([exact, byTool]);

    await store.saveGrant({ ...exact, toolVersion: 'v3' });
    await store.deleteGrant('g-tool');
    await store.deleteGrant('never');
    expect(await store.listGrants()).toStrictEqual([{ ...exact, toolVersion: 'v3' }]);

    // A chat deleted (or never made) takes no grant: kept, it would let calls of a chat made later under that name through.
    await store.deleteSession('s');
    await expect(store.saveGrant({ ...exact, grantId: 'g-late' })).rejects.toThrow(NotFoundError);
    await expect(store.saveGrant({ ...exact, grantId: 'g-none', sessionId: 'never' })).rejects.toThrow(NotFoundError);
    expect(await store.listGrants()).toStrictEqual([]);
  });

  it('begins a run with its message and its chat\'s change in one write, and a start refused writes none of them', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s', 1_000));
    await store.beginRun({ run: run('r1', 's', 2_000), message: { role: 'user', content: 'one' }, session: { updatedAt: 2_000, lastRunId: 'r1', confirmToolCalls: false } });
    expect(await store.getRun('r1')).toStrictEqual(run('r1', 's', 2_000));
    expect(await store.loadFirstRunMessage('s', 'r1')).toStrictEqual({ role: 'user', content: 'one' });
    expect(await store.getSession('s')).toStrictEqual({ ...session('s', 1_000), updatedAt: 2_000, lastRunId: 'r1', confirmToolCalls: false });

    // The same run id again: refused whole, the chat's messages and row as they were.
    await expect(store.beginRun({ run: run('r1', 's', 3_000), message: { role: 'user', content: 'two' }, session: { updatedAt: 3_000, lastRunId: 'r1', confirmToolCalls: true } })).rejects.toThrow();
    await expect(store.beginRun({ run: run('r2', 'gone', 3_000), message: { role: 'user', content: 'two' }, session: { updatedAt: 3_000, lastRunId: 'r2' } })).rejects.toThrow();
    expect(await store.loadMessages('s')).toStrictEqual([{ role: 'user', content: 'one' }]);
    expect(await store.hasRun('r2')).toBe(false);
    expect(await store.getSession('s')).toStrictEqual({ ...session('s', 1_000), updatedAt: 2_000, lastRunId: 'r1', confirmToolCalls: false });
  });

  it('writes a grant that comes with an allow in the same transaction: kept with it, or not at all when the write fails', async () => {
    await using opened = await openWithRun(open);
    const { store } = opened;
    const base = { runId: 'r', sessionId: 's' };
    await appendAll(store, base, [startChange('call-1', 5_000), startChange('call-2', 5_001)]);
    const grant = (grantId: string) => ({ grantId, scope: 'session' as const, sessionId: 's', toolName: 'terminal', arguments: { command: 'ls' }, toolVersion: 'v1', createdAt: 6_000 });
    const allow = (toolCallId: string) => ({ kind: 'decision' as const, toolCallId, decision: 'allow' as const, source: 'user' as const, decidedAt: 6_000 });

    // Event 2 is there already: the write fails whole, and its grant is not kept.
    await expect(store.appendEvents([{ ...base, seq: 2, event: statusEvent('allowed'), at: 6_000, ledger: allow('call-1'), grant: grant('g-lost') }])).rejects.toThrow();
    await expect(store.appendEvents([{ ...base, seq: 3, event: statusEvent('allowed'), at: 6_000, ledger: allow('call-1'), grant: grant('g-lost') }, { ...base, seq: 1, event: statusEvent('started'), at: 6_001 }])).rejects.toThrow();
    expect(await store.listGrants()).toStrictEqual([]);
    expect((await store.listRunToolCalls('r')).map((call) => call.decision)).toStrictEqual([null, null]);

    await store.appendEvents([{ ...base, seq: 3, event: statusEvent('allowed'), at: 6_000, ledger: allow('call-1'), grant: grant('g-1') }]);
    await store.appendEvents([
      { ...base, seq: 4, event: statusEvent('allowed'), at: 6_001, ledger: allow('call-2'), grant: grant('g-2') },
      { ...base, seq: 5, event: statusEvent('started'), at: 6_002, ledger: { kind: 'running', toolCallId: 'call-2', startedAt: 6_002 } },
    ]);
    expect((await store.listGrants()).map((kept) => kept.grantId).sort()).toStrictEqual(['g-1', 'g-2']);
    expect((await store.listRunToolCalls('r')).map((call) => call.decision)).toStrictEqual(['allow', 'allow']);
  });

  it('saves, replaces, counts hits of, lists and deletes rules; the rules of a chat go with it', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    const base = { effect: 'allow' as const, tool: 'terminal', match: { kind: 'command-prefix' as const, tokens: ['npm', 'test'], exact: false }, source: 'user' as const };
    const workspace = { ...base, id: 'r-ws', scope: { kind: 'workspace' as const, path: '/w' }, createdAt: '2026-11-30T08:00:00.000Z' };
    const chat = { ...base, id: 'r-chat', scope: { kind: 'chat' as const, sessionId: 's' }, createdAt: '2026-11-30T09:00:00.000Z' };
    await store.saveRule(workspace);
    await store.saveRule(chat);
    await store.recordRuleHit('r-ws', 5_000);
    await store.recordRuleHit('r-ws', 6_000);
    await store.recordRuleHit('never', 7_000);
    const denied = { ...workspace, effect: 'deny' as const, reason: 'no' };
    await store.saveRule(denied);
    expect(await store.listRules()).toStrictEqual([
      { rule: denied, hits: 2, lastUsedAt: 6_000 },
      { rule: chat, hits: 0, lastUsedAt: null },
    ]);
    await store.deleteSession('s');
    expect((await store.listRules()).map((r) => r.rule.id)).toStrictEqual(['r-ws']);
    await store.deleteRule('r-ws');
    expect(await store.listRules()).toStrictEqual([]);
  });

  it('keeps, replaces and clears settings', async () => {
    await using opened = await open();
    const { store } = opened;
    expect(await store.getSetting('k')).toBeUndefined();
    await store.setSetting('k', 'one');
    await store.setSetting('k', 'two');
    expect(await store.getSetting('k')).toBe('two');
    await store.setSetting('k', undefined);
    expect(await store.getSetting('k')).toBeUndefined();
  });

  it('deletes a session with its messages, runs, events and grants, and keeps its ledger rows', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('gone'));
    await store.createSession(session('kept'));
    await store.appendMessage('gone', { role: 'user', content: 'hi' }, 1);
    await store.createRun(run('r-gone', 'gone'));
    await store.createRun(run('r-kept', 'kept'));
    await appendAll(store, { runId: 'r-gone', sessionId: 'gone' }, [startChange('call-1', 10_000), { kind: 'end', toolCallId: 'call-1', outcome: 'denied', result: 'no', endedAt: 10_001 }]);
    await appendAll(store, { runId: 'r-kept', sessionId: 'kept' }, [startChange('call-1', 10_002)]);
    const grant = { grantId: 'g', scope: 'session' as const, toolName: 'terminal', arguments: null, toolVersion: 'v1', createdAt: 1 };
    await store.saveGrant({ ...grant, grantId: 'g-gone', sessionId: 'gone' });
    await store.saveGrant({ ...grant, grantId: 'g-kept', sessionId: 'kept' });
    const ledger = await store.listSessionToolCalls('gone');

    await store.deleteSession('gone');

    expect(await store.getSession('gone')).toBeUndefined();
    expect(await store.loadMessages('gone')).toStrictEqual([]);
    expect(await store.getRun('r-gone')).toBeUndefined();
    expect(await store.loadEvents('r-gone', 0)).toStrictEqual([]);
    expect(await store.hasRun('r-gone')).toBe(true);
    expect((await store.listGrants()).map((g) => g.grantId)).toStrictEqual(['g-kept']);
    expect(await store.listSessionToolCalls('gone')).toStrictEqual(ledger);
    expect(await store.listRunToolCalls('r-gone')).toStrictEqual(ledger);
    expect((await store.listAudit({ sessionId: 'gone' })).entries).toStrictEqual(ledger);
    expect(await store.loadEvents('r-kept', 0)).toHaveLength(1);
    expect(await store.listSessionToolCalls('kept')).toHaveLength(1);
  });
});

interface LedgerCall {
  index: number;
  toolCallId: string;
  sessionId: string;
  toolName: string;
  requestedAt: number;
  decision: Decision | null;
}

const TOOLS = ['terminal', 'read_file', 'web_fetch'];
const DECISIONS: (Decision | null)[] = ['allow', 'deny', 'timeout', null, 'allow', 'cancel'];

/** `count` calls over two sessions and three tools, four at each instant (ties), with every kind of decision. */
async function fillLedger(store: AirlockStore, count: number): Promise<LedgerCall[]> {
  const calls: LedgerCall[] = [];
  for (const sessionId of ['s1', 's2']) {
    await store.createSession(session(sessionId));
    await store.createRun(run(`run-${sessionId}`, sessionId));
  }
  const nextSeq = new Map([
    ['s1', 1],
    ['s2', 1],
  ]);
  for (let index = 0; index < count; index += 1) {
    const call: LedgerCall = {
      index,
      toolCallId: `call-${index}`,
      sessionId: index % 2 === 0 ? 's1' : 's2',
      toolName: TOOLS[index % 3]!,
      requestedAt: 10_000 + Math.floor(index / 4) * 10,
      decision: DECISIONS[index % DECISIONS.length]!,
    };
    calls.push(call);
    const changes: LedgerChange[] = [startChange(call.toolCallId, call.requestedAt, call.toolName)];
    if (call.decision !== null) changes.push({ kind: 'decision', toolCallId: call.toolCallId, decision: call.decision, source: 'user', decidedAt: call.requestedAt + 1 });
    const seq = nextSeq.get(call.sessionId)!;
    nextSeq.set(call.sessionId, await appendAll(store, { runId: `run-${call.sessionId}`, sessionId: call.sessionId }, changes, seq));
  }
  return calls;
}

function expectedAudit(calls: LedgerCall[], keep: (call: LedgerCall) => boolean): string[] {
  return calls
    .filter(keep)
    .sort((a, b) => b.requestedAt - a.requestedAt || b.index - a.index)
    .map((call) => call.toolCallId);
}

async function allPages(store: AirlockStore, query: AuditQuery): Promise<ToolCallRecord[][]> {
  const pages: ToolCallRecord[][] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listAudit({ ...query, ...(cursor === undefined ? {} : { cursor }) });
    pages.push(page.entries);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined && pages.length <= 300);
  return pages;
}
