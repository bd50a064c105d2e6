import { renderHook } from '@testing-library/react';
import { TRPCClientError } from '@trpc/client';
import type { AppRouter } from '@airlock/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
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
});
