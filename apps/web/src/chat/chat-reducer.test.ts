import { describe, expect, it } from 'vitest';
import type { LoopEvent, StoredMessage, ToolCallRecord } from '../lib/api-types';
import { ledgerRecord } from './test-ledger-record';
import { chatReducer, earlierItems, initialChatState, toolKey, undecidedCalls, type ChatAction, type ChatHistory, type ChatItem, type ChatState } from './chat-reducer';

const RUN = 'run_1';

function fold(events: LoopEvent[], start: ChatState = follow(RUN, 'hello')): ChatState {
  return events.reduce((state, event, index) => chatReducer(state, { type: 'event', runId: RUN, tracked: { id: `${RUN}:${index + 1}`, data: event } }), start);
}

function follow(runId: string, message?: string): ChatState {
  return chatReducer(initialChatState, { type: 'run-followed', runId, ...(message === undefined ? {} : { message }) });
}

const toolStart = (id: string, awaiting = true): LoopEvent => ({
  type: 'tool-start',
  toolCallId: id,
  toolName: 'terminal',
  arguments: { command: 'ls' },
  approvalId: awaiting ? `apv_${id}` : '',
  awaitingConfirmation: awaiting,
  expiresAt: awaiting ? 1_000_000 : null,
});

function callState(state: ChatState, id: string, runId = RUN) {
  const item = state.items.find((candidate) => candidate.key === toolKey(runId, id));
  if (item?.kind !== 'tool') throw new Error(`no tool item ${id}`);
  return item.call.state;
}

describe('chatReducer', () => {
  it('shows the user message and streams text and reasoning into one assistant turn', () => {
    const state = fold([
      { type: 'run-start', runId: RUN, sessionId: 's' },
      { type: 'reasoning-delta', text: 'Let me ' },
      { type: 'reasoning-delta', text: 'think.' },
      { type: 'text-delta', text: 'Hello ' },
      { type: 'text-delta', text: 'there.' },
      { type: 'run-end', runId: RUN, reason: 'done' },
    ]);
    expect(state.items).toStrictEqual([
      { kind: 'user', key: `user:${RUN}`, text: 'hello' },
      { kind: 'assistant', key: `assistant:${RUN}:1`, runId: RUN, text: 'Hello there.', reasoning: 'Let me think.' },
    ]);
    expect(state.run).toStrictEqual({ runId: RUN, phase: 'ended', status: null, lastSeq: 6, announcing: false, startedAtTurn: null });
  });

  it('starts a new assistant turn after a tool call', () => {
    const state = fold([
      { type: 'text-delta', text: 'Listing.' },
      toolStart('c1', false),
      { type: 'tool-decision', toolCallId: 'c1', approvalId: '', decision: 'allow', source: 'confirmation-off' },
      { type: 'tool-end', toolCallId: 'c1', toolName: 'terminal', outcome: 'executed', result: 'a.txt' },
      { type: 'text-delta', text: 'Found a.txt.' },
    ]);
    expect(state.items.map((item) => item.kind)).toStrictEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(callState(state, 'c1')).toStrictEqual({ status: 'done', approvedBy: 'no-confirmation', result: 'a.txt' });
  });

  it('walks a gated call through awaiting, deciding, running and done', () => {
    let state = fold([toolStart('c1')]);
    expect(callState(state, 'c1')).toStrictEqual({ status: 'awaiting-decision', approvalId: 'apv_c1', expiresAt: 1_000_000, problem: null });
    state = chatReducer(state, { type: 'decision-sent', key: toolKey(RUN, 'c1'), decision: 'allow' });
    expect(callState(state, 'c1')).toStrictEqual({ status: 'deciding', approvalId: 'apv_c1', expiresAt: 1_000_000, decision: 'allow' });
    state = fold(
      [
        toolStart('c1'),
        { type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_c1', decision: 'allow', source: 'user' },
      ],
      state,
    );
    expect(callState(state, 'c1')).toStrictEqual({ status: 'running', approvedBy: 'you' });
    state = chatReducer(state, { type: 'event', runId: RUN, tracked: { id: `${RUN}:3`, data: { type: 'tool-end', toolCallId: 'c1', toolName: 'terminal', outcome: 'executed', result: 'ok' } } });
    expect(callState(state, 'c1')).toStrictEqual({ status: 'done', approvedBy: 'you', result: 'ok' });
  });

  it('keeps the deny reason through tool-end', () => {
    const state = fold([
      toolStart('c1'),
      { type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_c1', decision: 'deny', source: 'user', reason: 'not now' },
    ]);
    expect(callState(state, 'c1')).toStrictEqual({ status: 'denied', reason: 'not now', result: null });
    const ended = chatReducer(state, {
      type: 'event',
      runId: RUN,
      tracked: { id: `${RUN}:3`, data: { type: 'tool-end', toolCallId: 'c1', toolName: 'terminal', outcome: 'denied', result: 'declined' } },
    });
    expect(callState(ended, 'c1')).toStrictEqual({ status: 'denied', reason: 'not now', result: 'declined' });
  });

  it('maps every outcome to its own state', () => {
    const outcomes = ['executed', 'error', 'denied', 'timed-out', 'cancelled', 'disabled', 'duplicate', 'interrupted'] as const;
    const statuses = outcomes.map((outcome, index) => {
      const state = fold([toolStart(`c${index}`, false), { type: 'tool-end', toolCallId: `c${index}`, toolName: 'terminal', outcome, result: 'r' }]);
      return callState(state, `c${index}`).status;
    });
    expect(statuses).toStrictEqual(['done', 'error', 'denied', 'timed-out', 'cancelled', 'disabled', 'duplicate', 'interrupted']);
  });

  it('marks a call allowed by a grant', () => {
    const state = fold([toolStart('c1', false), { type: 'tool-decision', toolCallId: 'c1', approvalId: '', decision: 'allow', source: 'grant' }]);
    expect(callState(state, 'c1')).toStrictEqual({ status: 'running', approvedBy: 'grant' });
  });

  it('shows timeout and cancel decisions before their tool-end', () => {
    const state = fold([
      toolStart('c1'),
      toolStart('c2'),
      { type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_c1', decision: 'timeout', source: 'system' },
      { type: 'tool-decision', toolCallId: 'c2', approvalId: 'apv_c2', decision: 'cancel', source: 'user' },
    ]);
    expect([callState(state, 'c1'), callState(state, 'c2')]).toStrictEqual([
      { status: 'timed-out', result: null },
      { status: 'cancelled', result: null },
    ]);
  });

  it('puts the buttons back with the problem when a decision is rejected', () => {
    let state = fold([toolStart('c1')]);
    state = chatReducer(state, { type: 'decision-sent', key: toolKey(RUN, 'c1'), decision: 'deny' });
    state = chatReducer(state, { type: 'decision-rejected', key: toolKey(RUN, 'c1'), problem: { kind: 'already-decided', decision: 'allow' } });
    expect(callState(state, 'c1')).toStrictEqual({
      status: 'awaiting-decision',
      approvalId: 'apv_c1',
      expiresAt: 1_000_000,
      problem: { kind: 'already-decided', decision: 'allow' },
    });
  });

  it('ignores a late rejection once the run has moved the call on', () => {
    let state = fold([toolStart('c1'), { type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_c1', decision: 'allow', source: 'user' }]);
    const before = state;
    state = chatReducer(state, { type: 'decision-rejected', key: toolKey(RUN, 'c1'), problem: { kind: 'not-found' } });
    expect(state).toBe(before);
  });

  it('ignores a decision-sent for a call that is not waiting', () => {
    const state = fold([toolStart('c1', false)]);
    expect(chatReducer(state, { type: 'decision-sent', key: toolKey(RUN, 'c1'), decision: 'allow' })).toBe(state);
  });

  it('applies a replayed event only once', () => {
    const once = fold([{ type: 'text-delta', text: 'Hi' }]);
    const replayed = chatReducer(once, { type: 'event', runId: RUN, tracked: { id: `${RUN}:1`, data: { type: 'text-delta', text: 'Hi' } } });
    expect(replayed).toBe(once);
  });

  it('ignores events of a run it does not follow', () => {
    const state = follow(RUN);
    const action: ChatAction = { type: 'event', runId: 'run_other', tracked: { id: 'run_other:1', data: { type: 'text-delta', text: 'x' } } };
    expect(chatReducer(state, action)).toBe(state);
  });

  it('lists undecided calls for Allow all / Deny all', () => {
    let state = fold([toolStart('c1'), toolStart('c2'), toolStart('c3', false)]);
    state = chatReducer(state, { type: 'decision-sent', key: toolKey(RUN, 'c2'), decision: 'allow' });
    expect(undecidedCalls(state).map((call) => [call.toolCallId, call.state.status])).toStrictEqual([
      ['c1', 'awaiting-decision'],
      ['c2', 'deciding'],
    ]);
  });

  it('marks for Allow all the undecided calls a deny rule asked about, which only their cards may allow', () => {
    const asked: LoopEvent = { ...toolStart('c1'), askedBecause: { ruleId: 'rule_rm', reason: 'A deny rule may catch this call' }, exactGrantsOnly: true } as LoopEvent;
    const state = fold([asked, toolStart('c2')]);
    expect(undecidedCalls(state).map((call) => [call.toolCallId, call.exactGrantsOnly])).toStrictEqual([
      ['c1', true],
      ['c2', undefined],
    ]);
  });

  it('notes a run that did not end normally', () => {
    const state = fold([{ type: 'run-end', runId: RUN, reason: 'error', error: 'model unreachable' }]);
    expect(state.items.at(-1)).toStrictEqual({ kind: 'run-end', key: `end:${RUN}`, runId: RUN, reason: 'error', error: 'model unreachable' });
  });

  it('keeps the status line until text or a tool result arrives', () => {
    const calling = fold([{ type: 'status', text: 'Calling: terminal' }]);
    expect(calling.run?.status).toBe('Calling: terminal');
    expect(fold([{ type: 'status', text: 'Calling: terminal' }, { type: 'text-delta', text: 'x' }]).run?.status).toBeNull();
  });

  it('reports a stream failure for the followed run only while it runs', () => {
    const failed = chatReducer(follow(RUN), { type: 'stream-failed', runId: RUN, message: 'session busy' });
    expect([failed.streamError, failed.run?.phase]).toStrictEqual(['session busy', 'ended']);
    const ended = fold([{ type: 'run-end', runId: RUN, reason: 'done' }]);
    expect(chatReducer(ended, { type: 'stream-failed', runId: RUN, message: 'closed' })).toBe(ended);
  });

  it('rebuilds stored history with tool results matched to their calls', () => {
    const state = chatReducer(initialChatState, {
      type: 'history-loaded',
      history: {
        messages: [
          { role: 'system', content: 'ignored' },
          { role: 'user', content: 'list files' },
          { role: 'assistant', content: '', reasoning: 'use ls', toolCalls: [{ id: 'c1', name: 'terminal', arguments: { command: 'ls' } }] },
          { role: 'tool', toolCallId: 'c1', toolName: 'terminal', content: 'a.txt' },
          { role: 'assistant', content: 'There is a.txt.' },
        ],
        runIds: ['r1', 'r1', 'r1', 'r1', 'r1'],
        toolCalls: [],
        pending: [],
        follow: null,
      },
    });
    expect(state.items).toStrictEqual([
      { kind: 'user', key: 'history:1', text: 'list files' },
      { kind: 'assistant', key: 'history:2', runId: null, text: '', reasoning: 'use ls' },
      {
        kind: 'tool',
        key: 'history:2:c1',
        call: { key: 'history:2:c1', runId: null, toolCallId: 'c1', toolName: 'terminal', arguments: { command: 'ls' }, state: { status: 'recorded', result: 'a.txt' } },
      },
      { kind: 'assistant', key: 'history:4', runId: null, text: 'There is a.txt.', reasoning: '' },
    ]);
  });
});

function record(toolCallId: string, fields: Partial<ToolCallRecord>): ToolCallRecord {
  return ledgerRecord({ toolCallId, approvalId: `apv_${toolCallId}`, ...fields });
}

function historyCall(state: ChatState, key: string) {
  const item = state.items.find((candidate) => candidate.key === key);
  if (item?.kind !== 'tool') throw new Error(`no tool item ${key}`);
  return item.call.state;
}

describe('chatReducer history from the ledger', () => {
  const turn = (ids: string[]): StoredMessage[] => [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: '', toolCalls: ids.map((id) => ({ id, name: 'terminal', arguments: { command: 'ls' } })) },
    ...ids.map((id): StoredMessage => ({ role: 'tool', toolCallId: id, toolName: 'terminal', content: `told ${id}` })),
  ];
  // Every message of run_0, the run of a ledgerRecord, unless `runIds` says otherwise.
  const load = (history: Partial<ChatHistory> & Pick<ChatHistory, 'messages'>) =>
    chatReducer(initialChatState, { type: 'history-loaded', history: { runIds: history.messages.map(() => 'run_0'), toolCalls: [], pending: [], follow: null, ...history } });

  it('ends the history with how the last run ended when it failed, as the chat showed it live', () => {
    const messages: StoredMessage[] = [{ role: 'user', content: 'hello?' }];
    const failed = load({ messages, lastRunEnd: { runId: 'r1', reason: 'error', error: 'the model server answered HTTP 503' } });
    expect(failed.items.map((item) => item.kind)).toStrictEqual(['user', 'run-end']);
    expect(failed.items.at(-1)).toStrictEqual({ kind: 'run-end', key: 'end:r1', runId: 'r1', reason: 'error', error: 'the model server answered HTTP 503' });
    // While a run is followed, its own end comes from its events.
    expect(load({ messages, follow: 'r2', lastRunEnd: { runId: 'r1', reason: 'cancelled' } }).items.map((item) => item.kind)).toStrictEqual(['user']);
  });

  it('shows each stored call as its ledger row says it ended, never as finished when it did not run', () => {
    const state = load({
      messages: turn(['d', 'g', 't', 'c', 'i', 'o']),
      toolCalls: [
        record('d', { decision: 'deny', source: 'user', reason: 'not now', outcome: 'denied', result: 'denied: not now' }),
        record('g', { decision: 'allow', source: 'grant', decidedByGrant: 'grant_1', outcome: 'executed', result: 'a.txt' }),
        record('t', { decision: 'timeout', outcome: 'timed-out', result: 'no decision' }),
        record('c', { decision: 'cancel', outcome: 'cancelled', result: 'cancelled' }),
        record('i', { decision: 'allow', source: 'user', outcome: 'interrupted', result: 'interrupted' }),
        record('o', { approvalId: '', decision: 'allow', source: 'confirmation-off', outcome: 'executed', result: 'ran' }),
      ],
    });
    expect(['d', 'g', 't', 'c', 'i', 'o'].map((id) => historyCall(state, `history:1:${id}`))).toStrictEqual([
      { status: 'denied', reason: 'not now', result: 'denied: not now' },
      { status: 'done', approvedBy: 'grant', result: 'a.txt' },
      { status: 'timed-out', result: 'no decision' },
      { status: 'cancelled', result: 'cancelled' },
      { status: 'interrupted', result: 'interrupted' },
      { status: 'done', approvedBy: 'no-confirmation', result: 'ran' },
    ]);
  });

  it('matches rows to calls by run when a call id comes back in a later run', () => {
    const messages = [...turn(['c1']), ...turn(['c1'])];
    const state = load({
      messages,
      runIds: ['run_a', 'run_a', 'run_a', 'run_b', 'run_b', 'run_b'],
      toolCalls: [
        record('c1', { runId: 'run_a', decision: 'deny', source: 'user', outcome: 'denied', result: 'no' }),
        record('c1', { runId: 'run_b', decision: 'allow', source: 'user', outcome: 'executed', result: 'yes' }),
      ],
    });
    expect([historyCall(state, 'history:1:c1'), historyCall(state, 'history:4:c1')]).toStrictEqual([
      { status: 'denied', reason: null, result: 'no' },
      { status: 'done', approvedBy: 'you', result: 'yes' },
    ]);
  });

  it('never shows another run’s row on a call whose own row was left out as damaged, whatever runs reuse its id', () => {
    const messages: StoredMessage[] = [
      { role: 'user', content: 'list' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_0', name: 'terminal', arguments: { command: 'ls' } }] },
      { role: 'tool', toolCallId: 'call_0', toolName: 'terminal', content: 'The person denied this call.' },
      { role: 'user', content: 'delete it' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_0', name: 'terminal', arguments: { command: 'rm -rf build' } }] },
      { role: 'tool', toolCallId: 'call_0', toolName: 'terminal', content: 'exit code: 0' },
    ];
    const runIds = ['r1', 'r1', 'r1', 'r2', 'r2', 'r2'];
    // Run 1's row did not read: the page holds run 2's only.
    const toolCalls = [record('call_0', { runId: 'r2', arguments: { command: 'rm -rf build' }, editedArguments: { command: 'rm -rf build/cache' }, decision: 'allow', source: 'user', outcome: 'executed', result: 'exit code: 0' })];
    const calls = (items: readonly ChatItem[]) => items.flatMap((item) => (item.kind === 'tool' ? [{ arguments: item.call.arguments, edited: item.call.editedArguments ?? null, state: item.call.state }] : []));
    const leftOut = ['the decision of call call_0 of run r1: "allox" is none of allow, deny, timeout, cancel'];
    const leftOutCalls = [{ runId: 'r1', toolCallId: 'call_0' }];
    const expected = [
      { arguments: { command: 'ls' }, edited: null, state: { status: 'unreadable', result: 'The person denied this call.' } },
      { arguments: { command: 'rm -rf build' }, edited: { command: 'rm -rf build/cache' }, state: { status: 'done', approvedBy: 'you', result: 'exit code: 0' } },
    ];
    expect(calls(load({ messages, runIds, toolCalls, leftOut, leftOutCalls }).items)).toStrictEqual(expected);
    expect(calls(earlierItems(0, { messages, runIds, toolCalls, leftOutCalls }))).toStrictEqual(expected);
  });

  it('marks as damaged only the calls whose own row was left out, not every call with no row on a page that left something out', () => {
    const messages: StoredMessage[] = [
      { role: 'user', content: 'list' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_0', name: 'terminal', arguments: { command: 'ls' } }] },
      { role: 'tool', toolCallId: 'call_0', toolName: 'terminal', content: 'listed' },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: '', toolCalls: ['call_0', 'call_1'].map((id) => ({ id, name: 'terminal', arguments: { command: 'pwd' } })) },
      { role: 'tool', toolCallId: 'call_0', toolName: 'terminal', content: 'denied' },
      { role: 'tool', toolCallId: 'call_1', toolName: 'terminal', content: 'ran' },
    ];
    const runIds = ['r1', 'r1', 'r1', 'r2', 'r2', 'r2', 'r2'];
    // Run 2's call_0 row did not read, and a message of the chat was left out too; run 1's call and run 2's call_1
    // have no row on the page, as a call stored before the ledger has none.
    const leftOut = ['the decision of call call_0 of run r2: "allox" is none of allow, deny, timeout, cancel', 'a message of chat chat_1: role: Invalid input'];
    const leftOutCalls = [{ runId: 'r2', toolCallId: 'call_0' }];
    const statuses = (items: readonly ChatItem[]) => items.flatMap((item) => (item.kind === 'tool' ? [item.call.state] : []));
    const expected = [
      { status: 'recorded', result: 'listed' },
      { status: 'unreadable', result: 'denied' },
      { status: 'recorded', result: 'ran' },
    ];
    expect(statuses(load({ messages, runIds, toolCalls: [], leftOut, leftOutCalls }).items)).toStrictEqual(expected);
    expect(statuses(earlierItems(0, { messages, runIds, toolCalls: [], leftOutCalls }))).toStrictEqual(expected);
  });

  it('marks a call whose result the chat does not hold before its next message: the model was told it has none', () => {
    const messages: StoredMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: ['c1', 'c2'].map((id) => ({ id, name: 'terminal', arguments: { command: 'ls' } })) },
      // c1's result was left out as damaged.
      { role: 'tool', toolCallId: 'c2', toolName: 'terminal', content: 'told c2' },
      { role: 'assistant', content: 'Both ran.' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c3', name: 'terminal', arguments: { command: 'ls' } }] },
    ];
    const toolCalls = ['c1', 'c2', 'c3'].map((id) => record(id, { decision: 'allow', source: 'user', outcome: id === 'c3' ? null : 'executed', result: id === 'c3' ? null : `ran ${id}` }));
    const state = load({ messages, toolCalls, leftOut: ['a message of chat chat_1: content: Invalid input'] });
    const unknown = state.items.flatMap((item) => (item.kind === 'tool' ? [[item.call.toolCallId, item.call.resultUnknownToModel ?? false]] : []));
    // c3 is the page's last turn: its result may still come.
    expect(unknown).toStrictEqual([['c1', true], ['c2', false], ['c3', false]]);
  });

  it('shows a call the server still waits on as waiting, with its approval id and deadline', () => {
    const messages = turn(['w']).slice(0, 2);
    const state = load({
      messages,
      toolCalls: [record('w', { expiresAt: 5_000 })],
      pending: [{ approvalId: 'apv_w', sessionId: 'chat_1', runId: 'run_0', toolCallId: 'w', toolName: 'terminal', arguments: { command: 'ls' }, requestedAt: 1, expiresAt: 5_000 }],
    });
    expect(historyCall(state, 'history:1:w')).toStrictEqual({ status: 'awaiting-decision', approvalId: 'apv_w', expiresAt: 5_000, problem: null });
    expect(undecidedCalls(state).map((call) => call.toolCallId)).toStrictEqual(['w']);
    const unknown = load({ messages, toolCalls: [record('w', {})] });
    expect(historyCall(unknown, 'history:1:w')).toStrictEqual({ status: 'recorded', result: null });
  });

  it('leaves the turns of the run it follows to that run’s replayed events', () => {
    const state = load({ messages: [...turn(['c1']), { role: 'user', content: 'again' }, { role: 'assistant', content: 'partial' }], follow: RUN });
    expect(state.items.map((item) => item.key)).toStrictEqual(['history:0', 'history:1:c1', `user:${RUN}`]);
    expect(state.items.at(-1)).toStrictEqual({ kind: 'user', key: `user:${RUN}`, text: 'again' });
    expect(state.run?.runId).toBe(RUN);
  });

  it('shows nothing of a page that holds only turns of the run it follows (its message on an earlier page): no card twice', () => {
    const page = turn(['c1', 'c2']).slice(1);
    const state = load({ messages: page, toolCalls: [record('c1', {}), record('c2', {})], follow: RUN });
    expect(state.items).toStrictEqual([]);
    expect(state.run?.runId).toBe(RUN);
  });
});

/** Feeds events with increasing sequence numbers and the person's actions in between, as the hook does. */
class RunFeed {
  private seq = 0;
  constructor(public state: ChatState = follow(RUN, 'run the three commands')) {}

  events(...events: LoopEvent[]): this {
    for (const data of events) this.state = chatReducer(this.state, { type: 'event', runId: RUN, tracked: { id: `${RUN}:${++this.seq}`, data } });
    return this;
  }

  act(...actions: ChatAction[]): this {
    for (const action of actions) this.state = chatReducer(this.state, action);
    return this;
  }

  call(id: string) {
    return callState(this.state, id);
  }

  undecided(): string[] {
    return undecidedCalls(this.state).map((call) => call.toolCallId);
  }
}

describe('chatReducer with several calls up for decision at once', () => {
  const gated = (id: string, toolName: string, args: Record<string, unknown>, expiresAt: number): LoopEvent => ({
    type: 'tool-start',
    toolCallId: id,
    toolName,
    arguments: args,
    approvalId: `apv_${id}`,
    awaitingConfirmation: true,
    expiresAt,
  });
  const waiting = (id: string, expiresAt: number) => ({ status: 'awaiting-decision', approvalId: `apv_${id}`, expiresAt, problem: null });
  const terminalBatch: LoopEvent[] = [
    { type: 'status', text: 'Calling: terminal' },
    gated('c1', 'terminal', { command: 'echo one' }, 1_000_001),
    { type: 'status', text: 'Calling: terminal' },
    gated('c2', 'terminal', { command: 'echo two' }, 1_000_002),
    { type: 'status', text: 'Calling: terminal' },
    gated('c3', 'terminal', { command: 'echo three' }, 1_000_003),
  ];
  const sent = (id: string, decision: 'allow' | 'deny'): ChatAction => ({ type: 'decision-sent', key: toolKey(RUN, id), decision });
  const accepted = (id: string, reason?: string): ChatAction => ({ type: 'decision-accepted', key: toolKey(RUN, id), ...(reason === undefined ? {} : { reason }) });
  const allowed = (id: string, source: 'user' | 'grant' = 'user'): LoopEvent => ({ type: 'tool-decision', toolCallId: id, approvalId: `apv_${id}`, decision: 'allow', source });
  const ended = (id: string, outcome: 'executed' | 'denied', result: string): LoopEvent => ({ type: 'tool-end', toolCallId: id, toolName: 'terminal', outcome, result });

  it('shows every call of the turn waiting, each with its own approval id and timeout, in model order', () => {
    const feed = new RunFeed().events(...terminalBatch);
    expect(feed.state.items.map((item) => (item.kind === 'tool' ? item.call.arguments : item.kind))).toStrictEqual([
      'user',
      { command: 'echo one' },
      { command: 'echo two' },
      { command: 'echo three' },
    ]);
    expect([feed.call('c1'), feed.call('c2'), feed.call('c3')]).toStrictEqual([waiting('c1', 1_000_001), waiting('c2', 1_000_002), waiting('c3', 1_000_003)]);
    expect(feed.undecided()).toStrictEqual(['c1', 'c2', 'c3']);
  });

  it('shows a decision for the last call at once, and runs it only after every call before it ended', () => {
    const feed = new RunFeed().events(...terminalBatch, allowed('c3'));
    expect([feed.call('c1'), feed.call('c2'), feed.call('c3')]).toStrictEqual([waiting('c1', 1_000_001), waiting('c2', 1_000_002), { status: 'allowed', approvedBy: 'you' }]);
    expect(feed.undecided()).toStrictEqual(['c1', 'c2']);

    feed.events(allowed('c1'));
    expect([feed.call('c1'), feed.call('c3')]).toStrictEqual([{ status: 'running', approvedBy: 'you' }, { status: 'allowed', approvedBy: 'you' }]);

    // The first call's end does not make the third one run: the second has not even been decided.
    feed.events(ended('c1', 'executed', 'one'));
    expect([feed.call('c1'), feed.call('c2'), feed.call('c3')]).toStrictEqual([
      { status: 'done', approvedBy: 'you', result: 'one' },
      waiting('c2', 1_000_002),
      { status: 'allowed', approvedBy: 'you' },
    ]);

    feed.events(allowed('c2'));
    expect([feed.call('c2'), feed.call('c3')]).toStrictEqual([{ status: 'running', approvedBy: 'you' }, { status: 'allowed', approvedBy: 'you' }]);
    feed.events(ended('c2', 'executed', 'two'));
    expect(feed.call('c3')).toStrictEqual({ status: 'running', approvedBy: 'you' });
    feed.events(ended('c3', 'executed', 'three'));
    expect(feed.call('c3')).toStrictEqual({ status: 'done', approvedBy: 'you', result: 'three' });
  });

  it('keeps an allowed call waiting after the first call ends until the one between them ends too', () => {
    const feed = new RunFeed().events(...terminalBatch, allowed('c1'), allowed('c3'), ended('c1', 'executed', 'one'));
    expect([feed.call('c2'), feed.call('c3')]).toStrictEqual([waiting('c2', 1_000_002), { status: 'allowed', approvedBy: 'you' }]);

    // Denied, so it will not run, but the run is not past it until its tool-end.
    feed.events({ type: 'tool-decision', toolCallId: 'c2', approvalId: 'apv_c2', decision: 'deny', source: 'user', reason: 'not that one' });
    expect([feed.call('c2'), feed.call('c3')]).toStrictEqual([{ status: 'denied', reason: 'not that one', result: null }, { status: 'allowed', approvedBy: 'you' }]);

    feed.events(ended('c2', 'denied', 'declined: not that one'));
    expect([feed.call('c2'), feed.call('c3')]).toStrictEqual([
      { status: 'denied', reason: 'not that one', result: 'declined: not that one' },
      { status: 'running', approvedBy: 'you' },
    ]);
  });

  it('shows a deny, timeout or cancel of a later call at once, before the calls ahead of it are decided', () => {
    const feed = new RunFeed().events(
      ...terminalBatch,
      { type: 'tool-decision', toolCallId: 'c3', approvalId: 'apv_c3', decision: 'deny', source: 'user', reason: 'no' },
      { type: 'tool-decision', toolCallId: 'c2', approvalId: 'apv_c2', decision: 'timeout', source: 'system' },
    );
    expect([feed.call('c1'), feed.call('c2'), feed.call('c3')]).toStrictEqual([
      waiting('c1', 1_000_001),
      { status: 'timed-out', result: null },
      { status: 'denied', reason: 'no', result: null },
    ]);
    expect(feed.undecided()).toStrictEqual(['c1']);
    feed.events({ type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_c1', decision: 'cancel', source: 'user' });
    expect(feed.call('c1')).toStrictEqual({ status: 'cancelled', result: null });
  });

  it('shows the person their own decision when the server takes it before the run reports it', () => {
    const feed = new RunFeed().events(...terminalBatch, allowed('c1'));
    // The run reports decisions only while it waits on one: with the first call running, these come later.
    feed.act(sent('c3', 'allow'), accepted('c3'), sent('c2', 'deny'), accepted('c2', 'not that one'));
    expect([feed.call('c1'), feed.call('c2'), feed.call('c3')]).toStrictEqual([
      { status: 'running', approvedBy: 'you' },
      { status: 'denied', reason: 'not that one', result: null },
      { status: 'allowed', approvedBy: 'you' },
    ]);
    expect(feed.undecided()).toStrictEqual([]);

    feed.events(ended('c1', 'executed', 'one'), { type: 'tool-decision', toolCallId: 'c2', approvalId: 'apv_c2', decision: 'deny', source: 'user', reason: 'not that one' });
    expect(feed.call('c3')).toStrictEqual({ status: 'allowed', approvedBy: 'you' });
    feed.events(ended('c2', 'denied', 'declined'), allowed('c3'));
    expect([feed.call('c2'), feed.call('c3')]).toStrictEqual([
      { status: 'denied', reason: 'not that one', result: 'declined' },
      { status: 'running', approvedBy: 'you' },
    ]);
  });

  it('runs an allowed call at once when the server takes it while the run waits on that very call', () => {
    const feed = new RunFeed().events(...terminalBatch, allowed('c1'), ended('c1', 'executed', 'one'));
    feed.act(sent('c2', 'allow'), accepted('c2'));
    expect(feed.call('c2')).toStrictEqual({ status: 'running', approvedBy: 'you' });
    feed.events(allowed('c2'));
    expect([feed.call('c2'), feed.call('c3')]).toStrictEqual([{ status: 'running', approvedBy: 'you' }, waiting('c3', 1_000_003)]);
  });

  it('does not show a batch call as running while it is still being announced', () => {
    const feed = new RunFeed().events(terminalBatch[1]!).act(sent('c1', 'allow'), accepted('c1'));
    expect(feed.call('c1')).toStrictEqual({ status: 'allowed', approvedBy: 'you' });
    feed.events(terminalBatch[3]!, allowed('c1'));
    expect([feed.call('c1'), feed.call('c2')]).toStrictEqual([{ status: 'running', approvedBy: 'you' }, waiting('c2', 1_000_002)]);
  });

  it('runs a call that starts at its own turn ahead of the allowed batch calls announced before it', () => {
    // The model asked for a granted read_file first, then two gated commands: the commands are announced first.
    const feed = new RunFeed().events(gated('c1', 'terminal', { command: 'echo one' }, 1_000_001), gated('c2', 'terminal', { command: 'echo two' }, 1_000_002));
    feed.act(sent('c1', 'allow'), accepted('c1'));
    feed.events(
      { type: 'tool-start', toolCallId: 'r0', toolName: 'read_file', arguments: { path: 'a.txt' }, approvalId: '', awaitingConfirmation: false },
      { type: 'tool-decision', toolCallId: 'r0', approvalId: '', decision: 'allow', source: 'grant' },
    );
    expect([feed.call('r0'), feed.call('c1')]).toStrictEqual([{ status: 'running', approvedBy: 'grant' }, { status: 'allowed', approvedBy: 'you' }]);
    feed.events(ended('r0', 'executed', 'alpha'));
    expect([feed.call('r0'), feed.call('c1')]).toStrictEqual([{ status: 'done', approvedBy: 'grant', result: 'alpha' }, { status: 'running', approvedBy: 'you' }]);
  });

  it('runs a repeated call asked about at its own turn, while a later batch call waits', () => {
    const feed = new RunFeed().events(gated('c1', 'terminal', { command: 'echo one' }, 1_000_001), gated('c3', 'terminal', { command: 'echo three' }, 1_000_003), allowed('c3'));
    feed.events({ type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_c1', decision: 'deny', source: 'user' }, ended('c1', 'denied', 'declined'));
    // The model repeated the first call; that one is asked about only now, after the first was denied.
    feed.events(gated('c2', 'terminal', { command: 'echo one' }, 1_000_002), allowed('c2'));
    expect([feed.call('c2'), feed.call('c3')]).toStrictEqual([{ status: 'running', approvedBy: 'you' }, { status: 'allowed', approvedBy: 'you' }]);
    feed.events(ended('c2', 'executed', 'one'));
    expect(feed.call('c3')).toStrictEqual({ status: 'running', approvedBy: 'you' });
  });

  it('rebuilds the same calls when the whole event list is replayed after a reload', () => {
    const events: LoopEvent[] = [...terminalBatch, allowed('c3'), { type: 'tool-decision', toolCallId: 'c2', approvalId: 'apv_c2', decision: 'deny', source: 'user' }];
    const live = new RunFeed().events(...terminalBatch).act(sent('c3', 'allow'));
    live.events(events[6]!).act(accepted('c3'), sent('c2', 'deny'), accepted('c2'));
    live.events(events[7]!);
    const replayAll = (upTo: LoopEvent[]) => {
      const reloaded = chatReducer(initialChatState, { type: 'history-loaded', history: { messages: [], runIds: [], toolCalls: [], pending: [], follow: RUN } });
      return new RunFeed(reloaded).events(...upTo).state;
    };
    const toolItems = (state: ChatState) => state.items.filter((item) => item.kind === 'tool');

    let replayed = replayAll(events);
    expect(toolItems(replayed)).toStrictEqual(toolItems(live.state));
    expect(replayed.run).toStrictEqual(live.state.run);
    expect(undecidedCalls(replayed).map((call) => call.toolCallId)).toStrictEqual(['c1']);

    const rest: LoopEvent[] = [allowed('c1'), ended('c1', 'executed', 'one'), ended('c2', 'denied', 'declined')];
    live.events(...rest);
    replayed = replayAll([...events, ...rest]);
    expect(toolItems(replayed)).toStrictEqual(toolItems(live.state));
    expect([live.call('c1'), live.call('c2'), live.call('c3')]).toStrictEqual([
      { status: 'done', approvedBy: 'you', result: 'one' },
      { status: 'denied', reason: null, result: 'declined' },
      { status: 'running', approvedBy: 'you' },
    ]);
  });

  it('moves a call on when its tool-decision arrives before the answer to the decision', () => {
    const feed = new RunFeed().events(...terminalBatch).act(sent('c1', 'allow'));
    feed.events({ type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_c1', decision: 'allow', source: 'user' });
    const before = feed.state;
    expect(feed.act(accepted('c1')).state).toBe(before);
    expect(feed.call('c1')).toStrictEqual({ status: 'running', approvedBy: 'you' });
  });

  it('ignores an accepted decision for a call that was not being decided', () => {
    const feed = new RunFeed().events(...terminalBatch);
    const before = feed.state;
    expect(feed.act(accepted('c2')).state).toBe(before);
  });

  it('denies every call with Deny all and runs none', () => {
    const feed = new RunFeed().events(...terminalBatch.slice(0, 4));
    feed.act(...feed.undecided().flatMap((id) => [sent(id, 'deny'), accepted(id)]));
    expect([feed.call('c1'), feed.call('c2')]).toStrictEqual([
      { status: 'denied', reason: null, result: null },
      { status: 'denied', reason: null, result: null },
    ]);
    feed.events(
      { type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_c1', decision: 'deny', source: 'user' },
      { type: 'tool-end', toolCallId: 'c1', toolName: 'terminal', outcome: 'denied', result: 'declined' },
      { type: 'tool-decision', toolCallId: 'c2', approvalId: 'apv_c2', decision: 'deny', source: 'user' },
      { type: 'tool-end', toolCallId: 'c2', toolName: 'terminal', outcome: 'denied', result: 'declined' },
    );
    expect([feed.call('c1'), feed.call('c2')]).toStrictEqual([
      { status: 'denied', reason: null, result: 'declined' },
      { status: 'denied', reason: null, result: 'declined' },
    ]);
    expect(feed.undecided()).toStrictEqual([]);
  });

  it('shows a later call released by the grant given on the first as allowed by the grant', () => {
    const feed = new RunFeed().events(
      gated('r1', 'read_file', { path: 'a.txt' }, 1_000_001),
      gated('r2', 'read_file', { path: 'b.txt' }, 1_000_002),
    );
    feed.act(sent('r1', 'allow'), accepted('r1'));
    // The server released it already, but only its tool-decision tells the page.
    expect(feed.call('r2')).toStrictEqual(waiting('r2', 1_000_002));
    feed.events(allowed('r1'), allowed('r2', 'grant'));
    expect([feed.call('r1'), feed.call('r2')]).toStrictEqual([{ status: 'running', approvedBy: 'you' }, { status: 'allowed', approvedBy: 'grant' }]);
    feed.events({ type: 'tool-end', toolCallId: 'r1', toolName: 'read_file', outcome: 'executed', result: 'alpha' });
    expect(feed.call('r2')).toStrictEqual({ status: 'running', approvedBy: 'grant' });
    feed.events({ type: 'tool-end', toolCallId: 'r2', toolName: 'read_file', outcome: 'executed', result: 'beta' });
    expect([feed.call('r1'), feed.call('r2')]).toStrictEqual([
      { status: 'done', approvedBy: 'you', result: 'alpha' },
      { status: 'done', approvedBy: 'grant', result: 'beta' },
    ]);
    expect(feed.undecided()).toStrictEqual([]);
  });

  it('ends every waiting and allowed call of the batch when the run is stopped', () => {
    const feed = new RunFeed().events(...terminalBatch).act(sent('c3', 'allow'), accepted('c3'));
    expect(feed.call('c3')).toStrictEqual({ status: 'allowed', approvedBy: 'you' });
    feed.events(
      { type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_c1', decision: 'cancel', source: 'user' },
      { type: 'tool-end', toolCallId: 'c1', toolName: 'terminal', outcome: 'cancelled', result: 'cancelled' },
      { type: 'tool-decision', toolCallId: 'c2', approvalId: 'apv_c2', decision: 'cancel', source: 'user' },
      { type: 'tool-end', toolCallId: 'c2', toolName: 'terminal', outcome: 'cancelled', result: 'cancelled' },
      { type: 'tool-decision', toolCallId: 'c3', approvalId: 'apv_c3', decision: 'allow', source: 'user' },
      { type: 'tool-end', toolCallId: 'c3', toolName: 'terminal', outcome: 'cancelled', result: 'cancelled' },
      { type: 'run-end', runId: RUN, reason: 'cancelled' },
    );
    expect([feed.call('c1'), feed.call('c2'), feed.call('c3')]).toStrictEqual([
      { status: 'cancelled', result: 'cancelled' },
      { status: 'cancelled', result: 'cancelled' },
      { status: 'cancelled', result: 'cancelled' },
    ]);
    expect(feed.undecided()).toStrictEqual([]);
    expect(feed.state.run?.phase).toBe('ended');
  });
});
