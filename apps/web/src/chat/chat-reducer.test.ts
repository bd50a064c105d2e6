import { describe, expect, it } from 'vitest';
import type { LoopEvent } from '../lib/api-types';
import { chatReducer, initialChatState, toolKey, undecidedCalls, type ChatAction, type ChatState } from './chat-reducer';

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
    expect(state.run).toStrictEqual({ runId: RUN, phase: 'ended', status: null, lastSeq: 6 });
  });

  it('starts a new assistant turn after a tool call', () => {
    const state = fold([
      { type: 'text-delta', text: 'Listing.' },
      toolStart('c1', false),
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
    const outcomes = ['executed', 'error', 'denied', 'timed-out', 'cancelled', 'disabled', 'duplicate'] as const;
    const statuses = outcomes.map((outcome, index) => {
      const state = fold([toolStart(`c${index}`, false), { type: 'tool-end', toolCallId: `c${index}`, toolName: 'terminal', outcome, result: 'r' }]);
      return callState(state, `c${index}`).status;
    });
    expect(statuses).toStrictEqual(['done', 'error', 'denied', 'timed-out', 'cancelled', 'disabled', 'duplicate']);
  });

  it('marks a call allowed by a grant', () => {
    const state = fold([toolStart('c1', false), { type: 'tool-decision', toolCallId: 'c1', approvalId: '', decision: 'allow', source: 'grant' }]);
    expect(callState(state, 'c1')).toStrictEqual({ status: 'running', approvedBy: 'grant' });
  });

  it('shows timeout and cancel decisions before their tool-end', () => {
    const state = fold([
      toolStart('c1'),
      toolStart('c2'),
      { type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_c1', decision: 'timeout', source: 'user' },
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
      messages: [
        { role: 'system', content: 'ignored' },
        { role: 'user', content: 'list files' },
        { role: 'assistant', content: '', reasoning: 'use ls', toolCalls: [{ id: 'c1', name: 'terminal', arguments: { command: 'ls' } }] },
        { role: 'tool', toolCallId: 'c1', toolName: 'terminal', content: 'a.txt' },
        { role: 'assistant', content: 'There is a.txt.' },
      ],
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
