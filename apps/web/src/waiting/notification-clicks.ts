/** What the notification worker posts to one tab when a notification is clicked, with a port for the answer. */
export interface NotificationClick {
  type: 'airlock-notification-click';
  action: 'allow' | 'deny' | 'open';
  approvalId: string;
  sessionId: string;
  /**
   * The `Date.now()` after which the click decides nothing, set by the worker as it is clicked: past it, the worker no
   * longer waits for this tab's answer. A click without one (a worker from before it) counts as past it. Read only for
   * a worker that does not answer `asks`: a wall clock can be set back (by hand, or a time sync), and a click read an
   * hour late would then look just made.
   */
  notAfter: number;
  /**
   * The worker answers, on the click's port, how long the click has left (`IN_TIME_QUESTION`): measured on its own
   * steady clock (`performance.now()`) from the click, which no change of the wall clock moves.
   */
  asks: boolean;
}

/** What a tab posts on a click's port, with a port for the answer: how long has this click left? */
export const IN_TIME_QUESTION = 'airlock-notification-in-time';

/**
 * How long a tab waits for the worker's answer to `IN_TIME_QUESTION`: none by then (the worker gave up on the click and
 * is gone), the click is taken as past its time.
 */
export const IN_TIME_WAIT_MS = 2_000;

/**
 * Whether a click may still decide. The worker that stamped it says how long it had left when it read the question,
 * on its steady clock; this tab counts, on its own, how long the answer took to come (at least the time from its
 * question to the worker's reading): in time only when that is less. Each measure is taken in one context with
 * `performance.now()`, so a wall clock set back on either side changes nothing. A worker from before it has its click
 * read against `notAfter` (the wall clock, as before).
 */
function stillInTime(click: NotificationClick, port: MessagePort | undefined): Promise<boolean> {
  if (!click.asks || port === undefined) return Promise.resolve(Date.now() <= click.notAfter);
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    const asked = performance.now();
    const timer = setTimeout(() => {
      channel.port1.close();
      resolve(false);
    }, IN_TIME_WAIT_MS);
    channel.port1.onmessage = (event: MessageEvent<unknown>) => {
      clearTimeout(timer);
      channel.port1.close();
      const { leftMs } = (typeof event.data === 'object' && event.data !== null ? event.data : {}) as { leftMs?: unknown };
      resolve(typeof leftMs === 'number' && performance.now() - asked < leftMs);
    };
    port.postMessage({ type: IN_TIME_QUESTION }, [channel.port2]);
  });
}

/**
 * What a tab answers the worker about a click: done (`focus`: bring this tab to the front), or why the call was not
 * decided, which the worker shows as a notification of its own.
 */
export type ClickAnswer = { done: true; focus: boolean } | { done: false; why: string; focus: boolean };

export type ClickHandler = (click: NotificationClick) => Promise<ClickAnswer>;

/**
 * The answer of a tab that shows no chats: the server turned its access away (restarted on a new address, or with
 * another token) and it shows the sign-in screen.
 */
export const SIGNED_OUT_ANSWER: ClickAnswer = {
  done: false,
  why: 'Not decided: this tab of Airlock is signed out (the server restarted on a new address or with another token). Sign in again with the link the server printed, then decide the call in Waiting for you.',
  focus: true,
};

let current: ClickHandler | null = null;

/** Makes `handler` answer the clicks this page hears, until the function returned is called. */
export function handleNotificationClicks(handler: ClickHandler): () => void {
  current = handler;
  return () => {
    if (current === handler) current = null;
  };
}

/**
 * Answers every click the worker posts to this page, for the page's life: a click must do what it says or say why
 * not, never nothing. An old notification's Allow reached a tab showing the sign-in screen (the server had restarted
 * on a new address), whose chats, and with them the only listener, were gone; without a handler the answer is
 * SIGNED_OUT_ANSWER.
 */
export function answerNotificationClicks(container: Pick<EventTarget, 'addEventListener' | 'removeEventListener'>): () => void {
  const onMessage = (event: Event) => {
    const { data, ports } = event as MessageEvent<unknown>;
    const heard = notificationClickOf(data);
    const port = ports[0];
    if (heard === null) return;
    // A tab frozen in the background (or busy) can read a click long after it was made, once the worker has stopped
    // waiting for its answer and told the person the call may not be decided: such a click shows the call's card and
    // decides nothing.
    const inTime = heard.action === 'open' ? Promise.resolve(true) : stillInTime(heard, port);
    void inTime
      .then((yes) => {
        const click: NotificationClick = yes ? heard : { ...heard, action: 'open' };
        const handler = current;
        return handler === null ? SIGNED_OUT_ANSWER : handler(click);
      })
      .catch((error: unknown): ClickAnswer => ({ done: false, why: error instanceof Error ? error.message : String(error), focus: true }))
      .then((reply) => port?.postMessage(reply));
  };
  container.addEventListener('message', onMessage);
  return () => container.removeEventListener('message', onMessage);
}

export function notificationClickOf(data: unknown): NotificationClick | null {
  if (typeof data !== 'object' || data === null) return null;
  const { type, action, approvalId, sessionId, notAfter, asks } = data as Record<string, unknown>;
  if (type !== 'airlock-notification-click' || typeof approvalId !== 'string' || typeof sessionId !== 'string') return null;
  if (action !== 'allow' && action !== 'deny' && action !== 'open') return null;
  return { type, action, approvalId, sessionId, notAfter: typeof notAfter === 'number' && Number.isFinite(notAfter) ? notAfter : -Infinity, asks: asks === true };
}
