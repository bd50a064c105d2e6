import type { IncomingHttpHeaders } from 'node:http';

/** A start of Airlock's own browser address (see `freshRunHostname`), whatever start it was of. */
const RUN_HOST = /^airlock-[a-z2-7]{16}\.localhost(?::\d+)?$/i;

/**
 * Whether a refused request is a browser loading a page (typed, reloaded, followed), which a person reads, rather than a
 * script's request or a WebSocket.
 */
export function isPageLoad(method: string | undefined, headers: IncomingHttpHeaders): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  const dest = headers['sec-fetch-dest'];
  if (dest !== undefined) return dest === 'document';
  return (headers.accept ?? '').toLowerCase().includes('text/html');
}

/**
 * The page answering (with 403) a page load the server refuses: what happened and how to get the link that works.
 * After a restart, a reloaded tab asks for the previous start's address (`airlock-<random>.localhost`), refused since
 * nobody else may have served a page there; a bare "Forbidden" said nothing of the restart. It holds no token, no chat
 * and nothing of the request (the Host is not echoed): a page on a rebinding name learns nothing from it.
 */
export function refusedPage(host: string | undefined): string {
  const earlierStart = host !== undefined && RUN_HOST.test(host);
  const what = earlierStart
    ? '<h1>Airlock was restarted on a new address</h1><p>This address was of an earlier start of the Airlock server. Airlock takes a new address each time it starts, so this one is answered no more.</p>'
    : '<h1>Airlock does not answer at this address</h1><p>The Airlock server answers only at the addresses it printed when it started.</p>';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Airlock: open the new link</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#1c1c1c}code{background:#f0f0f0;padding:0 .25rem;word-break:break-all}</style></head>
<body>
${what}
<p>Open the link the server printed when it started: your chats, and any call still waiting for you, are there. It is a line like this:</p>
<p><code>Airlock is running at http://airlock-….localhost:7700/#code=…</code></p>
<p>Open that exact address in this browser (the whole line, including everything after <code>#code=</code>); it works once, within 10 minutes. A server given its token in a file (<code>--token-file</code>) leaves the token out of that line: paste it from the file on the page the link opens. If the server is no longer running, start it again with <code>npm start</code> and use the new address.</p>
</body>
</html>
`;
}
