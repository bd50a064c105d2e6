import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toolVersion, type AnyTool, type ToolContext } from '@airlock/core';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { z } from 'zod';
import { MAX_ANSWERS_IN_FLIGHT, MAX_QUEUED_ANSWERS } from './bounded-requests-transport';
import type { McpServerConfig } from './mcp-config';
import type { McpServerStatus } from './mcp-connection';
import { resolveLocalhostAsStock } from '../http/test-support';
import { McpManager, type McpManagerOptions } from './mcp-manager';
import { killAllWith, processesWith, uniqueToken } from '../tools/test-support';
import { httpMcpServer, type Route, sizedTool } from './fixtures/http-mcp-server';
import { changingToolsServer, everythingServer, filesystemServer, scriptThenEverything, until } from './fixtures/test-servers';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const silent = { info: () => undefined, warn: () => undefined };

function manager(servers: Record<string, McpServerConfig>, options: Omit<McpManagerOptions, 'servers'> = {}) {
  const instance = new McpManager({ servers: new Map(Object.entries(servers)), logger: silent, ...options });
  return Object.assign(instance, { [Symbol.asyncDispose]: () => instance.close() });
}

function context(overrides: Partial<ToolContext> = {}): ToolContext {
  return { signal: new AbortController().signal, timeoutMs: 20_000, sessionId: 'session-1', ...overrides };
}

function toolNamed(instance: McpManager, name: string): AnyTool {
  const tool = instance.tools().find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}; have ${instance.tools().map((t) => t.name).join(', ')}`);
  return tool;
}

function statusOf(instance: McpManager, name: string): McpServerStatus {
  const status = instance.status().find((candidate) => candidate.name === name);
  if (status === undefined) throw new Error(`no server ${name}`);
  return status;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('reference servers over stdio, next to broken ones', () => {
  let mcp: ReturnType<typeof manager>;
  let dir: string;
  const secretName = 'AIRLOCK_MCP_TEST_SECRET';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airlock-mcp-fs-'));
    await writeFile(join(dir, 'notes.txt'), 'line one\nline two\n');
    process.env[secretName] = 'do-not-leak';
    mcp = manager({
      everything: everythingServer({ FROM_CONFIG: 'configured value' }),
      files: filesystemServer(dir),
      missing: { transport: 'stdio', command: 'airlock-no-such-command', args: [], env: {} },
      quitter: { transport: 'stdio', command: process.execPath, args: ['-e', "process.stderr.write('cannot start: no token\\n'); process.exit(3)"], env: {} },
    });
    await mcp.start();
  });

  afterAll(async () => {
    delete process.env[secretName];
    await mcp.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('reports the working servers ready and the broken ones with their error', () => {
    const [everything, files, missing, quitter] = mcp.status();
    expect(everything).toStrictEqual({ name: 'everything', transport: 'stdio', state: 'ready', toolCount: expect.any(Number), pid: expect.any(Number) });
    expect(files).toStrictEqual({ name: 'files', transport: 'stdio', state: 'ready', toolCount: 14, pid: expect.any(Number) });
    expect(missing).toStrictEqual({ name: 'missing', transport: 'stdio', state: 'error', error: 'the command airlock-no-such-command was not found on the PATH', toolCount: 0 });
    expect(quitter).toStrictEqual({
      name: 'quitter',
      transport: 'stdio',
      state: 'error',
      error: 'the server closed the connection; stderr: cannot start: no token',
      toolCount: 0,
    });
    expect(mcp.tools().filter((tool) => tool.source === 'mcp:missing' || tool.source === 'mcp:quitter')).toStrictEqual([]);
  });

  test('lists the tools prefixed with their server, schemas passed through unchanged', () => {
    const names = mcp.tools().map((tool) => tool.name);
    expect(names).toContain('everything__echo');
    expect(names).toContain('everything__get-sum');
    expect(names).toContain('files__read_text_file');
    expect(names).toContain('files__write_file');
    // Needs the experimental tasks API to call, so it is not offered.
    expect(names).not.toContain('everything__simulate-research-query');
    expect(names.every((name) => /^[A-Za-z0-9_-]{1,64}$/.test(name))).toBe(true);
    expect(statusOf(mcp, 'everything').toolCount).toBe(names.filter((name) => name.startsWith('everything__')).length);

    const echo = toolNamed(mcp, 'everything__echo');
    expect({ description: echo.description, jsonSchema: echo.jsonSchema, annotations: echo.annotations, source: echo.source }).toStrictEqual({
      description: 'Echoes back the input string',
      jsonSchema: {
        type: 'object',
        properties: { message: { type: 'string', description: 'Message to echo' } },
        required: ['message'],
        $schema: 'http://json-schema.org/draft-07/schema#',
      },
      annotations: { exactGrants: true, readOnly: true, destructive: false, idempotent: true, openWorld: false },
      source: 'mcp:everything',
    });
    expect(echo.parameters.safeParse({ message: 'hi' }).success).toBe(true);
    expect(echo.parameters.safeParse({ message: 42 }).success).toBe(false);
    expect(toolNamed(mcp, 'files__write_file').annotations).toStrictEqual({ exactGrants: true, readOnly: false, destructive: true, idempotent: true, openWorld: false });
  });

  test('calls tools through execute', async () => {
    await expect(toolNamed(mcp, 'everything__echo').execute({ message: 'hello' }, context())).resolves.toStrictEqual({ content: 'Echo: hello' });
    await expect(toolNamed(mcp, 'files__read_text_file').execute({ path: join(dir, 'notes.txt') }, context())).resolves.toStrictEqual({
      content: 'line one\nline two\n',
    });
  });

  test('returns a failing call as an error result', async () => {
    const outside = await toolNamed(mcp, 'files__read_text_file').execute({ path: '/etc/hostname' }, context());
    expect(outside).toStrictEqual({ content: expect.stringContaining('Access denied'), isError: true });
  });

  test('gives a stdio server its configured environment over a minimal one, never this process’s secrets', async () => {
    const output = (await toolNamed(mcp, 'everything__get-env').execute({}, context())) as { content: string };
    const env = JSON.parse(output.content) as Record<string, string>;
    expect(env.FROM_CONFIG).toBe('configured value');
    expect(Object.hasOwn(env, secretName)).toBe(false);
    // The marker its processes are found by when Airlock is gone (a random id, no secret).
    const allowed = new Set(['FROM_CONFIG', 'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'AIRLOCK_MCP_SERVER']);
    expect(Object.keys(env).filter((name) => !allowed.has(name))).toStrictEqual([]);
  });
});

describe('a server whose tools change', () => {
  let mcp: ReturnType<typeof manager>;

  beforeAll(async () => {
    mcp = manager({ changing: changingToolsServer() });
    await mcp.start();
    expect(statusOf(mcp, 'changing').state).toBe('ready');
  });

  afterAll(() => mcp.close());

  test('refreshes the tool list on notifications/tools/list_changed', async () => {
    expect(mcp.tools().map((tool) => tool.name)).not.toContain('changing__late_tool');
    const listed = until(mcp, () => mcp.tools().some((tool) => tool.name === 'changing__late_tool'));
    await expect(toolNamed(mcp, 'changing__add_tool').execute({ name: 'late_tool' }, context())).resolves.toStrictEqual({ content: 'added' });
    await listed;
    await expect(toolNamed(mcp, 'changing__late_tool').execute({}, context())).resolves.toStrictEqual({ content: 'I am late_tool' });
    expect(statusOf(mcp, 'changing').toolCount).toBe(mcp.tools().length);
  });

  test('a rewritten description and schema give a tool with the new ones, and a new version', async () => {
    const before = toolNamed(mcp, 'changing__greet');
    expect(before.description).toBe('Greets someone.');
    expect(before.parameters.safeParse({ name: 'Ada', excited: true }).success).toBe(true);
    const changed = until(mcp, () => toolNamed(mcp, 'changing__greet').description !== 'Greets someone.');
    await toolNamed(mcp, 'changing__change_greet').execute({ description: 'Greets someone, maybe loudly.' }, context());
    await changed;

    const after = toolNamed(mcp, 'changing__greet');
    expect(after.description).toBe('Greets someone, maybe loudly.');
    expect(after.jsonSchema?.properties).toStrictEqual({ name: { type: 'string' }, excited: { type: 'boolean' } });
    expect(before.jsonSchema?.properties).toStrictEqual({ name: { type: 'string' } });
    expect(toolVersion(after)).not.toBe(toolVersion(before));
    expect(after.parameters.safeParse({ name: 'Ada', excited: 'yes' }).success).toBe(false);
    await expect(after.execute({ name: 'Ada', excited: true }, context())).resolves.toStrictEqual({ content: 'Hello, Ada!!!' });
  });

  test('flattens mixed content and keeps the error flag', async () => {
    await expect(toolNamed(mcp, 'changing__mixed_content').execute({}, context())).resolves.toStrictEqual({
      isError: true,
      content: 'first\n[image: image/png, 5 bytes]\n[resource: file:///notes.txt]\nnote text\n[resource: file:///blob.bin, application/octet-stream, 3 bytes]',
    });
  });

  test('stops a call at its timeout and on its signal, and the server stays usable', async () => {
    const waiting = toolNamed(mcp, 'changing__wait_for_cancel');
    await expect(waiting.execute({}, context({ timeoutMs: 50 }))).rejects.toThrow('Request timed out');

    const controller = new AbortController();
    const call = waiting.execute({}, context({ signal: controller.signal }));
    controller.abort(new Error('cancelled by the person'));
    await expect(call).rejects.toThrow('cancelled by the person');

    await expect(toolNamed(mcp, 'changing__greet').execute({ name: 'Bo' }, context())).resolves.toStrictEqual({ content: 'Hello, Bo!' });
  });
});

describe('crashes', () => {
  test('restarts a killed server; the same tool object works again and close() stops the process', async () => {
    await using mcp = manager({ everything: everythingServer() }, { restart: { initialDelayMs: 0 } });
    await mcp.start();
    const echo = toolNamed(mcp, 'everything__echo');
    const firstPid = statusOf(mcp, 'everything').pid!;

    const seen: { state: string; tools: number }[] = [];
    mcp.onChange(() => seen.push({ state: statusOf(mcp, 'everything').state, tools: mcp.tools().length }));
    const down = until(mcp, () => statusOf(mcp, 'everything').state === 'restarting');
    process.kill(firstPid, 'SIGKILL');
    await down;
    const back = until(mcp, () => statusOf(mcp, 'everything').state === 'ready');
    expect(statusOf(mcp, 'everything')).toStrictEqual({
      name: 'everything',
      transport: 'stdio',
      state: 'restarting',
      error: expect.stringMatching(/^the server process exited/),
      toolCount: 0,
    });
    await expect(echo.execute({ message: 'too early' }, context())).rejects.toThrow('the MCP server "everything" is restarting');
    await back;

    expect(seen[0]).toStrictEqual({ state: 'restarting', tools: 0 });
    expect(seen.at(-1)?.state).toBe('ready');
    const secondPid = statusOf(mcp, 'everything').pid!;
    expect(secondPid).not.toBe(firstPid);
    await expect(echo.execute({ message: 'again' }, context())).resolves.toStrictEqual({ content: 'Echo: again' });

    await mcp.close();
    expect(mcp.status()).toStrictEqual([{ name: 'everything', transport: 'stdio', state: 'closed', toolCount: 0 }]);
    expect(mcp.tools()).toStrictEqual([]);
    expect(isAlive(secondPid)).toBe(false);
  });

  test('gives up after the configured number of restart attempts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'airlock-mcp-crash-'));
    try {
      const marker = join(dir, 'broken');
      // Starts normally until the marker file exists; from then on every restart exits at once.
      const server = scriptThenEverything(
        "if (require('node:fs').existsSync(process.env.MARKER)) { process.stderr.write('marker found\\n'); process.exit(2) }",
        { MARKER: marker },
      );
      await using mcp = manager({ flaky: server }, { restart: { maxAttempts: 2, initialDelayMs: 0 } });
      await mcp.start();
      expect(statusOf(mcp, 'flaky').state).toBe('ready');

      const states: string[] = [];
      mcp.onChange(() => states.push(statusOf(mcp, 'flaky').state));
      const failed = until(mcp, () => statusOf(mcp, 'flaky').state === 'error');
      await writeFile(marker, '');
      process.kill(statusOf(mcp, 'flaky').pid!, 'SIGKILL');
      await failed;

      expect(statusOf(mcp, 'flaky')).toStrictEqual({
        name: 'flaky',
        transport: 'stdio',
        state: 'error',
        error: 'the server closed the connection; stderr: marker found (gave up after 2 restart attempts)',
        toolCount: 0,
      });
      // Down, first attempt failed (the reason changes), second attempt failed.
      expect(states).toStrictEqual(['restarting', 'restarting', 'error']);
      expect(mcp.tools()).toStrictEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A stdio server that ignores the end of its stdin and SIGTERM, and starts two shells with `tag` on their command line:
 * one in its process group, one that left it (a session of its own).
 */
function stubbornServer(tag: string): McpServerConfig {
  return scriptThenEverything(
    "process.on('SIGTERM', () => undefined); setInterval(() => undefined, 1 << 30); const { spawn } = require('node:child_process'); " +
      `spawn('/bin/sh', ['-c', 'sleep 300; : ${tag}'], { stdio: 'ignore' }); spawn('/bin/sh', ['-c', 'sleep 300; : ${tag}'], { stdio: 'ignore', detached: true })`,
  );
}

const MANAGER_MODULE = fileURLToPath(new URL('./mcp-manager.ts', import.meta.url));

describe('the processes of a stdio server', () => {
  test('do not outlive a server killed with SIGKILL, even one that ignores the end of its stdin and SIGTERM', async () => {
    const tag = uniqueToken();
    // Stands for Airlock: starts the MCP server, says when it is ready, and is then killed with SIGKILL.
    const code =
      `import { McpManager } from ${JSON.stringify(MANAGER_MODULE)}; ` +
      `const manager = new McpManager({ servers: new Map([['stubborn', ${JSON.stringify(stubbornServer(tag))}]]), logger: { info() {}, warn() {} } }); ` +
      'await manager.start(); console.log(JSON.stringify(manager.status()[0])); setInterval(() => undefined, 1000);';
    const standIn = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const status = await new Promise<McpServerStatus>((resolve, reject) => {
        let text = '';
        standIn.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('\n')) resolve(JSON.parse(text) as McpServerStatus);
        });
        standIn.once('exit', (exitCode) => reject(new Error(`the stand-in server exited with ${exitCode}`)));
      });
      expect(status.state).toBe('ready');
      // The MCP server itself and both shells, besides the stand-in (its own command line holds the tag too).
      const running = processesWith(tag).filter((pid) => pid !== standIn.pid);
      expect([running.length, running.includes(status.pid!)]).toStrictEqual([3, true]);
      standIn.kill('SIGKILL');
      await vi.waitFor(() => expect(processesWith(tag)).toStrictEqual([]), { timeout: 20_000 });
    } finally {
      standIn.kill('SIGKILL');
      killAllWith(tag);
    }
  }, 90_000);

  test('are stopped by close(), in the server’s group or not, when the server ignores SIGTERM', async () => {
    const tag = uniqueToken();
    try {
      await using mcp = manager({ stubborn: stubbornServer(tag) });
      await mcp.start();
      expect([statusOf(mcp, 'stubborn').state, processesWith(tag).length]).toStrictEqual(['ready', 3]);
      await mcp.close();
      await vi.waitFor(() => expect(processesWith(tag)).toStrictEqual([]));
    } finally {
      killAllWith(tag);
    }
  });

  test('that the server left running are stopped when it exits, before it is restarted', async () => {
    const tag = uniqueToken();
    try {
      await using mcp = manager({ stubborn: stubbornServer(tag) }, { restart: { initialDelayMs: 0 } });
      await mcp.start();
      const first = processesWith(tag);
      expect(first).toHaveLength(3);
      const back = until(mcp, () => statusOf(mcp, 'stubborn').state === 'restarting');
      process.kill(statusOf(mcp, 'stubborn').pid!, 'SIGKILL');
      await back;
      await until(mcp, () => statusOf(mcp, 'stubborn').state === 'ready');
      await vi.waitFor(() => expect(processesWith(tag).filter((pid) => first.includes(pid))).toStrictEqual([]));
      expect(processesWith(tag)).toHaveLength(3);
    } finally {
      killAllWith(tag);
    }
  });
});

describe('Streamable HTTP', () => {
  let http: Server;
  let url: string;

  beforeAll(async () => {
    http = createServer((request, response) => {
      if (request.headers.authorization !== 'Bearer right-token') {
        response.writeHead(401, { 'content-type': 'text/plain' }).end('unauthorized');
        return;
      }
      const server = new McpServer({ name: 'http-fixture', version: '1.0.0' });
      server.registerTool('shout', { description: 'Upper-cases text.', inputSchema: { text: z.string() } }, async ({ text }) => ({
        content: [{ type: 'text', text: text.toUpperCase() }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      response.on('close', () => {
        void transport.close();
        void server.close();
      });
      server
        .connect(transport)
        .then(() => transport.handleRequest(request, response))
        .catch(() => response.destroy());
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });

  afterAll(async () => {
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });

  test('sends the configured headers and calls the tools; a refused server shows its error', async () => {
    await using mcp = manager({
      remote: { transport: 'http', url, headers: { Authorization: 'Bearer right-token' } },
      refused: { transport: 'http', url, headers: { Authorization: 'Bearer wrong-token' } },
    });
    await mcp.start();
    expect(mcp.status()).toStrictEqual([
      { name: 'remote', transport: 'http', state: 'ready', toolCount: 1 },
      { name: 'refused', transport: 'http', state: 'error', error: 'the server answered HTTP 401 (Streamable HTTP error: Error POSTing to endpoint: unauthorized)', toolCount: 0 },
    ]);
    expect(JSON.stringify(mcp.status())).not.toContain('token');
    await expect(toolNamed(mcp, 'remote__shout').execute({ text: 'quiet' }, context())).resolves.toStrictEqual({ content: 'QUIET' });
  });

  test('a server named localhost gets its headers and calls at the loopback address it holds, not a process holding the other one on its port', async () => {
    const port = Number(new URL(url).port);
    // Another process (a tool call with the network) holds [::1] on the MCP server's port.
    const seen: string[] = [];
    const impostor = createServer((request, response) => {
      seen.push(String(request.headers.authorization));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve, reject) => impostor.once('error', reject).listen({ port, host: '::1', ipv6Only: true }, resolve));
    // A stock Debian or Ubuntu resolver: localhost is ::1 first, then 127.0.0.1.
    const restoreResolver = resolveLocalhostAsStock();
    try {
      await using mcp = manager({ remote: { transport: 'http', url: `http://localhost:${port}/mcp`, headers: { Authorization: 'Bearer right-token' } } });
      await mcp.start();
      expect(mcp.status()).toStrictEqual([{ name: 'remote', transport: 'http', state: 'ready', toolCount: 1 }]);
      await expect(toolNamed(mcp, 'remote__shout').execute({ text: 'quiet' }, context())).resolves.toStrictEqual({ content: 'QUIET' });
      expect(seen).toStrictEqual([]);
    } finally {
      restoreResolver();
      impostor.closeAllConnections();
      await new Promise((resolve) => impostor.close(resolve));
    }
  });
});

const MiB = 1024 * 1024;

describe('Streamable HTTP answers over 10 MiB', () => {
  test.each([
    ['an event stream', false],
    ['JSON', true],
  ])('in %s fail their call with a clear error, and the connection goes on', async (_, json) => {
    await using remote = await httpMcpServer({ json, tools: sizedTool });
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } });
    await mcp.start();
    const sized = toolNamed(mcp, 'remote__sized');

    await expect(sized.execute({ bytes: 11 * MiB }, context())).rejects.toThrow(/^the MCP server's answer was over 10 MiB$/);
    const under = (await sized.execute({ bytes: 10 * MiB - 1024 }, context())) as { content: string };
    expect(under.content.length).toBe(10 * MiB - 1024);
    expect(statusOf(mcp, 'remote')).toStrictEqual({ name: 'remote', transport: 'http', state: 'ready', toolCount: 1 });
  });

  test('fail at once when their declared length is over 10 MiB', async () => {
    await using remote = await httpMcpServer({
      json: true,
      tools: sizedTool,
      route: (_request, response, message) => {
        if (message?.method !== 'tools/call') return false;
        // Declares 20 MiB, sends a few bytes and holds the rest back for good.
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(20 * MiB) }).write('{"jsonrpc"');
        return true;
      },
    });
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } });
    await mcp.start();
    await expect(toolNamed(mcp, 'remote__sized').execute({ bytes: 1 }, context())).rejects.toThrow(/^the MCP server's answer was over 10 MiB$/);
  });

  test('on the server’s own stream restart the connection, as after a crash', async () => {
    let gets = 0;
    let openStream: (() => void) | undefined;
    await using remote = await httpMcpServer({
      json: false,
      tools: sizedTool,
      route: (request, response) => {
        if (request.method !== 'GET') return false;
        gets += 1;
        if (gets > 1) {
          response.writeHead(405).end();
          return true;
        }
        // The first stream sends one event line of 11 MiB, without its end, once the test asks for it.
        response.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
        openStream = () => response.write(`data: ${'x'.repeat(11 * MiB)}`);
        return true;
      },
    });
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } }, { restart: { initialDelayMs: 0 } });
    await mcp.start();
    await vi.waitFor(() => expect(openStream).toBeDefined());

    const down = until(mcp, () => statusOf(mcp, 'remote').state === 'restarting');
    openStream?.();
    await down;
    expect(statusOf(mcp, 'remote')).toStrictEqual({
      name: 'remote',
      transport: 'http',
      state: 'restarting',
      error: 'the server sent a message over 10 MiB',
      toolCount: 0,
    });
    await until(mcp, () => statusOf(mcp, 'remote').state === 'ready');
    await expect(toolNamed(mcp, 'remote__sized').execute({ bytes: 3 }, context())).resolves.toStrictEqual({ content: 'xxx' });
  });
});

/** Has `TextDecoderStream` record what it passes on: the text the SDK's event-stream parser is handed. */
function recordDecodedText(): { decoded: string[]; [Symbol.dispose]: () => void } {
  const decoded: string[] = [];
  const Decoder = globalThis.TextDecoderStream;
  vi.stubGlobal(
    'TextDecoderStream',
    class {
      readonly writable: WritableStream<Uint8Array>;
      readonly readable: ReadableStream<string>;
      constructor(...args: ConstructorParameters<typeof TextDecoderStream>) {
        const decoder = new Decoder(...args);
        const tap = new TransformStream<string, string>({
          transform(chunk, controller) {
            decoded.push(chunk);
            controller.enqueue(chunk);
          },
        });
        decoder.readable.pipeTo(tap.writable).catch(() => undefined);
        this.writable = decoder.writable;
        this.readable = tap.readable;
      }
    },
  );
  return { decoded, [Symbol.dispose]: () => vi.unstubAllGlobals() };
}

/** Answers tools/call with `text`, in an event stream of `chunks(answer)`, each written on its own. */
function answeringWith(text: string, chunks: (answer: string) => string[]): Route {
  return (_request, response, message) => {
    if (message?.method !== 'tools/call') return false;
    const answer = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text }] } });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    void (async () => {
      for (const chunk of chunks(answer)) {
        response.write(chunk);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      response.end();
    })();
    return true;
  };
}

describe('a Streamable HTTP server whose event stream ends its lines with CR', () => {
  // Its CR and LF are escaped in the JSON: no line end, and left as they are.
  const answerText = `first line\r\nsecond ${'x'.repeat(100_000)}`;

  // Found in review: the SDK's event-stream parser searches for both CR and LF from each line's start, so with lone CRs
  // each search ran to the chunk's end: 16 chunks of 128 KiB of CR held the server's thread for 1.4 s.
  test('has the stream reach the SDK with LF line ends only, and its messages arrive whole', async () => {
    await using remote = await httpMcpServer({
      json: false,
      tools: sizedTool,
      route: answeringWith(answerText, (answer) => {
        const cut = answer.indexOf('"result"');
        return [
          // Empty lines and comments: 256 KiB of lone CRs.
          ...Array.from({ length: 4 }, () => '\r'.repeat(32 * 1024) + ':\r'.repeat(16 * 1024)),
          // One event whose data is two lines, joined with an LF: the answer's JSON, cut between two of its members,
          // the CRLF between them cut between chunks.
          `event: message\rdata: ${answer.slice(0, cut)}\r`,
          `\ndata: ${answer.slice(cut)}\r\r`,
          ': more\r\n',
        ];
      }),
    });
    using recorded = recordDecodedText();
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } });
    await mcp.start();
    await expect(toolNamed(mcp, 'remote__sized').execute({ bytes: 1 }, context())).resolves.toStrictEqual({ content: answerText });
    const all = recorded.decoded.join('');
    expect(all.includes('\r')).toBe(false);
    // The 256 KiB went through it, as LFs.
    expect(all.split(':\n'.repeat(16 * 1024))).toHaveLength(5);
    expect(statusOf(mcp, 'remote')).toStrictEqual({ name: 'remote', transport: 'http', state: 'ready', toolCount: 1 });
  });

  // The parser held a CR at a chunk's end until the next chunk, to tell CR from CRLF: a stream that ended there lost
  // its last event, and the call waited for its timeout.
  test('has an answer whose blank line is a lone CR at the stream’s end arrive', async () => {
    await using remote = await httpMcpServer({ json: false, tools: sizedTool, route: answeringWith(answerText, (answer) => [`event: message\rdata: ${answer}\r\r`]) });
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } });
    await mcp.start();
    await expect(toolNamed(mcp, 'remote__sized').execute({ bytes: 1 }, context({ timeoutMs: 5000 }))).resolves.toStrictEqual({ content: answerText });
  });
});

describe('a Streamable HTTP server that floods Airlock with ping requests on its own stream', () => {
  // Found from outside: 20,000 pings over the server's stream had Airlock post 20,000 answers at once, 9,000 sockets.
  test('gets at most the bound of answers posted at once, is disconnected with a log line, restarted, and answers the next call', async () => {
    let gets = 0;
    let answersPosted = 0;
    let flood: (() => void) | undefined;
    await using remote = await httpMcpServer({
      json: false,
      tools: sizedTool,
      route: (request, response, message) => {
        if (request.method === 'POST' && message !== undefined && 'id' in message && !('method' in message)) {
          // An answer to a ping: held, as a slow or hostile server holds it.
          answersPosted += 1;
          return true;
        }
        if (request.method !== 'GET') return false;
        gets += 1;
        if (gets > 1) {
          response.writeHead(405).end();
          return true;
        }
        const pings = Array.from({ length: 20_000 }, (_, n) => `event: message\ndata: {"jsonrpc":"2.0","id":"p${n}","method":"ping"}\n\n`);
        response.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
        flood = () => response.write(pings.join(''));
        return true;
      },
    });
    const warnings: string[] = [];
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } }, { restart: { initialDelayMs: 0 }, logger: { info: () => undefined, warn: (line) => warnings.push(line) } });
    await mcp.start();
    await vi.waitFor(() => expect(flood).toBeDefined(), { timeout: 20_000 });
    flood?.();
    await vi.waitFor(() =>
      expect(warnings).toStrictEqual([
        `MCP server "remote": the server sent requests faster than it read their answers: over ${MAX_QUEUED_ANSWERS} answers or 16 MiB waited to be sent to it (a flood, or it does not read its input)`,
      ]),
      { timeout: 20_000 },
    );
    await until(mcp, () => statusOf(mcp, 'remote').state === 'ready');
    await expect(toolNamed(mcp, 'remote__sized').execute({ bytes: 3 }, context())).resolves.toStrictEqual({ content: 'xxx' });
    expect(answersPosted).toBeLessThanOrEqual(MAX_ANSWERS_IN_FLIGHT);
  });
});

describe('a server that floods notifications/tools/list_changed while its listing fails', () => {
  test('gets one log line per failed refresh, not one per notification', async () => {
    let listings = 0;
    await using remote = await httpMcpServer({
      json: false,
      tools: (server) => {
        server.registerTool('flood', { description: 'Says its tools changed, 1,000 times.' }, async (extra) => {
          for (let sent = 0; sent < 1000; sent += 1) await extra.sendNotification({ method: 'notifications/tools/list_changed' });
          return { content: [{ type: 'text', text: 'sent' }] };
        });
      },
      route: (_request, response, message) => {
        if (message?.method !== 'tools/list') return false;
        listings += 1;
        if (listings === 1) return false;
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'listing broke' } }));
        return true;
      },
    });
    const warnings: string[] = [];
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } }, { logger: { info: () => undefined, warn: (line) => warnings.push(line) } });
    await mcp.start();

    await expect(toolNamed(mcp, 'remote__flood').execute({}, context())).resolves.toStrictEqual({ content: 'sent' });
    await vi.waitFor(() => {
      expect(listings).toBeGreaterThan(1);
      expect(warnings.length).toBe(listings - 1);
    });
    expect(new Set(warnings)).toStrictEqual(new Set(['MCP server "remote": refreshing its tools failed: MCP error -32603: listing broke']));
    expect(statusOf(mcp, 'remote').state).toBe('ready');
  });
});

describe('a Streamable HTTP server that keeps a call’s event stream open', () => {
  // Found in review: the SDK read a call's stream until the server ended it, so a server that never did held a socket
  // for each call ever made, answered or given up on, and went on being read.
  test('has it ended once the call is answered, and once Airlock gives up on it', async () => {
    const streams: { name: string | undefined; closed: boolean }[] = [];
    await using remote = await httpMcpServer({
      json: false,
      tools: (server) => {
        sizedTool(server);
        server.registerTool('silent', { description: 'Never answers.' }, () => new Promise<never>(() => undefined));
      },
      route: (_request, response, message) => {
        if (message?.method !== 'tools/call') return false;
        const stream = { name: message.params?.name, closed: false };
        streams.push(stream);
        response.on('close', () => (stream.closed = true));
        response.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
        if (stream.name === 'sized') {
          const answer = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'answered' }] } });
          response.write(`event: message\ndata: ${answer}\n\n`);
        }
        return true;
      },
    });
    const warnings: string[] = [];
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } }, { logger: { info: () => undefined, warn: (line) => warnings.push(line) } });
    await mcp.start();
    await expect(toolNamed(mcp, 'remote__sized').execute({ bytes: 1 }, context())).resolves.toStrictEqual({ content: 'answered' });
    await vi.waitFor(() => expect(streams).toStrictEqual([{ name: 'sized', closed: true }]));
    const abort = new AbortController();
    const silent = toolNamed(mcp, 'remote__silent').execute({}, context({ signal: abort.signal }));
    await vi.waitFor(() => expect(streams).toHaveLength(2));
    abort.abort();
    await expect(silent).rejects.toThrow();
    await vi.waitFor(() => expect(streams).toStrictEqual([{ name: 'sized', closed: true }, { name: 'silent', closed: true }]));
    expect(statusOf(mcp, 'remote')).toStrictEqual({ name: 'remote', transport: 'http', state: 'ready', toolCount: 2 });
    expect(warnings).toStrictEqual([]);
  });
});

describe('a Streamable HTTP server that never ends a call’s JSON answer', () => {
  // Found in review: the SDK read the body until the server ended it, after the call was given up on too.
  test('has it ended once Airlock gives up on the call, and logs nothing of it', async () => {
    const streams: { closed: boolean }[] = [];
    await using remote = await httpMcpServer({
      json: true,
      tools: sizedTool,
      route: (_request, response, message) => {
        if (message?.method !== 'tools/call') return false;
        const stream = { closed: false };
        streams.push(stream);
        response.on('close', () => (stream.closed = true));
        response.writeHead(200, { 'content-type': 'application/json' }).write(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},`);
        return true;
      },
    });
    const warnings: string[] = [];
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } }, { logger: { info: () => undefined, warn: (line) => warnings.push(line) } });
    await mcp.start();
    const abort = new AbortController();
    const call = toolNamed(mcp, 'remote__sized').execute({ bytes: 1 }, context({ signal: abort.signal }));
    await vi.waitFor(() => expect(streams).toHaveLength(1));
    abort.abort();
    await expect(call).rejects.toThrow();
    await vi.waitFor(() => expect(streams).toStrictEqual([{ closed: true }]));
    expect(statusOf(mcp, 'remote')).toStrictEqual({ name: 'remote', transport: 'http', state: 'ready', toolCount: 1 });
    expect(warnings).toStrictEqual([]);
  });
});

describe('a Streamable HTTP server whose call’s event stream ends before the answer', () => {
  // Found in review: the call waited for its timeout (10 minutes by default) for an answer that could no longer come.
  test.each([
    ['it crashes', true],
    ['it ends the stream', false],
  ])('when %s, fails the call at once saying so, and the connection goes on', async (_, crash) => {
    let calls = 0;
    await using remote = await httpMcpServer({
      json: false,
      tools: sizedTool,
      route: (_request, response, message) => {
        if (message?.method !== 'tools/call' || (calls += 1) > 1) return false;
        response.writeHead(200, { 'content-type': 'text/event-stream' }).write(': working\n\n', () => (crash ? response.socket?.destroy() : response.end()));
        return true;
      },
    });
    const warnings: string[] = [];
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } }, { logger: { info: () => undefined, warn: (line) => warnings.push(line) } });
    await mcp.start();
    await expect(toolNamed(mcp, 'remote__sized').execute({ bytes: 1 }, context({ timeoutMs: 25_000 }))).rejects.toThrow(
      'MCP error -32603: the MCP server ended the stream of its answer before it answered',
    );
    await expect(toolNamed(mcp, 'remote__sized').execute({ bytes: 2 }, context())).resolves.toStrictEqual({ content: 'xx' });
    expect(warnings).toStrictEqual([]);
  });
});

describe('a Streamable HTTP server that ends a call’s event stream after an event with an id', () => {
  test('has the call answered on the stream the SDK resumes from that id, not failed', async () => {
    let callId: unknown;
    await using remote = await httpMcpServer({
      json: false,
      tools: sizedTool,
      route: (request, response, message) => {
        if (request.method === 'GET' && request.headers['last-event-id'] === 'e1') {
          const answer = JSON.stringify({ jsonrpc: '2.0', id: callId, result: { content: [{ type: 'text', text: 'resumed' }] } });
          response.writeHead(200, { 'content-type': 'text/event-stream' }).end(`id: e2\nevent: message\ndata: ${answer}\n\n`);
          return true;
        }
        if (message?.method !== 'tools/call') return false;
        callId = message.id;
        response.writeHead(200, { 'content-type': 'text/event-stream' }).end('id: e1\nretry: 10\ndata: \n\n');
        return true;
      },
    });
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } });
    await mcp.start();
    await expect(toolNamed(mcp, 'remote__sized').execute({ bytes: 1 }, context())).resolves.toStrictEqual({ content: 'resumed' });
  });
});

describe('a Streamable HTTP server that restarts and no longer knows the session', () => {
  // Found in review: each request with the old session id was answered 404 and failed, the server shown ready, until
  // Airlock itself was restarted.
  test('fails the call that found it out saying so, is connected anew, and answers the next call', async () => {
    const sessions = new Map<string, StreamableHTTPServerTransport>();
    const http = createServer((request, response) => {
      const id = request.headers['mcp-session-id'];
      const known = typeof id === 'string' ? sessions.get(id) : undefined;
      if (typeof id === 'string' && known === undefined) {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
        return;
      }
      if (known !== undefined) {
        void known.handleRequest(request, response);
        return;
      }
      const server = new McpServer({ name: 'stateful', version: '1.0.0' });
      sizedTool(server);
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
      });
      void server.connect(transport).then(() => transport.handleRequest(request, response));
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    try {
      const warnings: string[] = [];
      await using mcp = manager(
        { remote: { transport: 'http', url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, headers: {} } },
        { restart: { initialDelayMs: 0 }, logger: { info: () => undefined, warn: (line) => warnings.push(line) } },
      );
      await mcp.start();
      await expect(toolNamed(mcp, 'remote__sized').execute({ bytes: 2 }, context())).resolves.toStrictEqual({ content: 'xx' });
      // The server restarts: its sessions are gone.
      sessions.clear();
      await expect(toolNamed(mcp, 'remote__sized').execute({ bytes: 2 }, context())).rejects.toThrow(
        'the MCP server "remote" was disconnected: the server no longer knows the session (it restarted, or ended it)',
      );
      await until(mcp, () => statusOf(mcp, 'remote').state === 'ready');
      await expect(toolNamed(mcp, 'remote__sized').execute({ bytes: 3 }, context())).resolves.toStrictEqual({ content: 'xxx' });
      expect(sessions.size).toBe(1);
      expect(warnings).toStrictEqual(['MCP server "remote": the server no longer knows the session (it restarted, or ended it)']);
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });
});
