import { afterEach, describe, expect, it } from 'vitest';
import { answerNotificationClicks, handleNotificationClicks, SIGNED_OUT_ANSWER, type ClickAnswer, type NotificationClick } from './notification-clicks';

const click: NotificationClick = { type: 'airlock-notification-click', action: 'allow', approvalId: 'apv_1', sessionId: 'chat-1', notAfter: Date.now() + 3_600_000 };

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
    const page = new EventTarget();
    stops.push(answerNotificationClicks(page));
    const heard: NotificationClick[] = [];
    stops.push(
      handleNotificationClicks((taken) => {
        heard.push(taken);
        return Promise.resolve({ done: true, focus: true });
      }),
    );
    // The worker stopped waiting for an answer and said the call may not be decided: this tab must not decide it now.
    await post(page, { ...click, notAfter: Date.now() - 1 });
    await post(page, { ...click, action: 'deny', notAfter: undefined });
    await post(page, click);
    expect(heard.map(({ action }) => action)).toStrictEqual(['open', 'open', 'allow']);
  });
});
