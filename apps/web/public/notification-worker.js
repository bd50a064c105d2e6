// Turns a click on a "decision needed" notification into a message to a tab of the app, which decides that one
// approval (Allow / Deny buttons) or shows its card (a plain click). The worker itself never talks to the server.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('notificationclick', (event) => {
  const { notification } = event;
  notification.close();
  const data = notification.data ?? {};
  if (typeof data.approvalId !== 'string' || typeof data.sessionId !== 'string') return;
  const action = event.action === 'allow' || event.action === 'deny' ? event.action : 'open';
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const client = windows.find((candidate) => candidate.visibilityState === 'visible') ?? windows[0];
      if (client === undefined) return;
      if (action === 'open') await client.focus().catch(() => undefined);
      client.postMessage({ type: 'airlock-notification-click', action, approvalId: data.approvalId, sessionId: data.sessionId });
    })(),
  );
});
