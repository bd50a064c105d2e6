import { afterEach, describe, expect, it } from 'vitest';
import { answerNotificationClicks, handleNotificationClicks, SIGNED_OUT_ANSWER, type ClickAnswer, type NotificationClick } from './notification-clicks';

const click: NotificationClick = { type: 'airlock-notification-click', action: 'allow', approvalId: 'apv_1', sessionId: 'chat-1' };

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
});
