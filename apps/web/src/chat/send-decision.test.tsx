import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { TRPCClientError } from '@trpc/client';
import { AnswerUnknownError, SocketError } from '@airlock/client';
import { useReducer } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AppRouter } from '@airlock/api';
import type { LoopEvent, ToolAnnotations } from '../lib/api-types';
import { clearAnswerHolds } from './answer-holds';
import { chatReducer } from './chat-reducer';
import { sendDecision, type DecisionRequest, type SendConfirm } from './send-decision';
import { tabDecisions } from './tab-decisions';
import { ToolCallCard } from './tool-call-card';
import type { ToolCallView } from './tool-call-state';

afterEach(() => {
  cleanup();
  tabDecisions.clear();
  clearAnswerHolds();
});

const terminal: ToolAnnotations = { readOnly: false, destructive: true, executesCode: true, exactGrants: true, idempotent: false, openWorld: false };
const schema = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] };

/** The error the client throws for the server's error answer with this tRPC code, as tRPC's client builds it. */
function serverError(code: string, message: string, httpStatus: number): TRPCClientError<AppRouter> {
  return TRPCClientError.from<AppRouter>({ id: 1, error: { code: -32000, message, data: { code, httpStatus, path: 'chat.confirmTool', zodError: null } } });
}

/** A card of a call waiting in a followed run, wired to the real reducer and sendDecision; `decide` sends as a click would. */
function renderRun(send: SendConfirm) {
  const call: ToolCallView = {
    key: 'tool:run_1:c1',
    runId: 'run_1',
    toolCallId: 'c1',
    toolName: 'terminal',
    approvalId: 'apv_1',
    arguments: { command: 'rm -rf build' },
    state: { status: 'awaiting-decision', approvalId: 'apv_1', expiresAt: null, problem: null },
  };
  const run = { runId: 'run_1', phase: 'following' as const, status: null, lastSeq: 0, announcing: true, startedAtTurn: null };
  let dispatchEvent!: (event: LoopEvent) => void;
  let decide!: (request: DecisionRequest) => Promise<unknown>;
  function RunHarness() {
    const [state, dispatch] = useReducer(chatReducer, { items: [{ kind: 'tool', key: call.key, call }], run, streamError: null });
    dispatchEvent = (data) => dispatch({ type: 'event', runId: 'run_1', tracked: { id: 'run_1:1', data } });
    const item = state.items[0];
    if (item?.kind !== 'tool') return null;
    decide = (request) => sendDecision({ sessionId: 'chat_1', call: item.call, request, send, dispatch });
    return <ToolCallCard call={item.call} annotations={terminal} inputSchema={schema} onDecide={(current, request) => void sendDecision({ sessionId: 'chat_1', call: current, request, send, dispatch })} />;
  }
  render(<RunHarness />);
  return { event: (data: LoopEvent) => act(() => dispatchEvent(data)), decide: (request: DecisionRequest) => act(() => decide(request)) };
}

const buttons = () => within(screen.getByRole('group', { name: 'Decision for terminal' }));

describe('a decision the server refuses', () => {
  // Every refusal confirmTool answers with (packages/api: router.ts, error-mapping.ts and the errors it maps).
  const refusals: { what: string; error: Error; said: string }[] = [
    {
      what: 'past its deadline (notAfter: DecisionPastDeadlineError, TIMEOUT)',
      error: serverError('TIMEOUT', 'notAfter: the decision came 40 ms after its deadline, when its client had stopped waiting for it; it was not applied, and the call still waits', 408),
      said: 'The server refused your decision. It reached the server after this page had stopped waiting for its answer, so it was not applied. The call still waits: try again.',
    },
    {
      what: 'not valid (BAD_REQUEST: the input schema, a rule that cannot be kept)',
      error: serverError('BAD_REQUEST', 'reason: Too big: expected string to have <=2000 characters', 400),
      said: 'The server refused your decision (reason: Too big: expected string to have <=2000 characters). Nothing was applied, and the call still waits: change what the server names, or decide otherwise, and try again.',
    },
    {
      what: 'in conflict with the tool as it is now (ConflictError, CONFLICT)',
      error: serverError('CONFLICT', 'the tool "terminal" is not here as this call\'s card showed it: allow or deny this call alone', 409),
      said: 'The server refused your decision (the tool "terminal" is not here as this call\'s card showed it: allow or deny this call alone). Nothing was applied, and the call still waits: do what the server says, and try again.',
    },
    {
      what: 'over a limit (LimitExceededError, TOO_MANY_REQUESTS)',
      error: serverError('TOO_MANY_REQUESTS', 'the server holds its maximum of 64 connections', 429),
      said: 'The server refused your decision (the server holds its maximum of 64 connections). Nothing was applied, and the call still waits: try again in a moment.',
    },
    {
      what: 'from a page whose credential it refused (UNAUTHORIZED)',
      error: serverError('UNAUTHORIZED', 'a valid access token is required', 401),
      said: 'The server refused your decision (a valid access token is required). Nothing was applied: reload the page, or open Airlock’s start-up link again, then try again.',
    },
    {
      what: 'naming what is gone (NotFoundError, NOT_FOUND)',
      error: serverError('NOT_FOUND', 'session "chat_1" was not found', 404),
      said: 'The server refused your decision (session "chat_1" was not found). Nothing was applied. If this card still shows its buttons, try again; if the run moved on, the card updates by itself.',
    },
    {
      what: 'that it could not store (DecisionNotStoredError, INTERNAL_SERVER_ERROR)',
      error: serverError('INTERNAL_SERVER_ERROR', 'The decision could not be stored (disk full): the call still waits for a decision.', 500),
      said: 'The server failed while taking your decision (The decision could not be stored (disk full): the call still waits for a decision.). If this card still shows its buttons, the call still waits: try again.',
    },
    {
      what: 'on a run paused until its data can be stored (RunPausedError, CONFLICT)',
      error: serverError(
        'CONFLICT',
        'The run run_1 is paused until its data can be stored (disk full). Nothing was decided: the call still waits, and can be decided once Airlock can store again (it tries again by itself).',
        409,
      ),
      said: 'The server refused your decision (The run run_1 is paused until its data can be stored (disk full). Nothing was decided: the call still waits, and can be decided once Airlock can store again (it tries again by itself).). Nothing was applied, and the call still waits: do what the server says, and try again.',
    },
  ];

  it.each(refusals)('says it was refused $what, keeps the buttons, and sends again', async ({ error, said }) => {
    const send = vi.fn<SendConfirm>(() => Promise.reject(error));
    renderRun(send);
    await act(async () => fireEvent.click(buttons().getByRole('button', { name: 'Allow terminal' })));
    expect(screen.getByRole('alert').textContent).toBe(said);
    expect(screen.getByTestId('tool-status').textContent).toBe('Waiting for your decision');
    expect(screen.queryByText(/another tab or client|No answer came|Check the connection/)).toBeNull();
    const allow = buttons().getByRole('button', { name: 'Allow terminal' });
    expect(allow.hasAttribute('disabled')).toBe(false);
    await act(async () => fireEvent.click(allow));
    expect(send).toHaveBeenCalledTimes(2);
  });

  it('shows characters of the server’s words that hide or reorder text as their codes', async () => {
    renderRun(() => Promise.reject(serverError('CONFLICT', 'the tool "evil\u202Etxt.exe" is not here as this call\'s card showed it', 409)));
    await act(async () => fireEvent.click(buttons().getByRole('button', { name: 'Deny terminal' })));
    const said = screen.getByRole('alert').textContent ?? '';
    expect(said).toContain('the tool "evil\\u{202E}txt.exe" is not here');
    expect(said).not.toContain('\u202E');
  });

  it('says no answer came only when none did: the connection went, or the deadline passed first', async () => {
    const lost = new SocketError('the connection closed before an answer, and its deadline has passed: the server does not apply it from now on', undefined, true, true);
    renderRun(() => Promise.reject(TRPCClientError.from<AppRouter>(lost)));
    await act(async () => fireEvent.click(buttons().getByRole('button', { name: 'Deny terminal' })));
    expect(screen.getByRole('alert').textContent).toBe(
      'No answer came to your decision (the connection closed before an answer, and its deadline has passed: the server does not apply it from now on). Check the connection and try again.',
    );
  });

  // Found in review: the card kept its buttons live while a decision whose connection went could still be applied,
  // and a second one sent then could be overtaken by the first (or overtake it): the person decided twice.
  it('after a decision whose connection went, holds the buttons until it can no longer be applied, saying so', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const lost = new AnswerUnknownError('the connection closed before the answer came', 5_000);
      const send = vi.fn(() => Promise.reject(TRPCClientError.from<AppRouter>(lost)));
      renderRun(send);
      const allow = buttons().getByRole('button', { name: 'Allow terminal' });
      await act(async () => fireEvent.click(allow));
      expect(screen.getByRole('alert').textContent).toBe(
        'The connection went before the server answered: your decision may or may not have been applied, or may still be in the next 5 s, and this card shows it if it is. The buttons come back once that time has passed.',
      );
      expect(allow.hasAttribute('disabled')).toBe(true);
      expect(buttons().getByRole('button', { name: 'Deny terminal' }).hasAttribute('disabled')).toBe(true);
      await act(async () => fireEvent.click(buttons().getByRole('button', { name: 'Deny terminal' })));
      expect(send).toHaveBeenCalledTimes(1);

      await act(async () => vi.advanceTimersByTime(5_002));
      expect(allow.hasAttribute('disabled')).toBe(false);
      expect(screen.getByRole('alert').textContent).toContain('Check the connection and try again.');
    } finally {
      vi.useRealTimers();
    }
  });

  it('once the call timed out after a refusal past the deadline, says the server refused it, not that no answer came', async () => {
    const { decide, event } = renderRun(() => Promise.reject(serverError('TIMEOUT', 'notAfter: the decision came 40 ms after its deadline', 408)));
    await decide({ decision: 'allow' });
    event({ type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_1', decision: 'timeout', source: 'system' });
    expect(screen.getByTestId('tool-status').textContent).toBe('Timed out waiting for a decision');
    expect(screen.getByRole('note').textContent).toBe('Your allow was refused by the server and not applied.');
  });

  it('once another client denied a call whose edit failed the tool’s schema, says the edit was refused, not that the other came first', async () => {
    const { decide, event } = renderRun(() => Promise.reject(serverError('BAD_REQUEST', 'arguments: invalid for "terminal": command: Must be text', 400)));
    await decide({ decision: 'allow', arguments: { command: 5 } });
    expect(screen.getByTestId('tool-status').textContent).toBe('Waiting for your decision');
    event({ type: 'tool-decision', toolCallId: 'c1', approvalId: 'apv_1', decision: 'deny', source: 'user', reason: 'cli' });
    expect(screen.getByTestId('tool-status').textContent).toBe('Denied');
    expect(screen.getByRole('note').textContent).toBe('Your allow was refused by the server and not applied.');
    expect(screen.queryByText(/decided in another tab or client first/)).toBeNull();
  });
});
