import { afterEach, describe, expect, it, vi } from 'vitest';
import { answerNotificationClicks, handleNotificationClicks, SIGNED_OUT_ANSWER, type ClickAnswer, type NotificationClick } from './notification-clicks';

const click: NotificationClick = { type: 'airlock-notification-click', action: 'allow', approvalId: 'apv_1', sessionId: 'chat-1', notAfter: Date.now() + 3_600_000, asks: false };

/** Posts `data` to the page as the worker does, with a port, and resolves with what the page answers on it. */
function post(target: EventTarget, data: unknown): Promise<unknown> {
  return new Promise((resolve) => {
    target.dispatchEvent(Object.assign(new Event('message'), { data, ports: [{ postMessage: resolve }] }));
  });
}

const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** A page that answers clicks, its handler taking each one (`heard`, in order) and answering it done, focused. */
function pageDecidingClicks() {
  const page = new EventTarget();
  stops.push(answerNotificationClicks(page));
  const heard: NotificationClick[] = [];
  stops.push(
    handleNotificationClicks((taken) => {
      heard.push(taken);
      return Promise.resolve({ done: true, focus: true });
    }),
  );
  return { page, heard };
}

describe('the answer to a notification click', () => {
  it('says the tab is not signed in when nothing in it handles clicks (its chats are not shown)', async () => {
    const page = new EventTarget();
    stops.push(answerNotificationClicks(page));
    await expect(post(page, click)).resolves.toStrictEqual(SIGNED_OUT_ANSWER);
    expect(SIGNED_OUT_ANSWER).toMatchObject({ done: false, focus: true, why: expect.stringContaining('Sign in again') as unknown });
  });

  it('is the handler’s while one is set, and says why when the handler fails', async () => {
    const page = new EventTarget();
    stops.push(answerNotificationClicks(page));
    const taken: ClickAnswer = { done: true, focus: false };
    const stop = handleNotificationClicks((heard) => Promise.resolve(heard.approvalId === 'apv_1' ? taken : SIGNED_OUT_ANSWER));
    await expect(post(page, click)).resolves.toStrictEqual(taken);
    stop();
    stops.push(handleNotificationClicks(() => Promise.reject(new Error('the socket closed'))));
    await expect(post(page, click)).resolves.toStrictEqual({ done: false, why: 'the socket closed', focus: true });
  });

  it('is the signed-out one again once the handler is gone', async () => {
    const page = new EventTarget();
    stops.push(answerNotificationClicks(page));
    handleNotificationClicks(() => Promise.resolve({ done: true, focus: false }))();
    await expect(post(page, click)).resolves.toStrictEqual(SIGNED_OUT_ANSWER);
  });

  it('shows the call rather than decide it when the click is read after its time (a tab frozen in the background), or carries none', async () => {
    const { page, heard } = pageDecidingClicks();
    // The worker stopped waiting for an answer and said the call may not be decided: this tab must not decide it now.
    await post(page, { ...click, notAfter: Date.now() - 1 });
    await post(page, { ...click, action: 'deny', notAfter: undefined });
    await post(page, click);
    expect(heard.map(({ action }) => action)).toStrictEqual(['open', 'open', 'allow']);
  });

  // Found in review: the tab read the click's time against its own wall clock, so a clock set back after the click (by
  // hand, or a time sync) let a click read long after it decide, as if just made. The worker that stamped the click
  // tells how long it has left on its own steady clock, and the tab counts the wait for that answer on its own.
  it('asks the worker that stamped the click whether it is still in time, whatever the wall clock says', async () => {
    const { page, heard } = pageDecidingClicks();
    /** Posts a click as a worker that answers the tab's question with `leftMs` (none: never answers), then its answer. */
    const clickFrom = (leftMs: number | null, data: Partial<NotificationClick> = {}) =>
      new Promise<{ asked: number; answer: unknown }>((resolve) => {
        const channel = new MessageChannel();
        let asked = 0;
        channel.port1.onmessage = (event: MessageEvent<{ type?: string }>) => {
          if (event.data.type === 'airlock-notification-in-time') {
            asked++;
            if (leftMs !== null) event.ports[0]?.postMessage({ leftMs });
            return;
          }
          channel.port1.close();
          resolve({ asked, answer: event.data });
        };
        // Stamped on a wall clock an hour ahead of this tab's: the clock was set back since the click.
        page.dispatchEvent(new MessageEvent('message', { data: { ...click, notAfter: Date.now() + 3_600_000, asks: true, ...data }, ports: [channel.port2] }));
      });
    // The worker's own clock says the click's time is over: it shows the call, though the wall clock says it is early.
    await expect(clickFrom(-1)).resolves.toStrictEqual({ asked: 1, answer: { done: true, focus: true } });
    await expect(clickFrom(0, { action: 'deny' })).resolves.toMatchObject({ asked: 1 });
    expect(heard.map(({ action }) => action)).toStrictEqual(['open', 'open']);
    // In time, it decides.
    await clickFrom(5_000);
    expect(heard.at(-1)?.action).toBe('allow');
    // A plain click is not asked about: it only shows the call.
    await expect(clickFrom(-1, { action: 'open' })).resolves.toMatchObject({ asked: 0 });
    // A worker that does not answer (it gave up on the click and is gone) has the click taken as past.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const silent = clickFrom(null);
      await vi.waitFor(() => expect(vi.getTimerCount()).toBe(1));
      vi.runOnlyPendingTimers();
      await expect(silent).resolves.toMatchObject({ asked: 1 });
    } finally {
      vi.useRealTimers();
    }
    expect(heard.map(({ action }) => action)).toStrictEqual(['open', 'open', 'allow', 'open', 'open']);
  });
});
