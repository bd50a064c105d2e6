import { describe, expect, it } from 'vitest';
import { untilAborted } from './until-aborted';

describe('untilAborted', () => {
  it('gives the promise’s value, or its failure, when it settles first', async () => {
    await expect(untilAborted(Promise.resolve(7), new AbortController().signal)).resolves.toBe(7);
    const failure = new Error('lookup failed');
    await expect(untilAborted(Promise.reject(failure), new AbortController().signal)).rejects.toBe(failure);
  });

  it('throws the signal’s reason at its abort, of a promise that never settles', async () => {
    const controller = new AbortController();
    const waiting = untilAborted(new Promise<never>(() => undefined), controller.signal);
    const reason = new Error('stopped');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });

  it('throws at once on a signal aborted already', async () => {
    const reason = new Error('stopped before');
    await expect(untilAborted(new Promise<never>(() => undefined), AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});
