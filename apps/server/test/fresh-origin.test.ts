import { ChatService, type AirlockServices } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { deferred } from '@airlock/core/testing';
import { get } from 'node:http';
import { connect, createServer, type Server as NetServer, type Socket } from 'node:net';
import { hostname, networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config';
import type { ListenTwin } from '../src/http/loopback-twin';
import { startServer, type RunningServer, type StartServerOptions } from '../src/start-server';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
/** A start-up link's one-time code (see link-code.test.ts). */
const CODE = '[A-Za-z0-9_-]{27}';
const LONG_TIMEOUTS = { headersMs: 60_000, requestMs: 60_000, keepAliveMs: 60_000, idleMs: 60_000 };

async function start(options: Partial<Omit<StartServerOptions, 'config' | 'services'>> & { host?: string; port?: number; maxHttpConnections?: number } = {}) {
  const { host = '127.0.0.1', port = 0, maxHttpConnections, ...rest } = options;
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => undefined as never, tools: () => [] });
  const services: AirlockServices = { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'demo', baseURL: null, model: 'demo', demo: true }) };
  const lines: string[] = [];
  const server = await startServer({
    config: { host, port, token: TOKEN, allowedOrigins: [], capacity: maxHttpConnections === undefined ? {} : { maxHttpConnections } },
    services,
    webRoot: join(tmpdir(), 'airlock-no-such-web-root'),
    log: (line) => lines.push(line),
    ...rest,
  });
  return { server, lines, [Symbol.asyncDispose]: () => server.close() };
}

async function listenNet(server: NetServer, port: number, host: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, ipv6Only: true }, () => resolve());
  });
}

/** Whether this machine has an IPv6 loopback to listen on. */
async function hasIpv6Loopback(): Promise<boolean> {
  const probe = createServer();
  try {
    await listenNet(probe, 0, '::1');
    return true;
  } catch {
    return false;
  } finally {
    probe.close();
  }
}
const IPV6 = await hasIpv6Loopback();
const WILDCARDS = IPV6 ? ['0.0.0.0', '::'] : ['0.0.0.0'];
/** An IPv4 address of this machine beyond loopback, if it has one. */
const EXTERNAL_IPV4 = Object.values(networkInterfaces())
  .flatMap((entries) => entries ?? [])
  .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address;

function listenError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`listen ${code}`), { code });
}

/** A keep-alive socket to `host` that has had one answer to GET /healthz; resolves with the status line. */
async function answeredSocket(host: string, server: RunningServer): Promise<{ socket: Socket; statusLine: string; closed: Promise<void> }> {
  const socket = connect({ host, port: server.port });
  const closed = deferred<void>();
  socket.once('close', () => closed.resolve());
  const answer = deferred<string>();
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('utf8');
    if (received.includes('\r\n\r\n')) answer.resolve(received.slice(0, received.indexOf('\r\n')));
  });
  socket.on('error', (error) => answer.reject(error));
  const name = new URL(server.browserUrl).host;
  socket.write(`GET /healthz HTTP/1.1\r\nHost: ${name}\r\nOrigin: ${server.browserUrl}\r\n\r\n`);
  return { socket, statusLine: await answer.promise, closed: closed.promise };
}

/** The status line of GET /healthz sent to 127.0.0.1:`port` with this Host, and an Origin naming the same. */
async function statusFor(port: number, host: string): Promise<string> {
  const socket = connect({ host: '127.0.0.1', port });
  const answer = deferred<string>();
  socket.once('data', (chunk: Buffer) => answer.resolve(chunk.toString('utf8').split('\r\n')[0]!));
  socket.on('error', (error) => answer.reject(error));
  socket.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nOrigin: http://${host}\r\nConnection: close\r\n\r\n`);
  try {
    return await answer.promise;
  } finally {
    socket.destroy();
  }
}

/** A GET to 127.0.0.1:`port` with these headers: its status, content type and body. */
async function plainGet(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const request = get({ host: '127.0.0.1', port, path, headers: { ...headers, Connection: 'close' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, type: String(response.headers['content-type']), body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

/**
 * Starts on `host` at a port whose [::1] another process holds: expects the start refused with the reason, and the
 * port on `host` let go of again.
 */
async function expectRefusedBesideHeldIpv6(host: string): Promise<void> {
  const squatter = createServer();
  await listenNet(squatter, 0, '::1');
  const { port } = squatter.address() as { port: number };
  try {
    const error = await start({ host, port }).then(
      (running) => running.server.close().then(() => undefined),
      (thrown: unknown) => thrown,
    );

    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problem).toBe(
      `port ${port} on [::1] is held by another process, which a browser opening Airlock's link may reach instead of Airlock ` +
        '(browsers try both loopback addresses); stop it, or choose another port with --port or AIRLOCK_PORT',
    );
    const after = createServer();
    await listenNet(after, port, host);
    after.close();
  } finally {
    squatter.close();
  }
}

describe('a fresh browser origin for every run', () => {
  it('prints a link to a new *.localhost name at each start, and keeps url and wsUrl on 127.0.0.1 for Node clients', async () => {
    const links: string[] = [];
    for (let run = 0; run < 2; run++) {
      await using running = await start();
      const { port } = running.server;
      const link = /^Airlock is running at (\S+)$/.exec(running.lines[0]!)?.[1];
      links.push(link ?? '');

      expect(link).toMatch(new RegExp(`^http://airlock-[a-z2-7]{16}\\.localhost:${port}/#code=${CODE}$`));
      expect(link?.startsWith(`${running.server.browserUrl}/#code=`)).toBe(true);
      expect([running.server.url, running.server.wsUrl]).toStrictEqual([`http://127.0.0.1:${port}`, `ws://127.0.0.1:${port}/trpc`]);
    }
    expect(new URL(links[0]!).hostname).not.toBe(new URL(links[1]!).hostname);
  });

  it('serves a page on the run’s name and refuses another *.localhost name', async () => {
    await using running = await start();

    expect((await answeredSocket('127.0.0.1', running.server)).statusLine).toBe('HTTP/1.1 200 OK');
    const other = connect({ host: '127.0.0.1', port: running.server.port });
    const answer = deferred<string>();
    other.once('data', (chunk: Buffer) => answer.resolve(chunk.toString('utf8').split('\r\n')[0]!));
    other.write(`GET /healthz HTTP/1.1\r\nHost: airlock-aaaaaaaaaaaaaaaa.localhost:${running.server.port}\r\n\r\n`);
    expect(await answer.promise).toBe('HTTP/1.1 403 Forbidden');
    other.destroy();
  });

  it('answers a tab reloaded on an earlier start’s name with a page that says the server restarted and where the new link is, still refused', async () => {
    let port: number;
    let earlier: string;
    {
      await using first = await start();
      port = first.server.port;
      earlier = new URL(first.server.browserUrl).host;
    }
    await using running = await start({ port });
    const reload = { Host: earlier, Accept: 'text/html,application/xhtml+xml,*/*;q=0.8', 'Sec-Fetch-Dest': 'document', 'Sec-Fetch-Mode': 'navigate' };

    const page = await plainGet(port, '/', reload);
    expect(page.status).toBe(403);
    expect(page.type).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('Airlock was restarted on a new address');
    expect(page.body).toContain('Open the link the server printed when it started');
    for (const secret of [TOKEN, earlier, new URL(running.server.browserUrl).hostname]) expect(page.body).not.toContain(secret);
    // Another name a browser loads a page from is told only that Airlock does not answer there.
    const other = await plainGet(port, '/', { ...reload, Host: `evil.test:${port}` });
    expect([other.status, other.body.includes('Airlock does not answer at this address'), other.body.includes('restarted')]).toStrictEqual([403, true, false]);
    // A script's request or a WebSocket on that name is refused as before.
    expect(await plainGet(port, '/healthz', { Host: earlier, 'Sec-Fetch-Dest': 'empty' })).toStrictEqual({ status: 403, type: 'text/plain; charset=utf-8', body: 'Forbidden\n' });
    expect(await plainGet(port, '/', { Host: earlier })).toMatchObject({ status: 403, body: 'Forbidden\n' });
  });

  it.runIf(EXTERNAL_IPV4 !== undefined)('changes nothing on an address beyond loopback: the link names that address', async () => {
    await using running = await start({ host: EXTERNAL_IPV4 });
    const url = `http://${EXTERNAL_IPV4}:${running.server.port}`;

    expect([running.server.url, running.server.browserUrl]).toStrictEqual([url, url]);
    expect(running.lines[0]).toMatch(new RegExp(`^Airlock is running at ${url}/#code=${CODE}$`));
  });
});

describe('a bind to every address, which takes in loopback', () => {
  it.each(WILDCARDS)('on %s prints a link to a new *.localhost name, which the checks accept besides the machine’s names', async (host) => {
    await using running = await start({ host });
    const { port } = running.server;

    expect(running.lines[0]).toMatch(new RegExp(`^Airlock is running at http://airlock-[a-z2-7]{16}\\.localhost:${port}/#code=${CODE}$`));
    expect(running.lines[0]!.startsWith(`Airlock is running at ${running.server.browserUrl}/#code=`)).toBe(true);
    expect([running.server.url, running.server.wsUrl]).toStrictEqual([`http://127.0.0.1:${port}`, `ws://127.0.0.1:${port}/trpc`]);
    const served = await answeredSocket('127.0.0.1', running.server);
    expect(served.statusLine).toBe('HTTP/1.1 200 OK');
    served.socket.destroy();
    // A person on another machine still reaches it by this machine's name or addresses.
    expect(await statusFor(port, `${hostname()}:${port}`)).toBe('HTTP/1.1 200 OK');
    if (EXTERNAL_IPV4 !== undefined) expect(await statusFor(port, `${EXTERNAL_IPV4}:${port}`)).toBe('HTTP/1.1 200 OK');
    expect(await statusFor(port, `airlock-aaaaaaaaaaaaaaaa.localhost:${port}`)).toBe('HTTP/1.1 403 Forbidden');
  });

  it.runIf(IPV6)('on 0.0.0.0 serves [::1] on its port too, which a browser tries first for the run’s name', async () => {
    await using running = await start({ host: '0.0.0.0' });

    const overIpv6 = await answeredSocket('::1', running.server);
    expect(overIpv6.statusLine).toBe('HTTP/1.1 200 OK');
    overIpv6.socket.destroy();
  });

  it.runIf(IPV6)('on 0.0.0.0 refuses to start on a configured port whose [::1] another process holds', async () => {
    await expectRefusedBesideHeldIpv6('0.0.0.0');
  });
});

describe('holding [::1] beside 127.0.0.1', () => {
  it.runIf(IPV6)('serves a connection to [::1] as one of its own, counted with the others', async () => {
    await using running = await start({ maxHttpConnections: 1, httpTimeouts: LONG_TIMEOUTS });

    const overIpv6 = await answeredSocket('::1', running.server);
    expect(overIpv6.statusLine).toBe('HTTP/1.1 200 OK');
    // The only HTTP place is taken by the [::1] socket: a newcomer on 127.0.0.1 makes it give way.
    const overIpv4 = await answeredSocket('127.0.0.1', running.server);
    expect(overIpv4.statusLine).toBe('HTTP/1.1 200 OK');
    await overIpv6.closed;
    overIpv4.socket.destroy();
  });

  it.runIf(IPV6)('lets go of [::1] when it closes', async () => {
    const running = await start();
    const { port } = running.server;
    await running.server.close();

    const after = createServer();
    await listenNet(after, port, '::1');
    after.close();
  });

  it.runIf(IPV6)('refuses to start on a configured port whose [::1] another process holds', async () => {
    await expectRefusedBesideHeldIpv6('127.0.0.1');
  });

  it('takes another port when it chose the port itself and [::1] is held on it', async () => {
    const tried: number[] = [];
    const listenTwin: ListenTwin = async (server, port, host) => {
      tried.push(port);
      if (tried.length === 1) throw listenError('EADDRINUSE');
      await listenNet(server, port, host);
    };

    await using running = await start({ listenTwin });

    expect(tried.length).toBe(2);
    expect(tried[1]).toBe(running.server.port);
    expect((await answeredSocket('127.0.0.1', running.server)).statusLine).toBe('HTTP/1.1 200 OK');
  });

  it('goes on without [::1] on a machine that has no IPv6', async () => {
    for (const code of ['EADDRNOTAVAIL', 'EAFNOSUPPORT']) {
      await using running = await start({
        listenTwin: () => Promise.reject(listenError(code)),
      });

      expect(running.lines[0]!.startsWith(`Airlock is running at ${running.server.browserUrl}/#code=`)).toBe(true);
      const served = await answeredSocket('127.0.0.1', running.server);
      expect(served.statusLine).toBe('HTTP/1.1 200 OK');
      served.socket.destroy();
    }
  });
});
