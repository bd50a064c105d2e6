import { renderHook, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WaitingApproval } from './use-waiting-approvals';
import { useDecisionNotifications, type DecisionNotificationsOptions } from './use-decision-notifications';

vi.mock('../lib/trpc', () => ({ trpc: { useUtils: () => ({ client: { chat: { pending: { query: () => Promise.resolve([]) } } } }) } }));

/** The browser's Notification where no service worker lists them: each one made is kept, with whether it was closed. */
class FakeNotification {
  static permission = 'granted';
  static made: FakeNotification[] = [];
  closed = false;
  onclick: (() => void) | null = null;
  constructor(
    readonly title: string,
    readonly options: { tag: string; body: string },
  ) {
    FakeNotification.made.push(this);
  }
  close(): void {
    this.closed = true;
  }
}

const call = (approvalId: string): WaitingApproval => ({
  approvalId,
  sessionId: 's1',
  runId: 'r1',
  toolCallId: `call_${approvalId}`,
  toolName: 'terminal',
  arguments: { command: `echo ${approvalId}` },
  requestedAt: 1,
  expiresAt: null,
  title: 'chat',
  inputSchema: { type: 'object', properties: { command: { type: 'string' } } },
});

const open = () => FakeNotification.made.filter((notification) => !notification.closed).map((notification) => notification.options.tag);

beforeEach(() => {
  FakeNotification.made = [];
  vi.stubGlobal('Notification', FakeNotification);
  // Without a service worker (none in this environment): the page's own notifications, which no one can list.
  expect('serviceWorker' in navigator).toBe(false);
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
});

afterEach(() => {
  vi.unstubAllGlobals();
  Reflect.deleteProperty(document, 'hidden');
});

function render(waiting: readonly WaitingApproval[]) {
  const options = (list: readonly WaitingApproval[]): DecisionNotificationsOptions => ({
    enabled: true,
    waiting: list,
    connected: true,
    decide: () => Promise.resolve({ taken: true }),
    show: () => undefined,
  });
  return renderHook((list: readonly WaitingApproval[]) => useDecisionNotifications(options(list)), { initialProps: waiting });
}

describe('notifications made without a service worker', () => {
  it('are closed once their call waits no more', async () => {
    const { rerender } = render([call('a'), call('b')]);
    await waitFor(() => expect(open()).toStrictEqual(['a', 'b']));
    rerender([call('b')]);
    await waitFor(() => expect(open()).toStrictEqual(['b']));
  });

  it('are closed as the tab goes, their calls waiting or not', async () => {
    render([call('a')]);
    await waitFor(() => expect(open()).toStrictEqual(['a']));
    window.dispatchEvent(new Event('pagehide'));
    expect(open()).toStrictEqual([]);
  });
});
