import { describe, expect, it } from 'vitest';
import { markAskedLater } from './asked-later';
import type { ChatItem } from './chat-reducer';
import type { ToolCallState } from './tool-call-state';

const because = { ruleId: 'rule_rm', reason: [{ text: 'Deny commands starting with ' }, { code: 'rm' }] };

function toolItem(key: string, state: ToolCallState): ChatItem {
  return { kind: 'tool', key, call: { key, runId: 'run-1', toolCallId: key, toolName: 'terminal', arguments: { command: key }, state } };
}

describe('markAskedLater', () => {
  const waiting = toolItem('echo rm y', { status: 'awaiting-decision', approvalId: 'a1', expiresAt: null, problem: null });
  const other = toolItem('echo fine', { status: 'awaiting-decision', approvalId: 'a2', expiresAt: null, problem: null });
  const done = toolItem('echo rm z', { status: 'done', result: 'rm z', approvedBy: 'not-asked' });

  it("marks the waiting calls the chat's waiting list names as asked about, with why, and no other", () => {
    const items: ChatItem[] = [{ kind: 'user', key: 'u', text: 'go' }, waiting, other, done];
    const marked = markAskedLater(items, new Map([['a1', because]]));
    expect(marked.map((item) => (item.kind === 'tool' ? [item.call.exactGrantsOnly, item.call.askedBecause] : item.kind))).toStrictEqual([
      'user',
      [true, because],
      [undefined, undefined],
      [undefined, undefined],
    ]);
    expect(items[1]).toBe(waiting);
  });

  it('answers the same items when none is named, so nothing is drawn again', () => {
    const items = [waiting, other];
    expect(markAskedLater(items, new Map())).toBe(items);
    expect(markAskedLater(items, new Map([['gone', because]]))).toBe(items);
  });

  it('leaves a call decided meanwhile as it is, and keeps the why its tool-start gave', () => {
    const given = { ruleId: 'rule_first', reason: [{ text: 'first' }] };
    const started = toolItem('echo rm w', { status: 'awaiting-decision', approvalId: 'a3', expiresAt: null, problem: null });
    if (started.kind === 'tool') started.call.askedBecause = given;
    const [decided, kept] = markAskedLater([done, started], new Map([['a3', because]]));
    expect(decided).toBe(done);
    expect(kept?.kind === 'tool' && [kept.call.exactGrantsOnly, kept.call.askedBecause]).toStrictEqual([true, given]);
  });
});
