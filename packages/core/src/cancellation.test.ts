import { describe, expect, it } from 'vitest';
import { ApprovalRegistry } from './approval-registry';
import { Cancellation, linkedController } from './cancellation';

describe('Cancellation', () => {
  it('calls each listener once, in the order added, and only on the first cancel', () => {
    const cancellation = new Cancellation();
    const calls: string[] = [];
    const first = () => calls.push('first');
    const second = { handleEvent: () => calls.push('second') };
    cancellation.addEventListener('abort', first);
    cancellation.addEventListener('abort', second);
    cancellation.addEventListener('abort', first);

    cancellation.cancel('stop');
    cancellation.cancel('again');

    expect(calls).toEqual(['first', 'second']);
    expect(cancellation.aborted).toBe(true);
    expect(cancellation.reason).toBe('stop');
  });

  it('does not call a removed listener, nor one added after the cancel', () => {
    const cancellation = new Cancellation();
    const calls: string[] = [];
    const removed = () => calls.push('removed');
    cancellation.addEventListener('abort', removed);
    cancellation.removeEventListener('abort', removed);
    cancellation.cancel();
    cancellation.addEventListener('abort', () => calls.push('late'));

    expect(calls).toEqual([]);
    expect(cancellation.reason).toBeInstanceOf(DOMException);
    expect((cancellation.reason as DOMException).name).toBe('AbortError');
  });

  it('runs every listener even when one throws, then throws the first error', () => {
    const cancellation = new Cancellation();
    const calls: string[] = [];
    cancellation.addEventListener('abort', () => {
      throw new Error('first broke');
    });
    cancellation.addEventListener('abort', () => calls.push('second'));
    cancellation.addEventListener('abort', () => {
      throw new Error('third broke');
    });
    expect(() => cancellation.cancel()).toThrow('first broke');
    expect(calls).toEqual(['second']);
    expect(cancellation.aborted).toBe(true);
  });

  it('ends a pending approval wait as cancel, like an AbortSignal', async () => {
    const registry = new ApprovalRegistry();
    const cancellation = new Cancellation();
    const ticket = registry.register({ sessionId: 's', runId: 'r', toolCallId: 'c', toolName: 't', arguments: {}, executesCode: false, toolVersion: 'v' });
    const outcome = ticket.wait(cancellation);
    cancellation.cancel();
    expect(await outcome).toEqual({ decision: 'cancel', source: 'user' });
    expect(registry.pendingCount).toBe(0);
  });
});

describe('linkedController', () => {
  it('aborts its AbortController with the reason when the signal cancels, until released', () => {
    const cancellation = new Cancellation();
    const linked = linkedController(cancellation);
    const released = linkedController(cancellation);
    released.release();

    cancellation.cancel('stop');

    expect(linked.controller.signal.aborted).toBe(true);
    expect(linked.controller.signal.reason).toBe('stop');
    expect(released.controller.signal.aborted).toBe(false);
  });

  it('starts aborted under a signal that already has', () => {
    const controller = new AbortController();
    controller.abort('gone');
    const linked = linkedController(controller.signal);
    expect(linked.controller.signal.aborted).toBe(true);
    expect(linked.controller.signal.reason).toBe('gone');
  });
});
