import { reasonText } from '@airlock/core';
import { useContext, useEffect, useRef } from 'react';
import { HeldEditsContext } from '../chat/held-edits';
import { trpc } from '../lib/trpc';
import { callPreview, NOTIFICATION_WHOLE_CHARS, visiblePlainText } from './argument-preview';
import type { WaitingDecision, WaitingDecisionAnswer } from './use-decide-waiting';
import { NotificationBook } from './notification-book';
import { handleNotificationClicks } from './notification-clicks';
import type { WaitingApproval } from './use-waiting-approvals';

/** How a decision notification's title starts, the tool's name after it. */
const TITLE_START = 'Decision needed: ';

export const NOTIFICATION_WORKER_URL = '/notification-worker.js';

/**
 * How often, while calls wait, a tab looks for a notification of its that went missing. The waiting list is read
 * again only when the server says it changed, so the look has a timer of its own; it reads no call from the server.
 */
const LOOK_AGAIN_MS = 2000;

/** What the notification worker posts to every tab when the person clicks or dismisses a notification. */
export interface NotificationEnd {
  type: 'airlock-notification-end';
  approvalId: string;
}

/** What a tab posts to the notification worker as it goes: close the notifications it showed. */
export interface CloseNotifications {
  type: 'airlock-close-notifications';
  tags: string[];
}

export interface DecisionNotificationsOptions {
  /** The person turned notifications on in Settings. */
  enabled: boolean;
  waiting: readonly WaitingApproval[];
  /** The tab is connected to the server: a decision can be sent. */
  connected: boolean;
  decide: (decision: WaitingDecision) => Promise<WaitingDecisionAnswer>;
  /** Opens the call's chat and focuses its card. */
  show: (approval: Pick<WaitingApproval, 'approvalId' | 'sessionId'>) => void;
}

/**
 * A system notification for each call waiting while this tab is in the background (one that started waiting while
 * the person looked at the tab is told once they switch away, if it still waits and no other window of the app is in
 * view), with Allow and
 * Deny where the browser offers notification actions. The worker posts a click back here, and exactly that
 * approval is decided (or its card shown).
 */
export function useDecisionNotifications({ enabled, waiting, connected, decide, show }: DecisionNotificationsOptions): void {
  const heldEdits = useContext(HeldEditsContext);
  const utils = trpc.useUtils();
  const book = useRef(new NotificationBook());
  const registration = useRef<Promise<ServiceWorkerRegistration | null> | null>(null);
  const worker = useRef<ServiceWorkerRegistration | null>(null);
  /** Notifications this tab made without the worker (the browser cannot list them), by tag. */
  const made = useRef(new Map<string, Notification>());
  const latest = useRef({ decide, show, waiting, connected });
  latest.current = { decide, show, waiting, connected };

  useEffect(() => {
    // A notification must not outlive the tab its buttons talk to: one left on screen by a closed or reloaded tab
    // stayed there for good, though its call was decided elsewhere or ended. The worker closes them (this page may
    // be gone before a promise of its settles).
    const onPageHide = () => {
      const tags = book.current.shown();
      for (const notification of made.current.values()) notification.close();
      made.current.clear();
      if (tags.length > 0) worker.current?.active?.postMessage({ type: 'airlock-close-notifications', tags } satisfies CloseNotifications);
    };
    window.addEventListener('pagehide', onPageHide);
    return () => window.removeEventListener('pagehide', onPageHide);
  }, []);

  useEffect(() => {
    if (!enabled || !('serviceWorker' in navigator)) return;
    registration.current ??= navigator.serviceWorker.register(NOTIFICATION_WORKER_URL).then(
      () => navigator.serviceWorker.ready,
      () => null,
    );
    void registration.current.then((ready) => (worker.current = ready));
    const onMessage = (event: MessageEvent<unknown>) => {
      const ended = notificationEndOf(event.data);
      if (ended !== null) book.current.end(ended);
    };
    navigator.serviceWorker.addEventListener('message', onMessage);
    return () => navigator.serviceWorker.removeEventListener('message', onMessage);
  }, [enabled]);

  // Clicks are answered with notifications off too: one shown before they were turned off still has its buttons.
  useEffect(
    () =>
      handleNotificationClicks(async (click) => {
        const { waiting, connected, show, decide } = latest.current;
        const approval = waiting.find((candidate) => candidate.approvalId === click.approvalId);
        // An Allow counts only for a call this tab still lists, that its notification could offer Allow for, and whose
        // card holds no edit in any tab of this browser (it would run the proposal and drop the edit): the worker hands
        // the click to one tab, not always the one that showed the notification or holds the edit.
        const allowUnseen = click.action === 'allow' && (approval === undefined || !notificationOffersAllow(approval) || heldEdits.heldInAnyTab(approval.approvalId));
        if (click.action === 'open' || allowUnseen) {
          window.focus();
          show(click);
          return { done: true, focus: true };
        }
        const verb = click.action === 'allow' ? 'allowed' : 'denied';
        if (!connected) {
          const why = `Not ${verb}: this tab is not connected to Airlock (the server stopped, or now serves another address). Decide the call once the tab connects again, or open the link the server printed.`;
          return { done: false, why, focus: true };
        }
        const answer = await decide({ sessionId: click.sessionId, approvalId: click.approvalId, decision: click.action });
        return answer.taken ? { done: true, focus: false } : { done: false, why: `Not ${verb}: ${answer.why}`, focus: false };
      }),
    [heldEdits],
  );

  const queue = useRef(Promise.resolve());
  useEffect(() => {
    if (!enabled || typeof Notification === 'undefined' || Notification.permission !== 'granted') {
      book.current.see(waiting);
      return;
    }
    // One pass at a time, each against the latest list: an older pass must not close a newer notification.
    const look = () => {
      queue.current = queue.current
        .then(async () => {
          const worker = await (registration.current ?? Promise.resolve(null));
          const notifications = worker === null ? null : await worker.getNotifications();
          const listed = notifications === null ? null : new Set(notifications.map((notification) => notification.tag));
          const hidden = document.hidden;
          const appInView = hidden && worker !== null && (await anotherWindowInView(worker));
          const pass = book.current.pass(latest.current.waiting, listed, hidden, appInView);
          for (const notification of notifications ?? []) if (pass.close.includes(notification.tag)) notification.close();
          const waitingIds = new Set(latest.current.waiting.map((approval) => approval.approvalId));
          for (const [tag, notification] of made.current) {
            if (waitingIds.has(tag)) continue;
            notification.close();
            made.current.delete(tag);
          }
          if (worker !== null && notifications !== null && listed !== null) {
            for (const tag of book.current.unheardOf(listed)) {
              const sessionId = sessionOf(notifications.find((notification) => notification.tag === tag)?.data);
              // Not in the queue: a read that is never answered must not hold up the passes after it.
              if (sessionId !== null) void closeIfGone(worker, tag, () => utils.client.chat.pending.query({ sessionId }));
            }
          }
          for (const approval of pass.show) {
            const notification = await notify(worker, approval, latest.current.show);
            if (notification !== null) made.current.set(approval.approvalId, notification);
          }
        })
        .catch(() => undefined);
    };
    look();
    if (waiting.length === 0) return;
    // A notification can go missing with nothing changed in the waiting list (see NotificationBook).
    const timer = window.setInterval(look, LOOK_AGAIN_MS);
    // A call the person saw waiting here is told as they switch away from the tab, not a look later.
    document.addEventListener('visibilitychange', look);
    return () => {
      window.clearInterval(timer);
      document.removeEventListener('visibilitychange', look);
    };
  }, [enabled, waiting, utils]);
}

/**
 * Closes the notification `tag` of a call this tab never saw waiting once a read of its chat, made after the
 * notification was listed (and so after the read that showed it), does not list the call: it was decided, ended, or
 * is unknown to this server. Not read or not answered, it is left as it is.
 */
async function closeIfGone(worker: ServiceWorkerRegistration, tag: string, readWaiting: () => Promise<readonly { approvalId: string }[]>): Promise<void> {
  const waiting = await readWaiting().catch(() => null);
  if (waiting === null || waiting.some((approval) => approval.approvalId === tag)) return;
  for (const notification of await worker.getNotifications({ tag })) notification.close();
}

/** How long a hidden tab waits for the worker to say whether another window of the app is in view. */
const IN_VIEW_ANSWER_MS = 1000;

/**
 * Whether a window of the app other than this tab is visible, as the worker's list of windows says (this tab's own
 * `document.hidden` tells only of itself). Without an answer, none is.
 */
function anotherWindowInView(worker: ServiceWorkerRegistration): Promise<boolean> {
  const active = worker.active;
  if (active === null) return Promise.resolve(false);
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    const timer = window.setTimeout(() => resolve(false), IN_VIEW_ANSWER_MS);
    channel.port1.onmessage = (event: MessageEvent<{ inView?: unknown }>) => {
      window.clearTimeout(timer);
      channel.port1.close();
      resolve(event.data?.inView === true);
    };
    active.postMessage({ type: 'airlock-app-in-view' }, [channel.port2]);
  });
}

/** The most of "Why you are asked" a notification shows: its card says all of it. */
const WHY_ASKED_CHARS = 300;

/** For a call a deny rule asked about: why, as its card says it, on a line of its own. */
function whyAsked(approval: Pick<WaitingApproval, 'askedBecause' | 'exactGrantsOnly'>): string {
  if (approval.exactGrantsOnly !== true || approval.askedBecause === undefined) return '';
  const why = visiblePlainText(reasonText(approval.askedBecause.reason)).replace(/\s+/g, ' ');
  return `\nWhy you are asked: ${why.length > WHY_ASKED_CHARS ? `${why.slice(0, WHY_ASKED_CHARS - 1)}…` : why}`;
}

/** The chat of a decision notification, from its data; null for any other notification. */
function sessionOf(data: unknown): string | null {
  if (typeof data !== 'object' || data === null) return null;
  const { approvalId, sessionId } = data as Record<string, unknown>;
  return typeof approvalId === 'string' && typeof sessionId === 'string' ? sessionId : null;
}

/** Shows the call's notification; answers it where there is no worker to list it, null otherwise. */
async function notify(worker: ServiceWorkerRegistration | null, approval: WaitingApproval, show: DecisionNotificationsOptions['show']): Promise<Notification | null> {
  const title = `${TITLE_START}${visiblePlainText(approval.toolName)}`;
  const preview = callPreview(approval.toolName, approval.arguments, { declared: approval.tool?.declared, schema: approval.inputSchema });
  const body = `${preview.text}\nin “${visiblePlainText(approval.title)}”${whyAsked(approval)}`;
  const allows = notificationOffersAllow(approval);
  const data = { approvalId: approval.approvalId, sessionId: approval.sessionId };
  if (worker !== null) {
    // Allow only where the body holds the whole call and nothing on its card is left unsaid; otherwise the person
    // reviews it on its card first.
    const first = allows ? { action: 'allow', title: 'Allow' } : { action: 'open', title: 'Review' };
    const actions = supportsActions() ? [first, { action: 'deny', title: 'Deny' }] : [];
    await worker.showNotification(title, { body, tag: approval.approvalId, data, requireInteraction: true, ...{ actions } }).catch(() => undefined);
    return null;
  }
  const notification = new Notification(title, { body, tag: approval.approvalId });
  notification.onclick = () => {
    window.focus();
    notification.close();
    show(data);
  };
  return notification;
}

/**
 * Whether a notification may offer Allow for the call: it shows all of it, and no deny rule asked about it (why it
 * asked is said on its card, not in a notification).
 */
export function notificationOffersAllow(approval: Pick<WaitingApproval, 'toolName' | 'arguments' | 'tool' | 'inputSchema' | 'exactGrantsOnly'>): boolean {
  return approval.exactGrantsOnly !== true && notificationShowsWhole(approval);
}

/**
 * Whether a notification shows all of the call, short enough that the system does not cut it: its body, and the tool's
 * name in its title. `hostile__archive_project_documents` and `…_documents_and_purge_originals` differ only where a
 * system cuts a title, and an Allow offered beside a cut name runs a tool the person could not see.
 */
export function notificationShowsWhole(approval: Pick<WaitingApproval, 'toolName' | 'arguments' | 'tool' | 'inputSchema'>): boolean {
  if (`${TITLE_START}${approval.toolName}`.length > NOTIFICATION_WHOLE_CHARS || !/^[\x21-\x7E]+$/.test(approval.toolName)) return false;
  return callPreview(approval.toolName, approval.arguments, { maxChars: NOTIFICATION_WHOLE_CHARS, declared: approval.tool?.declared, schema: approval.inputSchema, unshownDefaults: approval.tool?.unshownDefaults }).whole;
}

function supportsActions(): boolean {
  const maxActions = (Notification as unknown as { maxActions?: number }).maxActions;
  return typeof maxActions === 'number' && maxActions >= 2;
}

function notificationEndOf(data: unknown): string | null {
  if (typeof data !== 'object' || data === null) return null;
  const { type, approvalId } = data as Partial<Record<keyof NotificationEnd, unknown>>;
  return type === 'airlock-notification-end' && typeof approvalId === 'string' ? approvalId : null;
}

