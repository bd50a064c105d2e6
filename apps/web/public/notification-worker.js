// Turns a click on a "decision needed" notification into a message to a tab of the app, which decides that one
// approval (Allow / Deny buttons) or shows its card (a plain click). The worker itself never talks to the server.
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

self.addEventListener('notificationclick', (event) => {
  const { notification } = event;
  notification.close();
  const data = approvalOf(notification);
  if (data === null) return;
  const action = event.action === 'allow' || event.action === 'deny' ? event.action : 'open';
  event.waitUntil(
    (async () => {
      const windows = await appWindows();
      await tellEnded(windows, data.approvalId);
      const client = windows.find((candidate) => candidate.visibilityState === 'visible') ?? windows[0];
      if (client === undefined) return;
      if (action === 'open') await client.focus().catch(() => undefined);
      client.postMessage({ type: 'airlock-notification-click', action, approvalId: data.approvalId, sessionId: data.sessionId });
    })(),
  );
});

// A tab going away asks the worker to close the notifications it showed: the page may be gone before it could.
self.addEventListener('message', (event) => {
  const data = event.data ?? {};
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
