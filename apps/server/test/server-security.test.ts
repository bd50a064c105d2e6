import { ChatService, type AirlockServices, type AppRouter, type LoopEvent, type ModelInfo } from '@airlock/api';
import { createAirlockClient } from '@airlock/client';
import { ApprovalRegistry } from '@airlock/core';
import { deferred, hangingStep, ScriptedModel, type ScriptStep } from '@airlock/core/testing';
import { createTRPCClient, createWSClient, TRPCClientError, wsLink } from '@trpc/client';
import { createHmac, randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, realpath, stat, symlink, writeFile } from 'node:fs/promises';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { request, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { ConfigError, loadConfig, type Capacity } from '../src/config';
import { startServer, type RunningServer, type StartServerOptions } from '../src/start-server';
import { tempDir } from './support/temp-dir';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
const MODEL_INFO: ModelInfo = { provider: 'demo', baseURL: null, model: 'demo', demo: true };

interface TestServer extends AsyncDisposable {
  server: RunningServer;
  lines: string[];
  model: ScriptedModel;
}

async function startTestServer(
  options: Partial<Omit<StartServerOptions, 'config' | 'services'>> & {
    host?: string;
    tokenFile?: string;
    allowedOrigins?: string[];
    steps?: ScriptStep[];
    capacity?: Partial<Capacity>;
  } = {},
): Promise<TestServer> {
  const { host = '127.0.0.1', tokenFile, allowedOrigins = [], steps = [], capacity = {}, ...rest } = options;
  const model = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [] });
  const services: AirlockServices = { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => MODEL_INFO };
  const lines: string[] = [];
  const server = await startServer({
    config: { host, port: 0, token: TOKEN, allowedOrigins, capacity, ...(tokenFile === undefined ? {} : { tokenFile }) },
    services,
    webRoot: join(tmpdir(), 'airlock-no-such-web-root'),
    log: (line) => lines.push(line),
    ...rest,
  });
  return { server, lines, model, [Symbol.asyncDispose]: () => server.close() };
}

function connectClient(server: RunningServer, connectionParams?: Record<string, string>) {
  const closed = deferred<number>();
  const wsClient = createWSClient({
    url: server.wsUrl,
    WebSocket: WebSocket as unknown as typeof globalThis.WebSocket,
    ...(connectionParams === undefined ? {} : { connectionParams }),
    // A refused client would otherwise retry at once, forever.
    retryDelayMs: () => 60_000,
    onClose: (event) => closed.resolve(event?.code ?? 0),
  });
  const client = createTRPCClient<AppRouter>({ links: [wsLink({ client: wsClient })] });
  return { client, closed: closed.promise, [Symbol.asyncDispose]: () => wsClient.close() };
}

interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A plain HTTP request with full control over Host and Origin (fetch does not allow setting Host). */
function httpGet(port: number, path: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { Connection: 'close', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends a raw WebSocket upgrade and answers the status: 101 when the server accepted it. */
function upgradeStatus(port: number, headers: Record<string, string>, path = '/trpc'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A raw `ws` socket that records what the server sends and how it closes. */
function rawSocket(url: string, options?: ConstructorParameters<typeof WebSocket>[2]) {
  const socket = new WebSocket(url, options);
  const messages: unknown[] = [];
  const opened = new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() }));
  });
  socket.on('error', () => undefined);
  socket.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString('utf8'))));
  return { socket, messages, opened, closed, [Symbol.asyncDispose]: async () => socket.terminate() };
}

describe('WebSocket authentication', () => {
  it('lets a client with the right token call model.info and sessions.list', async () => {
    await using running = await startTestServer();
    await using connection = connectClient(running.server, { token: TOKEN });

    expect(await connection.client.model.info.query()).toStrictEqual(MODEL_INFO);
    expect(await connection.client.sessions.list.query()).toStrictEqual({ sessions: [], nextCursor: null });
  });

  it('refuses a client with a wrong token and closes its socket', async () => {
    await using running = await startTestServer();
    await using connection = connectClient(running.server, { token: `${TOKEN}x` });

    await expect(connection.client.sessions.list.query()).rejects.toBeInstanceOf(TRPCClientError);
    await connection.closed;
  });

  it('refuses a client that presents no token and closes its socket', async () => {
    await using running = await startTestServer();
    await using connection = connectClient(running.server);

    await expect(connection.client.model.info.query()).rejects.toBeInstanceOf(TRPCClientError);
    await connection.closed;
  });

  it('answers a wrong token with UNAUTHORIZED on the wire, then closes', async () => {
    await using running = await startTestServer();
    await using raw = rawSocket(`${running.server.wsUrl}?connectionParams=1`);
    await raw.opened;

    raw.socket.send(JSON.stringify({ method: 'connectionParams', data: { token: 'not-the-token-not-the-token-not-the-token' } }));

    await raw.closed;
    expect(raw.messages).toMatchObject([{ id: null, error: { data: { code: 'UNAUTHORIZED', httpStatus: 401 } } }]);
  });

  it('closes a socket that never presents its token', async () => {
    await using running = await startTestServer({ capacity: { authTimeoutMs: 50 } });
    await using raw = rawSocket(`${running.server.wsUrl}?connectionParams=1`);
    await raw.opened;

    expect(await raw.closed).toStrictEqual({ code: 1008, reason: 'no token presented' });
  });

  it('proves it knows the token before the client sends it, when the upgrade asks with a nonce', async () => {
    await using running = await startTestServer();
    const nonce = randomBytes(16).toString('base64url');
    await using raw = rawSocket(`${running.server.wsUrl}?connectionParams=1&proof=${nonce}`);
    const mac = createHmac('sha256', TOKEN).update(`airlock server proof v2\n127.0.0.1:${running.server.port}\n${nonce}`).digest('base64url');
    await vi.waitFor(() => expect(raw.messages).toStrictEqual([{ airlock: 'proof', mac }]), { timeout: 10_000 });

    raw.socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));
    raw.socket.send(JSON.stringify({ id: 1, method: 'query', params: { path: 'model.info', input: undefined } }));
    await vi.waitFor(() => expect(raw.messages).toHaveLength(2), { timeout: 10_000 });
    expect(raw.messages[1]).toStrictEqual({ id: 1, result: { type: 'data', data: MODEL_INFO } });
  });

  it('binds its proof to the Host the upgrade named, in lower case: each of its own names gets its own answer', async () => {
    await using running = await startTestServer();
    const { port } = running.server;
    const runHost = new URL(running.server.browserUrl).host;
    const named: [host: string, proven: string][] = [
      [`localhost:${port}`, `localhost:${port}`],
      [`[::1]:${port}`, `[::1]:${port}`],
      [runHost.toUpperCase(), runHost],
    ];
    for (const [host, proven] of named) {
      const nonce = randomBytes(16).toString('base64url');
      await using raw = rawSocket(`${running.server.wsUrl}?connectionParams=1&proof=${nonce}`, { headers: { host } });
      const mac = createHmac('sha256', TOKEN).update(`airlock server proof v2\n${proven}\n${nonce}`).digest('base64url');
      await vi.waitFor(() => expect(raw.messages).toStrictEqual([{ airlock: 'proof', mac }]), { timeout: 10_000 });
    }
  });

  it('is proven to @airlock/client under each name a client or page dials it by: 127.0.0.1, localhost, [::1], the run name', async () => {
    await using running = await startTestServer();
    const { port } = running.server;
    // Node resolves no *.localhost name: every socket goes to 127.0.0.1, naming the dialed host as its Host.
    class LoopbackWebSocket extends WebSocket {
      constructor(url: string) {
        super(url, { createConnection: () => connect({ host: '127.0.0.1', port }) });
      }
    }
    const dialed = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, new URL(running.server.browserUrl).host];
    for (const host of dialed) {
      const client = createAirlockClient({ url: `ws://${host}/trpc`, token: TOKEN, WebSocket: LoopbackWebSocket, retryDelayMs: () => 10 });
      await using _closed = { [Symbol.asyncDispose]: () => client.close() };
      expect(await client.trpc.model.info.query()).toStrictEqual(MODEL_INFO);
    }
  });

  it('sends no proof for a malformed nonce, nor without one: the token comes first, as for any tRPC client', async () => {
    await using running = await startTestServer();
    for (const query of ['?connectionParams=1&proof=short', '?connectionParams=1&proof=not%2Fbase64url%2Fnot%2Fbase64url', '?connectionParams=1']) {
      await using raw = rawSocket(`${running.server.wsUrl}${query}`);
      await raw.opened;
      raw.socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));
      raw.socket.send(JSON.stringify({ id: 1, method: 'query', params: { path: 'model.info', input: undefined } }));
      await vi.waitFor(() => expect(raw.messages).toHaveLength(1), { timeout: 10_000 });
      expect(raw.messages).toStrictEqual([{ id: 1, result: { type: 'data', data: MODEL_INFO } }]);
    }
  });

  it('closes a connection that sends a frame over 1 MiB with code 1009', async () => {
    await using running = await startTestServer();
    await using raw = rawSocket(`${running.server.wsUrl}?connectionParams=1`);
    await raw.opened;
    raw.socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));

    raw.socket.send('x'.repeat(1024 * 1024 + 1));

    expect((await raw.closed).code).toBe(1009);
  });

  it('logs nothing for a socket that breaks the WebSocket protocol, with or without the token (found in review)', async () => {
    await using running = await startTestServer();
    const { port } = running.server;
    const logged = running.lines.length;
    const mask = [0, 0, 0, 0];
    const frames: [string, number[], number][] = [
      ['a reserved bit set', [0xc1, 0x80, ...mask], 1002],
      ['an unknown opcode', [0x83, 0x80, ...mask], 1002],
      ['text that is not UTF-8', [0x81, 0x81, ...mask, 0xff], 1007],
      ['a frame from a client without a mask', [0x81, 0x01, 0x61], 1002],
      ['a message over 1 MiB, announced', [0x81, 0xff, 0, 0, 0, 0, 0, 0x20, 0, 0, ...mask], 1009],
    ];
    // Without the token: a raw upgrade, then the frame.
    for (const [what, frame, code] of frames) {
      const closedWith = await new Promise<number>((resolve) => {
        const socket = connect(port, '127.0.0.1', () =>
          socket.write(
            `GET /trpc?connectionParams=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
              'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
          ),
        );
        let received = Buffer.alloc(0);
        socket.on('data', (chunk: Buffer) => {
          const first = received.length === 0;
          received = Buffer.concat([received, chunk]);
          if (first) socket.write(Buffer.from(frame));
          // The close frame, after the 101's headers: 0x88, its length, then the code.
          const at = received.indexOf(Buffer.from([0x88]), received.indexOf('\r\n\r\n'));
          if (at !== -1 && received.length >= at + 4) resolve(received.readUInt16BE(at + 2));
        });
        socket.on('close', () => resolve(0));
        socket.on('error', () => undefined);
      });
      expect(closedWith, what).toBe(code);
    }
    // With it: a message over the limit.
    await using raw = rawSocket(`${running.server.wsUrl}?connectionParams=1`);
    await raw.opened;
    raw.socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));
    raw.socket.send('x'.repeat(1024 * 1024 + 1));
    expect((await raw.closed).code).toBe(1009);
    // Before, each made a line ("Error in connection: Invalid WebSocket frame: RSV1 must be clear", …): anyone could
    // fill the output, a socket at a time.
    expect(running.lines.slice(logged)).toStrictEqual([]);
  });
});

describe('Origin and Host checks', () => {
  it('refuses an upgrade from a foreign Origin with 403 before any WebSocket exists', async () => {
    await using running = await startTestServer();
    const socket = new WebSocket(running.server.wsUrl, { origin: 'http://evil.test' });
    socket.on('error', () => undefined);

    const status = await new Promise<number>((resolve) => {
      socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      socket.on('open', () => resolve(101));
    });

    expect(status).toBe(403);
  });

  it('refuses a DNS-rebinding Host on HTTP and on upgrade', async () => {
    await using running = await startTestServer();
    const { port } = running.server;

    const page = await httpGet(port, '/', { Host: `evil.test:${port}` });
    expect(page.status).toBe(403);
    expect(page.body).toBe('Forbidden\n');
    expect(await upgradeStatus(port, { Host: `evil.test:${port}` })).toBe(403);
    expect(await upgradeStatus(port, { Host: `evil.test:${port}`, Origin: `http://evil.test:${port}` })).toBe(403);
  });

  it('refuses a request or upgrade that names its Host twice, even when the first is its own', async () => {
    await using running = await startTestServer();
    const { port } = running.server;
    const exchange = (lines: string[]) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.end([...lines, '', ''].join('\r\n')));
        let answer = '';
        socket.setEncoding('latin1').on('data', (chunk: string) => (answer += chunk)).on('close', () => resolve(answer.split('\r\n')[0]!)).on('error', reject);
      });
    const own = `Host: 127.0.0.1:${port}`;
    const upgrade = ['Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Version: 13', `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`];

    expect(await exchange(['GET /healthz HTTP/1.1', own, 'Connection: close'])).toBe('HTTP/1.1 200 OK');
    expect(await exchange(['GET /healthz HTTP/1.1', own, `Host: evil.test:${port}`, 'Connection: close'])).toBe('HTTP/1.1 403 Forbidden');
    expect(await exchange(['GET /healthz HTTP/1.1', own, own, 'Connection: close'])).toBe('HTTP/1.1 403 Forbidden');
    expect(await exchange(['GET /trpc HTTP/1.1', own, `Host: evil.test:${port}`, ...upgrade])).toBe('HTTP/1.1 403 Forbidden');
  });

  it('refuses loopback names with another port in Host', async () => {
    await using running = await startTestServer();
    const { port } = running.server;

    expect((await httpGet(port, '/healthz', { Host: `127.0.0.1:${port + 1}` })).status).toBe(403);
    expect(await upgradeStatus(port, { Host: 'localhost' })).toBe(403);
  });

  it('accepts the server’s own origins and a configured one, and no other', async () => {
    await using running = await startTestServer({ allowedOrigins: ['https://chat.example.test'] });
    const { port } = running.server;
    const host = { Host: `127.0.0.1:${port}` };

    expect(await upgradeStatus(port, { ...host, Origin: 'https://chat.example.test' })).toBe(101);
    expect(await upgradeStatus(port, { ...host, Origin: `http://localhost:${port}` })).toBe(101);
    expect(await upgradeStatus(port, { Host: `[::1]:${port}`, Origin: `http://[::1]:${port}` })).toBe(101);
    expect(await upgradeStatus(port, { ...host })).toBe(101);
    expect(await upgradeStatus(port, { ...host, Origin: 'https://other.example.test' })).toBe(403);
    expect(await upgradeStatus(port, { ...host, Origin: 'null' })).toBe(403);
    expect((await httpGet(port, '/healthz', { ...host, Origin: 'https://other.example.test' })).status).toBe(403);
  });

  it('refuses an upgrade on any path but /trpc', async () => {
    await using running = await startTestServer();
    const { port } = running.server;

    expect(await upgradeStatus(port, { Host: `127.0.0.1:${port}` }, '/')).toBe(403);
    expect(await upgradeStatus(port, { Host: `127.0.0.1:${port}` }, '/trpc/extra')).toBe(403);
  });

  it('refuses upgrades beyond maxConnections with 503', async () => {
    await using running = await startTestServer({ capacity: { maxConnections: 1 } });
    await using first = connectClient(running.server, { token: TOKEN });
    await first.client.model.info.query();

    expect(await upgradeStatus(running.server.port, { Host: `127.0.0.1:${running.server.port}` })).toBe(503);
  });
});

describe('HTTP endpoints', () => {
  it('answers /healthz with JSON and the security headers', async () => {
    await using running = await startTestServer();
    const { port } = running.server;

    const answer = await httpGet(port, '/healthz', { Host: `127.0.0.1:${port}` });

    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(answer.body)).toStrictEqual({ ok: true });
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['x-frame-options']).toBe('DENY');
    expect(answer.headers['referrer-policy']).toBe('no-referrer');
    expect(answer.headers['x-dns-prefetch-control']).toBe('off');
    expect(answer.headers['content-security-policy']).toContain(`connect-src 'self' ws://127.0.0.1:${port}`);
  });

  it('/healthz says only that the server is up without the token; with it, its version and the runs going; a wrong token is refused with 401 (found in review)', async () => {
    await using running = await startTestServer({ steps: [hangingStep('never')] });
    const { port } = running.server;
    const host = { Host: `127.0.0.1:${port}` };
    await using connection = connectClient(running.server, { token: TOKEN });
    const started = deferred<void>();
    const run = connection.client.chat.stream.subscribe({ sessionId: 's1', runId: 'r1', message: 'go' }, { onData: () => started.resolve() });
    await started.promise;
    const body = async (headers: Record<string, string>) => {
      const answer = await httpGet(port, '/healthz', { ...host, ...headers });
      return [answer.status, JSON.parse(answer.body) as unknown];
    };

    expect(await body({})).toStrictEqual([200, { ok: true }]);
    expect(await body({ Authorization: `Bearer ${TOKEN}` })).toStrictEqual([200, { ok: true, version: expect.any(String), activeRuns: 1 }]);
    expect(await body({ Authorization: `bearer ${TOKEN}` })).toStrictEqual([200, { ok: true, version: expect.any(String), activeRuns: 1 }]);
    for (const wrong of [`Bearer ${TOKEN}x`, 'Bearer', `Basic ${TOKEN}`, TOKEN]) {
      expect(await body({ Authorization: wrong })).toStrictEqual([401, { problem: 'wrong-token' }]);
    }
    run.unsubscribe();
  });

  it('answers a request Node refuses before it reaches the server (headers too large, not HTTP) with the security headers', async () => {
    await using running = await startTestServer();
    const { port } = running.server;
    const exchange = (request: string) =>
      new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(request));
        let answer = '';
        // Closed with part of the request unread, the socket may be reset after the answer: what came is the answer.
        socket.setEncoding('latin1').on('data', (chunk: string) => (answer += chunk)).on('close', () => resolve(answer)).on('error', () => resolve(answer));
      });
    const headersOf = (answer: string) => {
      const [status = '', ...lines] = answer.split('\r\n\r\n')[0]!.split('\r\n');
      return { status, headers: new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()])) };
    };
    const tooLarge = headersOf(await exchange(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    const notHttp = headersOf(await exchange('NOT HTTP AT ALL\r\n\r\n'));
    expect([tooLarge.status, notHttp.status]).toStrictEqual(['HTTP/1.1 431 Request Header Fields Too Large', 'HTTP/1.1 400 Bad Request']);
    for (const { headers } of [tooLarge, notHttp]) {
      expect([headers.get('x-content-type-options'), headers.get('x-frame-options'), headers.get('referrer-policy'), headers.get('connection')]).toStrictEqual(['nosniff', 'DENY', 'no-referrer', 'close']);
      expect(headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
  });

  it('prints one start-up line with a one-time code in the URL fragment, not the token, then the model', async () => {
    await using running = await startTestServer();

    expect(running.server.browserUrl).toMatch(new RegExp(`^http://airlock-[a-z2-7]{16}\\.localhost:${running.server.port}$`));
    expect(running.lines).toStrictEqual([expect.stringMatching(/^Airlock is running at \S+\/#code=[A-Za-z0-9_-]{27}$/), 'Model: Demo model (offline)']);
    expect(running.lines[0]!.startsWith(`Airlock is running at ${running.server.browserUrl}/#code=`)).toBe(true);
  });

  it('leaves the token out of the start-up line when it came from a file, and says which file holds it', async () => {
    await using running = await startTestServer({ tokenFile: '/run/airlock/token' });
    const url = running.server.browserUrl;
    expect(url).toMatch(new RegExp(`^http://airlock-[a-z2-7]{16}\\.localhost:${running.server.port}$`));

    expect(running.lines).toStrictEqual([
      `Airlock is running at ${url}/ (token not shown: it is in /run/airlock/token; open ${url}/#token=<that token>, or paste it on the page)`,
      'Model: Demo model (offline)',
    ]);
  });

  it('warns at start-up that it speaks plain HTTP when it listens beyond loopback', async () => {
    await using running = await startTestServer({ host: '0.0.0.0' });

    expect(running.lines).toContainEqual(
      'Warning: Airlock listens on 0.0.0.0, beyond this machine, over plain HTTP: the token, the chats and every decision cross the network ' +
        'unencrypted, for anyone on the way to read and reuse. Put a reverse proxy that speaks TLS (https and wss) in front of it, with only ' +
        'the proxy able to reach Airlock, or reach it through an SSH tunnel or a VPN.',
    );
  });

  it('answers a hint page when the web app is not built', async () => {
    await using running = await startTestServer();
    const { port } = running.server;

    const page = await httpGet(port, '/', { Host: `localhost:${port}` });

    expect(page.status).toBe(200);
    expect(page.body).toContain('pnpm build');
  });

  it('serves the built app, falls back to index.html for routes, and never leaves the web root', async () => {
    await using dir = await tempDir('airlock-server-');
    const webRoot = join(dir.path, 'dist');
    await mkdir(join(webRoot, 'assets'), { recursive: true });
    await writeFile(join(webRoot, 'index.html'), '<!doctype html><title>app</title>');
    await writeFile(join(webRoot, 'assets', 'app-1234.js'), 'console.log(1);');
    await writeFile(join(dir.path, 'secret.txt'), 'secret');
    await using running = await startTestServer({ webRoot });
    const { port } = running.server;
    const get = (path: string) => httpGet(port, path, { Host: `127.0.0.1:${port}` });

    const index = await get('/');
    expect([index.status, index.headers['content-type'], index.body]).toStrictEqual([200, 'text/html; charset=utf-8', '<!doctype html><title>app</title>']);
    const script = await get('/assets/app-1234.js');
    expect([script.status, script.headers['content-type'], script.headers['cache-control']]).toStrictEqual([
      200,
      'text/javascript; charset=utf-8',
      'public, max-age=31536000, immutable',
    ]);
    expect((await get('/sessions/abc')).body).toBe('<!doctype html><title>app</title>');
    expect((await get('/missing.js')).status).toBe(404);
    for (const path of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/%2e%2e%2fsecret.txt']) {
      const answer = await get(path);
      expect(answer.body, path).not.toContain('secret');
      expect([200, 404], path).toContain(answer.status);
    }
  });

  it('logs nothing for a request its client cuts short: a download, or a start-up link’s body (found in review)', async () => {
    await using dir = await tempDir('airlock-server-');
    const webRoot = join(dir.path, 'dist');
    await mkdir(join(webRoot, 'assets'), { recursive: true });
    await writeFile(join(webRoot, 'index.html'), '<!doctype html><title>app</title>');
    await writeFile(join(webRoot, 'assets', 'app-1234.js'), Buffer.alloc(16 * 1024 * 1024, 0x20));
    // Each request's handling, once it has ended (after anything it logged), counted; and each begun, by its client's port.
    let ended = 0;
    await using running = await startTestServer({ webRoot, onRequestEnd: () => ended++ });
    const { port } = running.server;
    const logged = running.lines.length;
    const begun = new Map<number, () => void>();
    const onRequestStart = (message: unknown) => {
      const { server, socket } = message as { server: Server; socket: Socket };
      if ((server.address() as AddressInfo).port === port) begun.get(socket.remotePort!)?.();
    };
    /** Sends `head` and cuts the connection once the first bytes of an answer arrive, or once the server has begun handling it. */
    const cutShort = (head: string, at: 'answer' | 'begun') =>
      new Promise<void>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => {
          if (at === 'begun') begun.set(socket.localPort!, cut);
          socket.write(head);
        });
        const cut = () => {
          socket.destroy();
          resolve();
        };
        if (at === 'answer') socket.once('data', cut);
        socket.on('error', () => undefined);
      });
    subscribe('http.server.request.start', onRequestStart);
    try {
      for (let round = 0; round < 5; round++) {
        await cutShort(`GET /assets/app-1234.js HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`, 'answer');
        await cutShort(`POST /link-code HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"code":`, 'begun');
      }
    } finally {
      unsubscribe('http.server.request.start', onRequestStart);
    }
    // Every cut request's handling over; before, each made a line ("Error serving GET request: Premature close", "… POST …: aborted").
    await vi.waitFor(() => expect(ended).toBe(10));
    expect(running.lines.slice(logged)).toStrictEqual([]);
    // Still answering.
    expect((await httpGet(port, '/healthz', { Host: `127.0.0.1:${port}` })).status).toBe(200);
  });

  it('refuses methods other than GET and HEAD', async () => {
    await using running = await startTestServer();
    const { port } = running.server;

    const answer = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/healthz', method: 'POST', headers: { Host: `127.0.0.1:${port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{}');
    });

    expect(answer).toBe(405);
  });
});

/** Resolves with the first message from `socket` that `matches`. */
function messageMatching(socket: WebSocket, matches: (message: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const onMessage = (data: Buffer) => {
      const message = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      if (!matches(message)) return;
      socket.off('message', onMessage);
      resolve(message);
    };
    socket.on('message', onMessage);
  });
}

describe('subscriptions', () => {
  it('answers a stop at once while the run waits, and leaves the run going', async () => {
    await using running = await startTestServer({ steps: [hangingStep('thinking')] });
    await using raw = rawSocket(`${running.server.wsUrl}?connectionParams=1`);
    await raw.opened;
    raw.socket.send(JSON.stringify({ method: 'connectionParams', data: { token: TOKEN } }));
    const waiting = messageMatching(raw.socket, (m) => JSON.stringify(m).includes('"text":"thinking"'));
    raw.socket.send(JSON.stringify({ id: 1, method: 'subscription', params: { path: 'chat.stream', input: { sessionId: 'session-1', runId: 'run-1', message: 'hi' } } }));
    await waiting;

    // Nothing more will come from the run: the stream is parked on its log when the stop arrives.
    const stopped = messageMatching(raw.socket, (m) => m.id === 1 && (m.result as { type?: string } | undefined)?.type === 'stopped');
    raw.socket.send(JSON.stringify({ id: 1, method: 'subscription.stop' }));
    await stopped;

    await using connection = connectClient(running.server, { token: TOKEN });
    expect((await connection.client.sessions.list.query()).sessions).toMatchObject([{ sessionId: 'session-1', activeRunId: 'run-1' }]);
  });
});

describe('shutdown', () => {
  it('cancels running runs, tells connected clients, and stops listening', async () => {
    await using running = await startTestServer({ steps: [hangingStep('thinking')] });
    await using connection = connectClient(running.server, { token: TOKEN });
    const events: LoopEvent[] = [];
    const started = deferred<void>();
    const ended = deferred<void>();
    const subscription = connection.client.chat.stream.subscribe(
      { sessionId: 'session-1', message: 'hello' },
      {
        onData: ({ data }) => {
          events.push(data);
          if (data.type === 'text-delta') started.resolve();
          if (data.type === 'run-end') ended.resolve();
        },
        onError: (error) => ended.reject(error),
      },
    );
    await started.promise;

    await running.server.close();
    await ended.promise;
    subscription.unsubscribe();

    expect(events.at(-1)).toMatchObject({ type: 'run-end', reason: 'cancelled' });
    await connection.closed;
    await expect(httpGet(running.server.port, '/healthz', { Host: `127.0.0.1:${running.server.port}` })).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('loadConfig', () => {
  const load = async (argv: string[], env: Record<string, string> = {}) => {
    await using dir = await tempDir('airlock-server-');
    return loadConfig(argv, env, dir.path);
  };
  const problem = async (argv: string[], env: Record<string, string> = {}): Promise<string> => {
    try {
      await load(argv, env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).message;
    }
    throw new Error('expected a ConfigError');
  };

  it('defaults to loopback, port 7700, a fresh random token and the current directory', async () => {
    await using dir = await tempDir('airlock-server-');

    const config = loadConfig([], {}, dir.path);

    expect(config).toMatchObject({ host: '127.0.0.1', port: 7700, allowRemote: false, workspace: dir.path, tokenGenerated: true, allowedOrigins: [] });
    expect(config.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(loadConfig([], {}, dir.path).token).not.toBe(config.token);
  });

  it("never takes Airlock's own folder as the workspace: from there it defaults to ~/airlock-workspace", async () => {
    await using home = await tempDir('airlock-server-');
    const checkout = fileURLToPath(new URL('../../..', import.meta.url));
    // `npm start` runs in the checkout, and npm names where the person typed it in INIT_CWD.
    for (const env of [{ HOME: home.path }, { HOME: home.path, INIT_CWD: checkout }, { HOME: home.path, INIT_CWD: join(checkout, 'apps') }]) {
      expect(loadConfig([], env, checkout).workspace).toBe(join(home.path, 'airlock-workspace'));
    }
    expect((await stat(join(home.path, 'airlock-workspace'))).mode & 0o777).toBe(0o700);

    await using project = await tempDir('airlock-server-');
    expect(loadConfig([], { HOME: home.path, INIT_CWD: project.path }, checkout).workspace).toBe(project.path);
  });

  it("refuses a workspace that is, holds or is inside Airlock's own folder", async () => {
    await using dir = await tempDir('airlock-server-');
    const checkout = await realpath(fileURLToPath(new URL('../../..', import.meta.url)));
    for (const [workspace, how] of [
      [checkout, 'is the folder of'],
      [join(checkout, 'apps', 'server', 'src'), 'is inside'],
      [join(checkout, '..'), 'holds'],
    ] as const) {
      const attempt = () => loadConfig(['--workspace', workspace], {}, dir.path);
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(`${how} Airlock's own files (${checkout}): a tool allowed there could change Airlock itself`);
    }
    expect(() => loadConfig([], { AIRLOCK_WORKSPACE: checkout }, dir.path)).toThrow(/^AIRLOCK_WORKSPACE: /);
  });

  it('keeps chats in the XDG data folder unless told otherwise', async () => {
    await using dir = await tempDir('airlock-server-');
    expect(loadConfig([], { HOME: '/home/someone' }, dir.path).dataDir).toBe('/home/someone/.local/share/airlock');
    expect(loadConfig([], { HOME: '/home/someone', XDG_DATA_HOME: '/data' }, dir.path).dataDir).toBe('/data/airlock');
    expect(loadConfig(['--data-dir', 'chats'], {}, dir.path).dataDir).toBe(join(dir.path, 'chats'));
    expect(loadConfig([], { AIRLOCK_DATA_DIR: '/srv/airlock' }, dir.path).dataDir).toBe('/srv/airlock');
  });

  it('reads the environment, and flags win over it', async () => {
    await using dir = await tempDir('airlock-server-');
    const env = { AIRLOCK_PORT: '8000', AIRLOCK_TOKEN: TOKEN, AIRLOCK_MODEL_URL: 'http://127.0.0.1:8080/v1', AIRLOCK_ALLOWED_ORIGINS: 'https://chat.example.test, http://localhost:5173' };

    const config = loadConfig(['--port', '0', '--model=qwen'], env, dir.path);

    expect(config).toMatchObject({
      port: 0,
      token: TOKEN,
      tokenGenerated: false,
      model: 'qwen',
      modelUrl: 'http://127.0.0.1:8080/v1',
      allowedOrigins: ['https://chat.example.test', 'http://localhost:5173'],
    });
  });

  it('refuses a token file other users may read or change, naming it and the fix, and takes one only its owner may', async () => {
    await using dir = await tempDir('airlock-server-');
    const file = join(dir.path, 'token');
    await writeFile(file, `${TOKEN}\n`);

    await chmod(file, 0o644);
    expect(await problem(['--token-file', file])).toBe(`--token-file: "${file}" is open to other users (mode 0644); make it readable by you alone: chmod 600 ${file}`);
    await chmod(file, 0o620);
    expect(await problem([], { AIRLOCK_TOKEN_FILE: file })).toBe(`AIRLOCK_TOKEN_FILE: "${file}" is open to other users (mode 0620); make it readable by you alone: chmod 600 ${file}`);

    await chmod(file, 0o600);
    expect(loadConfig(['--token-file', file], {}, dir.path)).toMatchObject({ token: TOKEN, tokenGenerated: false, tokenFile: file, secretFiles: [file] });
    await chmod(file, 0o400);
    expect(loadConfig([], { AIRLOCK_TOKEN_FILE: file }, dir.path)).toMatchObject({ token: TOKEN, tokenFile: file });
  });

  it('quotes a token file path with spaces in the chmod it suggests', async () => {
    await using dir = await tempDir('airlock-server-');
    const file = join(dir.path, "my token's file");
    await writeFile(file, TOKEN, { mode: 0o640 });
    await chmod(file, 0o640);

    expect(await problem(['--token-file', file])).toBe(`--token-file: "${file}" is open to other users (mode 0640); make it readable by you alone: chmod 600 '${file.replaceAll("'", "'\\''")}'`);
  });

  // Found in review: running as root, a token file another user wrote (mode 0600, so owner-only) was taken, and that
  // user, who knew the token, ran commands through Airlock as root. Only root can give a file to another user.
  it.runIf(process.getuid?.() === 0)('refuses a token or API key file of another user, or in a folder of another user, naming it and not its content', async () => {
    await using dir = await tempDir('airlock-server-');
    const file = join(dir.path, 'token');
    await writeFile(file, `${TOKEN}\n`, { mode: 0o600 });
    await chown(file, 65534, 65534);
    const tokenProblem = await problem(['--token-file', file]);
    expect(tokenProblem).toBe(
      `--token-file: "${file}" is owned by another user (user 65534, Airlock runs as 0), who may change it and so set a token they know, with which they run commands through Airlock as you`,
    );
    expect(tokenProblem).not.toContain(TOKEN);
    expect(await problem([], { AIRLOCK_TOKEN_FILE: file })).toMatch(/^AIRLOCK_TOKEN_FILE: .* is owned by another user \(user 65534, Airlock runs as 0\)/);
    expect(await problem(['--api-key-file', file, '--model-url', 'http://127.0.0.1:9/v1'])).toBe(
      `--api-key-file: "${file}" is owned by another user (user 65534, Airlock runs as 0), who may change it and so put in a key of their own, under which the model server keeps your chats`,
    );

    // The file is root's, its folder another user's: they may put a file of their own in its place.
    const folder = join(dir.path, 'theirs');
    await mkdir(folder, { mode: 0o755 });
    await chown(folder, 65534, 65534);
    const inTheirs = join(folder, 'token');
    await writeFile(inTheirs, `${TOKEN}\n`, { mode: 0o600 });
    expect(await problem(['--token-file', inTheirs])).toBe(
      `--token-file: "${inTheirs}" is in a folder of another user (${folder} is owned by user 65534), who could put a file of their own in its place, and so set a token they know, with which they run commands through Airlock as you`,
    );

    // Root's own files are taken, as the server's own are.
    await chown(file, 0, 0);
    expect(loadConfig(['--token-file', file], {}, dir.path)).toMatchObject({ token: TOKEN, tokenFile: file });
  });

  it('refuses a token or API key file in a folder other users may change (no sticky bit), or an API key file they may change', async () => {
    await using dir = await tempDir('airlock-server-');
    const folder = join(dir.path, 'shared');
    await mkdir(folder);
    await chmod(folder, 0o777);
    const file = join(folder, 'token');
    await writeFile(file, `${TOKEN}\n`, { mode: 0o600 });
    expect(await problem(['--token-file', file])).toBe(
      `--token-file: "${file}" is in a folder other users may change (${folder}, mode 0777), who could put a file of their own in its place, and so set a token they know, with which they run commands through Airlock as you: chmod go-w ${folder}`,
    );
    expect(await problem(['--api-key-file', file, '--model-url', 'http://127.0.0.1:9/v1'])).toMatch(/^--api-key-file: .* is in a folder other users may change/);

    // With the sticky bit (as /tmp), only a file's owner may replace it.
    await chmod(folder, 0o1777);
    expect(loadConfig(['--token-file', file], {}, dir.path)).toMatchObject({ token: TOKEN, tokenFile: file });

    // An API key file may be read by others (it is not the shell's key), not changed by them.
    const keyFile = join(dir.path, 'key');
    await writeFile(keyFile, 'sk-test-key\n');
    await chmod(keyFile, 0o664);
    expect(await problem(['--api-key-file', keyFile, '--model-url', 'http://127.0.0.1:9/v1'])).toBe(
      `--api-key-file: "${keyFile}" may be changed by other users (mode 0664), who could then put in a key of their own, under which the model server keeps your chats: chmod go-w ${keyFile}`,
    );
    await chmod(keyFile, 0o644);
    expect(loadConfig(['--api-key-file', keyFile, '--model-url', 'http://127.0.0.1:9/v1'], {}, dir.path)).toMatchObject({ apiKey: 'sk-test-key', secretFiles: [keyFile] });
  });

  it('reads the limit on processes of a tool call, 1024 by default, and names a bad one', async () => {
    expect((await load([])).toolMaxProcesses).toBe(1024);
    expect((await load(['--tool-max-processes', '4096'], { AIRLOCK_TOOL_MAX_PROCESSES: '64' })).toolMaxProcesses).toBe(4096);
    expect((await load([], { AIRLOCK_TOOL_MAX_PROCESSES: '64' })).toolMaxProcesses).toBe(64);
    for (const bad of ['15', '4194305', '512k', '-1', '1e3', 'unlimited']) {
      expect(await problem([`--tool-max-processes=${bad}`])).toBe('--tool-max-processes: must be a whole number from 16 to 4194304');
    }
    expect(await problem([], { AIRLOCK_TOOL_MAX_PROCESSES: '0' })).toBe('AIRLOCK_TOOL_MAX_PROCESSES: must be a whole number from 16 to 4194304');
  });

  it('reads the limit on open files of each process of a tool call, 1024 by default, and names a bad one', async () => {
    expect((await load([])).toolMaxOpenFiles).toBe(1024);
    expect((await load(['--tool-max-open-files', '65536'], { AIRLOCK_TOOL_MAX_OPEN_FILES: '4096' })).toolMaxOpenFiles).toBe(65536);
    expect((await load([], { AIRLOCK_TOOL_MAX_OPEN_FILES: '4096' })).toolMaxOpenFiles).toBe(4096);
    for (const bad of ['15', '1048577', '4k', '-1', '1e3', 'unlimited']) {
      expect(await problem([`--tool-max-open-files=${bad}`])).toBe('--tool-max-open-files: must be a whole number from 16 to 1048576');
    }
    expect(await problem([], { AIRLOCK_TOOL_MAX_OPEN_FILES: '0' })).toBe('AIRLOCK_TOOL_MAX_OPEN_FILES: must be a whole number from 16 to 1048576');
  });

  it('reads the size of a tool call’s /tmp and /dev/shm, 512 MiB by default, and names a bad one', async () => {
    expect((await load([])).toolTmpSize).toBe(512);
    expect((await load(['--tool-tmp-size', '2048'], { AIRLOCK_TOOL_TMP_SIZE: '64' })).toolTmpSize).toBe(2048);
    expect((await load([], { AIRLOCK_TOOL_TMP_SIZE: '64' })).toolTmpSize).toBe(64);
    for (const bad of ['0', '1048577', '512m', '-1', '1e3', 'unlimited']) {
      expect(await problem([`--tool-tmp-size=${bad}`])).toBe('--tool-tmp-size: must be a whole number of MiB from 1 to 1048576');
    }
    expect(await problem([], { AIRLOCK_TOOL_TMP_SIZE: '0' })).toBe('AIRLOCK_TOOL_TMP_SIZE: must be a whole number of MiB from 1 to 1048576');
  });

  it('names a bad port', async () => {
    expect(await problem([], { AIRLOCK_PORT: '70000' })).toBe('AIRLOCK_PORT: must be a whole number from 0 to 65535');
    expect(await problem(['--port', 'http'])).toBe('--port: must be a whole number from 0 to 65535');
  });

  it('names a token shorter than 32 characters', async () => {
    expect(await problem([], { AIRLOCK_TOKEN: 'short' })).toMatch(/^AIRLOCK_TOKEN: must be at least 32 characters/);
  });

  it('refuses a non-loopback host unless remote binding is allowed', async () => {
    expect(await problem([], { AIRLOCK_HOST: '0.0.0.0' })).toMatch(/^AIRLOCK_HOST: "0\.0\.0\.0" is not a loopback address.*--allow-remote/);
    expect(await problem(['--host', '192.168.1.10'])).toMatch(/^--host: /);
    expect((await load(['--host', '0.0.0.0', '--allow-remote'])).allowRemote).toBe(true);
    expect((await load([], { AIRLOCK_HOST: '0.0.0.0', AIRLOCK_ALLOW_REMOTE: '1' })).host).toBe('0.0.0.0');
    expect((await load(['--host', 'localhost'])).allowRemote).toBe(false);
  });

  it('takes an IPv6 address in brackets, as a URL writes it, as the address', async () => {
    expect((await load(['--host', '[::1]'])).host).toBe('::1');
    expect((await load([], { AIRLOCK_HOST: '[::1]' })).host).toBe('::1');
    // Brackets hold an IPv6 address only.
    expect(await problem(['--host', '[127.0.0.1]'])).toBe('--host: must be an IP address or a host name');
    expect(await problem(['--host', '[localhost]'])).toBe('--host: must be an IP address or a host name');
  });

  it('names a workspace that is missing or not a directory', async () => {
    await using dir = await tempDir('airlock-server-');
    await writeFile(join(dir.path, 'file.txt'), 'x');

    expect(await problem(['--workspace', join(dir.path, 'missing')])).toBe(`--workspace: "${join(dir.path, 'missing')}" does not exist`);
    expect(await problem([], { AIRLOCK_WORKSPACE: join(dir.path, 'file.txt') })).toBe(`AIRLOCK_WORKSPACE: "${join(dir.path, 'file.txt')}" is not a directory`);
  });

  it('names a model URL that is not http or https', async () => {
    expect(await problem([], { AIRLOCK_MODEL_URL: 'ftp://models.example.test' })).toBe('AIRLOCK_MODEL_URL: must be an http:// or https:// URL');
    expect(await problem(['--model-url', 'not a url'])).toBe('--model-url: must be an http:// or https:// URL');
  });

  it('names a model URL holding a user or password, or a query or fragment, without repeating it', async () => {
    const withPassword = await problem(['--model-url', 'http://modeluser:S3cretModelPass@127.0.0.1:8080/v1']);
    expect(withPassword).toBe('--model-url: must not contain a user or password: give the key in AIRLOCK_API_KEY or --api-key-file instead');
    const withQuery = await problem([], { AIRLOCK_MODEL_URL: 'http://127.0.0.1:8080/v1?api_key=SECRETQUERYKEY' });
    expect(withQuery).toBe('AIRLOCK_MODEL_URL: must not contain a query (?…) or a fragment (#…): Airlock adds the API paths (/models, /chat/completions) after it');
    expect(await problem(['--model-url', 'http://127.0.0.1:8080/v1#models'])).toMatch(/^--model-url: must not contain a query/);
    expect(await problem(['--model-url', 'http://127.0.0.1:8080/v1?'])).toMatch(/^--model-url: must not contain a query/);
    expect((await load(['--model-url', 'http://127.0.0.1:8080/v1'])).modelUrl).toBe('http://127.0.0.1:8080/v1');
  });

  it('names an unknown flag, a missing flag value and a positional argument', async () => {
    expect(await problem(['--bogus'])).toBe('--bogus: unknown flag (see --help)');
    expect(await problem(['--token', TOKEN])).toBe('--token: unknown flag (see --help)');
    expect(await problem(['--port'])).toBe('--port: needs a value');
    expect(await problem(['serve'])).toBe('argument "serve": airlock takes no positional arguments (see --help)');
  });

  it('names an allowed origin that is not an exact origin, and a missing MCP config', async () => {
    expect(await problem([], { AIRLOCK_ALLOWED_ORIGINS: 'https://chat.example.test/app' })).toBe(
      'AIRLOCK_ALLOWED_ORIGINS: "https://chat.example.test/app" must be an exact origin with no path, e.g. https://chat.example.test',
    );
    expect(await problem([], { AIRLOCK_ALLOWED_ORIGINS: '*' })).toMatch(/^AIRLOCK_ALLOWED_ORIGINS: "\*" is not an origin/);
    expect(await problem([], { AIRLOCK_MCP_CONFIG: '/no/such/mcp.json' })).toBe('AIRLOCK_MCP_CONFIG: "/no/such/mcp.json" does not exist');
  });

  it('refuses a flag given twice with different values, naming it; the same value twice is one', async () => {
    expect(await problem(['--tool-sandbox', 'bubblewrap', '--tool-sandbox', 'none'])).toBe('--tool-sandbox: given more than once with different values; give it once');
    expect(await problem(['--tool-network', 'off', '--tool-network=on'])).toBe('--tool-network: given more than once with different values; give it once');
    expect(await problem(['--database-url', 'postgres://a:secret1@db/x', '--database-url', 'postgres://a:secret2@db/x'])).not.toContain('secret');
    expect(await load(['--tool-network', 'off', '--tool-network', 'off'])).toMatchObject({ toolNetwork: false });
    expect(await load(['--allow-remote', '--allow-remote', '--host', '0.0.0.0'])).toMatchObject({ allowRemote: true });
  });

  it('reads a negative number after a flag as its value, so the range check names it', async () => {
    expect(await problem(['--max-running-calls', '-1'])).toBe('--max-running-calls: must be a whole number from 1 to 100000');
    expect(await problem(['--max-running-calls=-1'])).toBe('--max-running-calls: must be a whole number from 1 to 100000');
    expect(await problem(['--port', '-80'])).toBe('--port: must be a whole number from 0 to 65535');
    expect(await problem(['--port', '--model', 'x'])).toBe('--port: needs a value');
  });

  it('refuses an empty AIRLOCK_TOOL_NETWORK or AIRLOCK_TOOL_SANDBOX rather than take the default', async () => {
    expect(await problem([], { AIRLOCK_TOOL_NETWORK: '' })).toBe('AIRLOCK_TOOL_NETWORK: is set but empty: give on or off, or unset it for the default');
    expect(await problem([], { AIRLOCK_TOOL_SANDBOX: '' })).toBe('AIRLOCK_TOOL_SANDBOX: is set but empty: give auto, bubblewrap or none, or unset it for the default');
    // A flag wins over the variable, empty or not.
    expect(await load(['--tool-network', 'off'], { AIRLOCK_TOOL_NETWORK: '' })).toMatchObject({ toolNetwork: false });
  });

  it('refuses the network off without the sandbox, naming what was written', async () => {
    expect(await problem(['--tool-network', 'off', '--tool-sandbox', 'none'])).toBe('--tool-network: off needs the bubblewrap sandbox, which --tool-sandbox none turns off');
    expect(await problem([], { AIRLOCK_TOOL_NETWORK: 'off', AIRLOCK_TOOL_SANDBOX: 'none' })).toBe(
      'AIRLOCK_TOOL_NETWORK: off needs the bubblewrap sandbox, which AIRLOCK_TOOL_SANDBOX none turns off',
    );
  });

  it('keeps where each given setting came from, and the MCP file as given besides its real path', async () => {
    await using dir = await tempDir('airlock-server-');
    await writeFile(join(dir.path, 'servers.json'), '{"mcpServers": {}}');
    await symlink(join(dir.path, 'servers.json'), join(dir.path, 'mcp.json'));

    const config = loadConfig(['--mcp-config', 'mcp.json', '--tool-network', 'off'], { AIRLOCK_PORT: '0' }, dir.path);

    expect(config).toMatchObject({ mcpConfigPath: join(dir.path, 'servers.json'), mcpConfigName: join(dir.path, 'mcp.json') });
    expect(config.sources).toStrictEqual({ 'mcp-config': '--mcp-config', 'tool-network': '--tool-network', port: 'AIRLOCK_PORT' });
  });
});
