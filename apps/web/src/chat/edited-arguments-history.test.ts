import { describe, expect, it } from 'vitest';
import type { LoopEvent, ToolCallRecord } from '../lib/api-types';
import { chatReducer, initialChatState, toolKey, type ChatState } from './chat-reducer';
import type { ToolCallView } from './tool-call-state';

const RUN = 'run_1';

function fold(events: LoopEvent[], start: ChatState): ChatState {
  return events.reduce((state, event, index) => chatReducer(state, { type: 'event', runId: RUN, tracked: { id: `${RUN}:${index + 1}`, data: event } }), start);
}

function callOf(state: ChatState, key: string): ToolCallView {
  const item = state.items.find((candidate) => candidate.key === key);
  if (item?.kind !== 'tool') throw new Error(`no tool item ${key}`);
  return item.call;
}

const start: LoopEvent = {
  type: 'tool-start',
  toolCallId: 'c1',
  toolName: 'terminal',
  arguments: { command: 'rm -rf build' },
  approvalId: 'apv_c1',
  awaitingConfirmation: true,
  expiresAt: null,
};

describe('a call the person edited before allowing', () => {
  it('keeps the proposed arguments and takes the edit from the decision event', () => {
    const followed = chatReducer(initialChatState, { type: 'run-followed', runId: RUN, message: 'clean' });
    const state = fold(
      [
        start,
        { type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_c1', decision: 'allow', source: 'user', editedArguments: { command: 'rm -rf build/tmp' } },
        { type: 'tool-end', toolCallId: 'c1', toolName: 'terminal', outcome: 'executed', result: 'The person edited…' },
      ],
      followed,
    );
    const call = callOf(state, toolKey(RUN, 'c1'));
    expect([call.arguments, call.editedArguments, call.state.status]).toStrictEqual([{ command: 'rm -rf build' }, { command: 'rm -rf build/tmp' }, 'done']);
  });

  it('takes the edit from the server answer when it comes before the event, and the event does not undo it', () => {
    const key = toolKey(RUN, 'c1');
    let state = fold([start], chatReducer(initialChatState, { type: 'run-followed', runId: RUN }));
    state = chatReducer(state, { type: 'decision-sent', key, decision: 'allow' });
    expect(callOf(state, key).editedArguments).toBeUndefined();
    state = chatReducer(state, { type: 'decision-accepted', key, editedArguments: { command: 'ls' } });
    expect(callOf(state, key)).toMatchObject({ editedArguments: { command: 'ls' }, state: { status: 'allowed', approvedBy: 'you' } });
    state = fold([{ type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_c1', decision: 'allow', source: 'user' }], state);
    expect(callOf(state, key).editedArguments).toStrictEqual({ command: 'ls' });
  });

  it('shows both versions after a reload, from the ledger', () => {
    const record: ToolCallRecord = {
      runId: 'run_0',
      sessionId: 'chat_1',
      toolCallId: 'c1',
      toolName: 'terminal',
      arguments: { command: 'rm -rf build' },
      editedArguments: { command: 'rm -rf build/tmp' },
      approvalId: 'apv_c1',
      executesCode: true,
      toolVersion: 'v1',
      exactGrantsOnly: false,
      askedBecause: null,
      tool: null,
      requestedAt: 1,
      expiresAt: null,
      decision: 'allow',
      source: 'user',
      reason: null,
      decidedByGrant: null,
      decidedByRule: null,
      decidedByRuleText: null,
      decidedAt: 2,
      connectionId: 'conn',
      clientLabel: 'web',
      startedAt: 3,
      outcome: 'executed',
      result: 'done',
      cut: null,
      endedAt: 4,
    };
    const state = chatReducer(initialChatState, {
      type: 'history-loaded',
      history: {
        messages: [
          { role: 'user', content: 'clean' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'terminal', arguments: { command: 'rm -rf build' } }] },
          { role: 'tool', toolCallId: 'c1', toolName: 'terminal', content: 'done' },
        ],
        runIds: [record.runId, record.runId, record.runId],
        toolCalls: [record, { ...record, toolCallId: 'c2', editedArguments: null }],
        pending: [],
        follow: null,
      },
    });
    expect(callOf(state, 'history:1:c1')).toStrictEqual({
      key: 'history:1:c1',
      runId: null,
      toolCallId: 'c1',
      toolName: 'terminal',
      approvalId: 'apv_c1',
      arguments: { command: 'rm -rf build' },
      editedArguments: { command: 'rm -rf build/tmp' },
      state: { status: 'done', approvedBy: 'you', result: 'done' },
    });
  });
});
