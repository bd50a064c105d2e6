import type { IncomingMessage, ServerResponse } from 'node:http';
import { deferred } from '@airlock/core/testing';
import { describe, expect, test } from 'vitest';
import { createBuiltinTools, type BuiltinToolsOptions } from './index';
import { callContext, httpServer, runTool, toolNamed } from './test-support';

const PAGE = `<html><head><title>Local page</title><script>alert("x")</script></head>
<body><nav>Menu</nav><p>Hello <a href="/next">next page</a> &amp; welcome.</p></body></html>`;

function routes(request: IncomingMessage, response: ServerResponse) {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  const hop = Number(url.searchParams.get('hop') ?? '0');
  switch (url.pathname) {
    case '/page':
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      return;
    case '/json':
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok": true, "html": "<b>kept</b>"}');
      return;
    case '/big':
      response.writeHead(200, { 'content-type': 'text/plain' });
      // Far more than the cap, in many chunks: the tool must stop reading, not buffer it all.
      for (let index = 0; index < 200; index += 1) response.write('x'.repeat(10_000));
      response.end();
      return;
    case '/chain':
      if (hop < 3) response.writeHead(302, { location: `/chain?hop=${hop + 1}` }).end();
      else response.writeHead(200, { 'content-type': 'text/plain' }).end(`arrived after ${hop} redirects`);
      return;
    case '/loop':
      response.writeHead(301, { location: `/loop?hop=${hop + 1}` }).end();
      return;
    case '/elsewhere':
      // Same machine, other port: another origin, like a page pointing at an address inside the network.
      response.writeHead(302, { location: `http://127.0.0.1:${url.searchParams.get('port') ?? '1'}/secret` }).end();
      return;
    case '/with-password':
      // Same origin: the credentials are all that differs.
      response.writeHead(302, { location: `http://user:hunter2pass@${request.headers.host ?? ''}/page` }).end();
      return;
    case '/to-file':
      response.writeHead(302, { location: 'file:///etc/passwd' }).end();
      return;
    case '/hang':
      return;
    default:
      response.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
  }
}

function webFetch(options: Partial<BuiltinToolsOptions> = {}) {
  return toolNamed(createBuiltinTools({ workspace: '/tmp', ...options }), 'web_fetch');
}

describe('web_fetch', () => {
  test('is annotated as reaching beyond this machine: what a fetch sends (in its URL) can leave it', () => {
    expect(webFetch().annotations).toStrictEqual({ readOnly: true, exactGrants: true, openWorld: true });
  });

  test('reduces HTML to readable text', async () => {
    await using server = await httpServer(routes);
    expect(await runTool(webFetch(), { url: `${server.url}/page` })).toStrictEqual({
      content: [
        `URL: ${server.url}/page`,
        'Status: 200 OK',
        'Content-Type: text/html; charset=utf-8',
        '',
        'Title: Local page',
        '',
        `Hello next page (${server.url}/next) & welcome.`,
      ].join('\n'),
      isError: false,
    });
  });

  test('passes JSON through unchanged', async () => {
    await using server = await httpServer(routes);
    const result = await runTool(webFetch(), { url: `${server.url}/json` });
    expect(result.content.endsWith('\n\n{"ok": true, "html": "<b>kept</b>"}')).toBe(true);
  });

  test('stops reading at the size cap and says so', async () => {
    await using server = await httpServer(routes);
    const result = await runTool(webFetch({ maxFetchBytes: 25_000 }), { url: `${server.url}/big` });
    expect(result.content.endsWith(`\n\n${'x'.repeat(25_000)}\n\n[… truncated: only the first 25000 bytes were read …]`)).toBe(true);
  });

  test('follows a few redirects', async () => {
    await using server = await httpServer(routes);
    const result = await runTool(webFetch(), { url: `${server.url}/chain` });
    expect(result.content.split('\n')[0]).toBe(`URL: ${server.url}/chain?hop=3`);
    expect(result.content.endsWith('\n\narrived after 3 redirects')).toBe(true);
  });

  test('refuses a redirect loop after the bound', async () => {
    await using server = await httpServer(routes);
    expect(await runTool(webFetch({ maxRedirects: 5 }), { url: `${server.url}/loop` })).toStrictEqual({
      content: `Error: too many redirects: gave up after 5, at ${server.url}/loop?hop=5.`,
      isError: true,
    });
  });

  test('does not follow a redirect to another site: the model has to ask for that URL itself', async () => {
    await using server = await httpServer(routes);
    await using other = await httpServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('internal secret'));
    const port = new URL(other.url).port;
    const result = await runTool(webFetch(), { url: `${server.url}/elsewhere?port=${port}` });
    expect(result).toStrictEqual({
      content: `${server.url}/elsewhere?port=${port} redirects to another site: ${other.url}/secret\nIt was not followed. To read it, call web_fetch with that URL.`,
      isError: false,
    });
    expect(JSON.stringify(result)).not.toContain('internal secret');
  });

  test('refuses a redirect to file://', async () => {
    await using server = await httpServer(routes);
    expect(await runTool(webFetch(), { url: `${server.url}/to-file` })).toStrictEqual({
      content: `Error: refused a redirect from ${server.url}/to-file to a file: URL; only http and https are followed.`,
      isError: true,
    });
  });

  test('refuses, when run without its schema check, a URL the schema refuses, and fetches nothing', async () => {
    let requests = 0;
    await using server = await httpServer((_request, response) => {
      requests += 1;
      response.writeHead(200, { 'content-type': 'text/plain' }).end('reached');
    });
    const port = new URL(server.url).port;
    const run = (url: string) => webFetch().execute({ url }, callContext());
    expect(await run('ftp://127.0.0.1/x')).toStrictEqual({ content: 'Error: only http and https URLs can be fetched, not ftp: URLs.', isError: true });
    expect(await run('not a url')).toStrictEqual({ content: 'Error: not a valid URL; write it in full, as https://example.com/page.', isError: true });
    expect(await run(`http://2130706433:${port}/`)).toStrictEqual({
      content:
        `Error: the host is written as "2130706433:${port}" but reached as 127.0.0.1:${port} (the same IP address, written another way); ` +
        `write the URL as http://127.0.0.1:${port}/, so the card shows where it goes.`,
      isError: true,
    });
    expect(requests).toBe(0);
  });

  test('refuses a redirect to a URL with a user name and password, and does not print the password', async () => {
    const requested: string[] = [];
    await using server = await httpServer((request, response) => {
      requested.push(request.url ?? '');
      routes(request, response);
    });
    const result = await runTool(webFetch(), { url: `${server.url}/with-password` });
    const masked = server.url.replace('//', '//user:***@');
    expect(result).toStrictEqual({
      content:
        `Error: refused a redirect from ${server.url}/with-password to ${masked}/page: web_fetch sends no user name or password. ` +
        `To read it without them, call web_fetch with ${server.url}/page`,
      isError: true,
    });
    expect(requested).toStrictEqual(['/with-password']);
  });

  test('returns a body of exactly the size cap at once, though the server keeps the response open', async () => {
    const { promise: held, resolve: release } = deferred();
    await using server = await httpServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' }).write('x'.repeat(1000));
      void held.then(() => response.end());
    });
    try {
      // The time limit is far off: the answer must not wait for it.
      const result = await runTool(webFetch({ maxFetchBytes: 1000, fetchTimeoutMs: 20_000 }), { url: `${server.url}/` });
      expect(result).toStrictEqual({
        content:
          `URL: ${server.url}/\nStatus: 200 OK\nContent-Type: text/plain\n\n${'x'.repeat(1000)}` +
          '\n\n[… the first 1000 bytes were read, the most that is read; whether more followed is not known …]',
        isError: false,
      });
    } finally {
      release();
    }
  });

  test('returns what arrived of a body still being sent at the time limit, marked as cut short', async () => {
    const { promise: sent, resolve: wrote } = deferred();
    await using server = await httpServer((_request, response) => {
      // The rest never comes, as from a server sending a byte now and then.
      response.writeHead(200, { 'content-type': 'text/plain' }).write('the first part', () => wrote());
    });
    const result = await runTool(webFetch({ fetchTimeoutMs: 2000 }), { url: `${server.url}/` });
    await sent;
    expect(result).toStrictEqual({
      content:
        `URL: ${server.url}/\nStatus: 200 OK\nContent-Type: text/plain\n\nthe first part` +
        '\n\n[… cut short: the server was still sending after 2000 ms, the time limit; only the 14 bytes that arrived by then are shown …]',
      isError: false,
    });
  });

  test('a body still being sent when the call is stopped is not returned', async () => {
    const stop = new AbortController();
    await using server = await httpServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' }).write('the first part', () => stop.abort());
    });
    const result = await runTool(webFetch(), { url: `${server.url}/` }, callContext({ signal: stop.signal }));
    expect(result).toStrictEqual({ content: `Error: fetching ${server.url}/ was stopped.`, isError: true });
  });

  test('an HTTP error status is an error result with the body', async () => {
    await using server = await httpServer(routes);
    const result = await runTool(webFetch(), { url: `${server.url}/missing` });
    expect(result).toStrictEqual({
      content: `URL: ${server.url}/missing\nStatus: 404 Not Found\nContent-Type: text/plain\n\nno such page`,
      isError: true,
    });
  });

  test('times out on a server that never answers', async () => {
    await using server = await httpServer(routes);
    expect(await runTool(webFetch({ fetchTimeoutMs: 200 }), { url: `${server.url}/hang` })).toStrictEqual({
      content: `Error: fetching ${server.url}/hang timed out after 200 ms.`,
      isError: true,
    });
  });

  test('honours the call signal', async () => {
    await using server = await httpServer(routes);
    const result = await runTool(webFetch(), { url: `${server.url}/hang` }, callContext({ signal: AbortSignal.abort() }));
    expect(result).toStrictEqual({ content: `Error: fetching ${server.url}/hang was stopped.`, isError: true });
  });

  test('reports a refused connection', async () => {
    const closed = await httpServer(routes);
    const url = `${closed.url}/page`;
    await closed[Symbol.asyncDispose]();
    const result = await runTool(webFetch(), { url });
    expect(result).toStrictEqual({ content: `Error: fetching ${url} failed: ECONNREFUSED (connect ECONNREFUSED ${new URL(url).host})`, isError: true });
  });
});
