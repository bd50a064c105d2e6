import { renderHook } from '@testing-library/react';
import { TRPCClientError } from '@trpc/client';
import type { AppRouter } from '@airlock/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AnswerUnknownError } from '@airlock/client';
import { clearAnswerHolds, heldFor } from '../chat/answer-holds';
import { tabDecisions } from '../chat/tab-decisions';
import { useDecideWaiting } from './use-decide-waiting';

const mutate = vi.fn<(input: unknown) => Promise<unknown>>();

vi.mock('../lib/trpc', () => ({
  trpc: {
    useUtils: () => ({
      client: { chat: { confirmTool: { mutate } } },
      chat: { pending: { invalidate: () => Promise.resolve() } },
      sessions: { get: { invalidate: () => Promise.resolve() } },
    }),
  },
}));

afterEach(() => {
  tabDecisions.clear();
  clearAnswerHolds();
  mutate.mockReset();
});

function serverError(code: string, message: string): TRPCClientError<AppRouter> {
  return TRPCClientError.from<AppRouter>({ id: 1, error: { code: -32000, message, data: { code, httpStatus: 400, path: 'chat.confirmTool', zodError: null } } });
}

describe('a decision sent from the Waiting list', () => {
  it('is kept as refused when the server refused it, as failed when the server failed on it, and as unanswered only when no answer came', async () => {
    const { result } = renderHook(() => useDecideWaiting());
    const decide = (approvalId: string, error: Error) => {
      mutate.mockRejectedValueOnce(error);
      return result.current.decide({ sessionId: 's1', approvalId, decision: 'allow' });
    };
    await decide('apv_late', serverError('TIMEOUT', 'notAfter: the decision came 40 ms after its deadline'));
    await decide('apv_failed', serverError('INTERNAL_SERVER_ERROR', 'internal error'));
    await decide('apv_lost', new Error('the connection closed before an answer'));
    expect(['apv_late', 'apv_failed', 'apv_lost'].map((id) => tabDecisions.get(id)?.outcome)).toStrictEqual(['refused', 'failed', 'unanswered']);
  });

  it('answers whether the decision was taken, and why not in words to show: a notification says them', async () => {
    const { result } = renderHook(() => useDecideWaiting());
    const decide = (approvalId: string) => result.current.decide({ sessionId: 's1', approvalId, decision: 'deny' });
    mutate.mockResolvedValueOnce({ resolved: true });
    await expect(decide('apv_taken')).resolves.toStrictEqual({ taken: true });
    mutate.mockResolvedValueOnce({ resolved: false, status: 'already-decided', decision: 'allow' });
    await expect(decide('apv_elsewhere')).resolves.toStrictEqual({ taken: false, why: 'it was decided already elsewhere (allowed)' });
    mutate.mockResolvedValueOnce({ resolved: false, status: 'not-found' });
    await expect(decide('apv_gone')).resolves.toStrictEqual({ taken: false, why: 'the call waits no more: it was decided, stopped or ended, or this server does not know it' });
    mutate.mockRejectedValueOnce(new Error('the connection closed before an answer'));
    await expect(decide('apv_lost')).resolves.toStrictEqual({ taken: false, why: 'the connection closed before an answer' });
  });

  // Found in review: the card held its buttons after a decision whose connection went, but Waiting for you and a
  // notification still sent a second one, which the first could overtake when a frozen server read it late.
  it('sends no second decision on a call while one whose connection went may still be applied, by any way of deciding', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { result } = renderHook(() => useDecideWaiting());
      mutate.mockRejectedValueOnce(TRPCClientError.from<AppRouter>(new AnswerUnknownError('the connection closed before the answer came', 5_000)));
      await result.current.decide({ sessionId: 's1', approvalId: 'apv_held', decision: 'allow' });
      await expect(result.current.decide({ sessionId: 's1', approvalId: 'apv_held', decision: 'deny' })).resolves.toStrictEqual({
        taken: false,
        why: 'an earlier decision on this call lost its connection and may still be applied in the next 5 s: it is shown if it is; decide again once that time has passed',
      });
      expect(mutate).toHaveBeenCalledTimes(1);
      expect(heldFor('apv_held')).toBe(5_000);
      // Another call is not held.
      mutate.mockResolvedValueOnce({ resolved: true });
      await expect(result.current.decide({ sessionId: 's1', approvalId: 'apv_other', decision: 'deny' })).resolves.toStrictEqual({ taken: true });

      vi.setSystemTime(Date.now() + 5_001);
      mutate.mockResolvedValueOnce({ resolved: true });
      await expect(result.current.decide({ sessionId: 's1', approvalId: 'apv_held', decision: 'deny' })).resolves.toStrictEqual({ taken: true });
      expect(mutate).toHaveBeenCalledTimes(3);
    } finally {
      vi.useRealTimers();
    }
  });
});
