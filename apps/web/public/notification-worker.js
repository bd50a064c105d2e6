// Turns a click on a "decision needed" notification into a message to a tab of the app, which decides that one
// approval (Allow / Deny buttons) or shows its card (a plain click), and answers whether it did; when it did not, or
// no tab is open, a notification says why. The worker itself never talks to the server.
// Every tab also hears that the person is done with the notification (clicked or dismissed), so none shows it again.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

async function appWindows() {
  return self.clients.matchAll({ type: 'window', includeUncontrolled: true });
}

function approvalOf(notification) {
  const data = notification.data ?? {};
  return typeof data.approvalId === 'string' && typeof data.sessionId === 'string' ? data : null;
}

async function tellEnded(windows, approvalId) {
  for (const client of windows) client.postMessage({ type: 'airlock-notification-end', approvalId });
}

// How long a tab has to answer a click. A tab of the app from before this worker (opened before an update, and not
// reloaded since) takes no click and never answers: the click then goes as if no tab were open, not nowhere.
const ANSWER_WAIT_MS = 15_000;

// How long after the click a tab may still take its Allow or Deny: a tab frozen in the background reads the click
// when it wakes, maybe after the worker gave up on it and said so. Shorter than ANSWER_WAIT_MS by a decision's own
// deadline (10 s from its write, @airlock/client's decisionTimeoutMs), so a decision sent in time has its answer, or
// has failed, by the time the worker gives up; a tab that reads the click later shows the call's card instead.
const DECIDE_WITHIN_MS = 5_000;

// How long a notification is shown before its Allow or Deny decides, as the page's decision buttons (ARMING_MS of
// steady-button.tsx): notifications appear in a fixed corner, over every window, and push the others along, so a
// click meant for something else (a page that keeps the person clicking there) can land on one as it appears.
const ARMING_MS = 600;
const CLICKED_AS_IT_APPEARED =
  'Clicked as it appeared (within 0.6 s), so the call was not decided: a click meant for something else must not decide it. Read it in Waiting for you and decide there.';

// What a tab asks on the click's port before an Allow or Deny decides: how long the click has left.
const IN_TIME_QUESTION = 'airlock-notification-in-time';

// Posts the click to a tab and resolves with its answer (done, or why the call was not decided), or null when none
// came within ANSWER_WAIT_MS. `clickedAt`: performance.now() as the click came. Asked how long the click has left,
// it answers on that steady clock, in this worker, which stamped the click: no change of the wall clock moves it (a
// wall clock set back let a tab that read the click an hour late take it as just made). Past its wait, it answers
// that none is left.
function ask(client, clickedAt, message) {
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    let over = false;
    const timer = setTimeout(() => {
      over = true;
      resolve(null);
    }, ANSWER_WAIT_MS);
    channel.port1.onmessage = (event) => {
      if (event.data?.type === IN_TIME_QUESTION) {
        event.ports[0]?.postMessage({ leftMs: over ? -1 : DECIDE_WITHIN_MS - (performance.now() - clickedAt) });
        return;
      }
      if (over) return;
      over = true;
      clearTimeout(timer);
      channel.port1.close();
      resolve(event.data ?? {});
    };
    client.postMessage(message, [channel.port2]);
  });
}

// A click never does nothing: when the call was not decided, a notification of the worker's own says why.
async function showWhyNot(notification, why) {
  await self.registration
    .showNotification('Not decided', { body: `${why}
${notification.body}`, tag: `airlock-not-decided:${notification.tag}`, data: { notDecided: true } })
    .catch(() => undefined);
}

// What a click does when no tab takes it: a plain click opens the app, Allow or Deny says why nothing was decided.
async function noTabAnswered(notification, action, why) {
  if (action === 'open') {
    await self.clients.openWindow(self.registration.scope).catch(() => undefined);
    return;
  }
  await showWhyNot(notification, why);
}

self.addEventListener('notificationclick', (event) => {
  const { notification } = event;
  notification.close();
  const data = approvalOf(notification);
  if (data === null) {
    event.waitUntil(appWindows().then((windows) => windows[0]?.focus().catch(() => undefined)));
    return;
  }
  const decides = event.action === 'allow' || event.action === 'deny';
  // Read as the click comes: how long the notification had been on screen, and the steady clock the click's time is
  // counted on.
  const clickedAt = Date.now();
  const clickedOnSteadyClock = performance.now();
  const early = decides && clickedAt - notification.timestamp < ARMING_MS;
  const action = decides && !early ? event.action : 'open';
  event.waitUntil(
    (async () => {
      // Shows the call's card instead, and says why nothing was decided.
      if (early) await showWhyNot(notification, CLICKED_AS_IT_APPEARED);
      const windows = await appWindows();
      await tellEnded(windows, data.approvalId);
      const client = windows.find((candidate) => candidate.visibilityState === 'visible') ?? windows[0];
      if (client === undefined) {
        // The tab that showed it is gone (closed, or crashed before it could close it), or the server moved on.
        await noTabAnswered(
          notification,
          action,
          'No tab of Airlock is open at this address, so the call was not decided. Open Airlock (after a restart, with the link the server printed) and decide it in Waiting for you.',
        );
        return;
      }
      if (action === 'open') await client.focus().catch(() => undefined);
      const answer = await ask(client, clickedOnSteadyClock, {
        type: 'airlock-notification-click',
        action,
        approvalId: data.approvalId,
        sessionId: data.sessionId,
        notAfter: clickedAt + DECIDE_WITHIN_MS,
        asks: true,
      });
      if (answer === null) {
        await noTabAnswered(
          notification,
          action,
          'No tab of Airlock answered the click (a tab opened before Airlock was updated takes none), so the call may not be decided. Reload Airlock and decide it in Waiting for you.',
        );
        return;
      }
      if (answer.focus === true && action !== 'open') await client.focus().catch(() => undefined);
      if (answer.done !== true) await showWhyNot(notification, typeof answer.why === 'string' ? answer.why : 'The tab could not decide the call.');
    })(),
  );
});

// A tab going away asks the worker to close the notifications it showed: the page may be gone before it could.
// A hidden tab asks whether another window of the app is in view (the person switched to another Airlock tab).
self.addEventListener('message', (event) => {
  const data = event.data ?? {};
  if (data.type === 'airlock-app-in-view' && event.ports[0] !== undefined) {
    const [port] = event.ports;
    const asking = event.source?.id;
    event.waitUntil(
      appWindows().then(
        (windows) => port.postMessage({ inView: windows.some((client) => client.id !== asking && client.visibilityState === 'visible') }),
        () => port.postMessage({ inView: false }),
      ),
    );
    return;
  }
  if (data.type !== 'airlock-close-notifications' || !Array.isArray(data.tags)) return;
  const tags = new Set(data.tags.filter((tag) => typeof tag === 'string'));
  event.waitUntil(
    self.registration.getNotifications().then((notifications) => {
      for (const notification of notifications) if (tags.has(notification.tag)) notification.close();
    }),
  );
});

self.addEventListener('notificationclose', (event) => {
  const data = approvalOf(event.notification);
  if (data === null) return;
  event.waitUntil(appWindows().then((windows) => tellEnded(windows, data.approvalId)));
});
