import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolContext } from '@airlock/core';
import { describe, expect, test, vi } from 'vitest';
import type { McpServerConfig } from './mcp-config';
import { MAX_DEFINITION_CHARS_PER_SERVER, MAX_LIST_PAGES, MAX_TOOLS_PER_SERVER, MIN_RELIST_INTERVAL_MS } from './mcp-connection';
import { McpManager, type McpManagerOptions } from './mcp-manager';
import { MAX_QUEUED_ANSWERS } from './bounded-requests-transport';
import { manualClock } from './fixtures/manual-clock';
import { httpMcpServer, sizedTool } from './fixtures/http-mcp-server';
import { deepMessagesServer, hostileServer, until } from './fixtures/test-servers';
import { MAX_MCP_MESSAGE_DEPTH } from './json-depth';

vi.setConfig({ testTimeout: 90_000, hookTimeout: 30_000 });

function manager(servers: Record<string, McpServerConfig>, options: Omit<McpManagerOptions, 'servers'> = {}) {
  const warnings: string[] = [];
  const instance = new McpManager({ servers: new Map(Object.entries(servers)), logger: { info: () => undefined, warn: (line) => warnings.push(line) }, ...options });
  return Object.assign(instance, { warnings, [Symbol.asyncDispose]: () => instance.close() });
}

function context(): ToolContext {
  return { signal: new AbortController().signal, timeoutMs: 20_000, sessionId: 'session-1' };
}

const MANAGER_MODULE = fileURLToPath(new URL('./mcp-manager.ts', import.meta.url));

describe('a tool whose output schema holds a regular expression that backtracks', () => {
  test('has its result checked without running the expression: the server answers it and the next call', async () => {
    // 34 characters: with the expression run (as the SDK's default validator did), a check takes about half an hour.
    const server = hostileServer('redos', { REDOS_CHARS: '34' });
    // Stands for Airlock, in a process of its own: a thread held by the check cannot hold the test's.
    const code =
      `import { McpManager } from ${JSON.stringify(MANAGER_MODULE)}; ` +
      `const mcp = new McpManager({ servers: new Map([['wx', ${JSON.stringify(server)}]]), logger: { info() {}, warn() {} } }); ` +
      'await mcp.start(); ' +
      "const context = { signal: new AbortController().signal, timeoutMs: 20000, sessionId: 's' }; " +
      'const call = (name) => mcp.tools().find((tool) => tool.name === name).execute({}, context).then((ok) => ({ ok }), (error) => ({ error: error.message })); ' +
      "const results = [await call('wx__get_weather'), await call('wx__typed'), await call('wx__echo')]; " +
      'console.log(JSON.stringify(results)); await mcp.close();';
    const standIn = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let output = '';
      standIn.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      await vi.waitFor(() => expect(output).toContain('\n'), { timeout: 30_000, interval: 100 });
      expect(JSON.parse(output)).toStrictEqual([
        { ok: { content: 'sunny' } },
        // Still checked against the rest of its schema.
        { ok: { content: expect.stringContaining("[Airlock: this result does not match the tool's output schema: x:") } },
        { ok: { content: 'called echo' } },
      ]);
    } finally {
      standIn.kill('SIGKILL');
    }
  });
});

describe('a tool whose result does not match its output schema', () => {
  // Found in review: the result was dropped after the tool ran, so the person who allowed it and the model saw only
  // an error, though its side effects had happened.
  test('has its result kept, marked as not matching, and the call counted as run', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-mcp-output-'));
    try {
      const ranLog = join(folder, 'ran.log');
      await using mcp = manager({ wx: hostileServer('redos', { REDOS_CHARS: '3', RAN_LOG: ranLog }) });
      await mcp.start();
      const tool = (name: string) => mcp.tools().find((candidate) => candidate.name === name);
      await expect(tool('wx__typed')?.execute({}, context())).resolves.toStrictEqual({
        content: "a number\n[Airlock: this result does not match the tool's output schema: x: Invalid input: expected string, received number]",
      });
      await expect(tool('wx__unstructured')?.execute({}, context())).resolves.toStrictEqual({
        content: "text only\n[Airlock: this result does not match the tool's output schema: the tool declares one and sent no structured content]",
      });
      expect(await readFile(ranLog, 'utf8')).toBe('typed\nunstructured\n');
      expect(mcp.warnings).toStrictEqual([]);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('bounds on what one server lists', () => {
  test('a tool with an output schema over 64 KB is left out, as one with such an input schema is', async () => {
    await using mcp = manager({ big: hostileServer('big-output-schema') });
    await mcp.start();
    expect(mcp.tools().map((tool) => tool.name)).toStrictEqual(['big__fine']);
    expect(mcp.warnings).toStrictEqual(['MCP server "big": left out huge_output (output schema too large)']);
  });

  test('a listing that goes on past the page bound or the time bound leaves its server unusable, the others start', async () => {
    await using mcp = manager(
      {
        slow: hostileServer('endless-pages', { LIST_DELAY_MS: '1000' }),
        endless: hostileServer('endless-pages'),
        good: hostileServer('plain'),
      },
      { connectTimeoutMs: 15_000 },
    );
    await mcp.start();
    expect(mcp.status()).toStrictEqual([
      { name: 'slow', transport: 'stdio', state: 'error', error: 'the server did not finish listing its tools within 15 s', toolCount: 0 },
      { name: 'endless', transport: 'stdio', state: 'error', error: `the server's tool listing went on past ${MAX_LIST_PAGES} pages`, toolCount: 0 },
      { name: 'good', transport: 'stdio', state: 'ready', toolCount: 1, pid: expect.any(Number) },
    ]);
    expect(mcp.tools().map((tool) => tool.name)).toStrictEqual(['good__only']);
  });

  test('tools past the bound on their definitions are left out by name, and the rest of the listing is not read', async () => {
    await using mcp = manager({ many: hostileServer('many-tools') });
    await mcp.start();
    const tools = mcp.tools();
    const chars = tools.reduce((total, tool) => total + tool.description.length + JSON.stringify(tool.jsonSchema).length, 0);
    expect(tools.length).toBeGreaterThan(0);
    expect(tools.length).toBeLessThan(MAX_TOOLS_PER_SERVER);
    expect(chars).toBeLessThanOrEqual(MAX_DEFINITION_CHARS_PER_SERVER);
    // The first page holds 80 tools: those past the bound on it are named, the pages after it are not read.
    expect(mcp.warnings).toStrictEqual([
      `MCP server "many": left out ${Array.from({ length: 80 - tools.length }, (_, i) => `t${tools.length + i} (past 4 MiB of tool definitions)`).join(', ')}; the rest of its listing was not read`,
    ]);
  });
});

describe('a server that says its tools changed while each listing of them is read', () => {
  // Found from outside: each notification had the listing read again, so the first listing never ended and Airlock's
  // start-up waited for it for ever, the server shown connecting.
  test('is left unusable once the connect timeout has passed, saying why, and the others start', async () => {
    await using mcp = manager({ relist: hostileServer('relisting'), good: hostileServer('plain') }, { connectTimeoutMs: 10_000 });
    await mcp.start();
    expect(mcp.status()).toStrictEqual([
      { name: 'relist', transport: 'stdio', state: 'error', error: 'the server did not finish listing its tools within 10 s: it said they changed while each listing was read', toolCount: 0 },
      { name: 'good', transport: 'stdio', state: 'ready', toolCount: 1, pid: expect.any(Number) },
    ]);
    expect(mcp.tools().map((tool) => tool.name)).toStrictEqual(['good__only']);
  }, 30_000);
});

describe('a server that, once ready, says its tools changed while each listing of them is read', () => {
  // Found in review: each listing was followed at once by the next, for as long as the server went on: Airlock's CPU
  // spent reading and converting its tools, and every client told of a change.
  test('has its tools listed again no sooner than the floor after the listing before, by its clock, and answers calls meanwhile', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-mcp-relist-'));
    try {
      const listLog = join(folder, 'list.log');
      const clock = manualClock();
      await using mcp = manager({ relist: hostileServer('relisting-later', { LIST_LOG: listLog }) }, { clock });
      await mcp.start();
      const tool = (name: string) => mcp.tools().find((candidate) => candidate.name === name);
      const listings = async () => (await readFile(listLog, 'utf8')).split('\n').filter((line) => line !== '').length;
      await expect(tool('relist__start')?.execute({}, context())).resolves.toStrictEqual({ content: 'started' });
      // The clock stands still while a listing is read: the next waits for the floor from its end (twice the one
      // before, as each is asked for before that passed: mcp-relisting.test.ts), and the one it announced a change
      // during starts only once the clock is there.
      for (let listed = 1; listed <= 4; listed++) {
        const floor = MIN_RELIST_INTERVAL_MS * 2 ** (listed - 1);
        await vi.waitFor(() => expect(clock.pending()).toStrictEqual([clock.now() + floor]), { timeout: 20_000 });
        expect(await listings()).toBe(listed);
        clock.advance(floor - 1);
        expect(clock.pending()).toHaveLength(1);
        clock.advance(1);
      }
      await vi.waitFor(async () => expect(await listings()).toBe(5), { timeout: 20_000 });
      await expect(tool('relist__only')?.execute({}, context())).resolves.toStrictEqual({ content: 'called only' });
      expect(mcp.status()[0]?.state).toBe('ready');
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('a server that floods notifications/progress for a token of no request', () => {
  test('gets one log line for the first and one counting the rest, not one per notification', async () => {
    await using mcp = manager({ flood: hostileServer('progress-flood', { FLOOD_COUNT: '2000' }) });
    await mcp.start();
    const flood = mcp.tools().find((tool) => tool.name === 'flood__flood');
    await expect(flood?.execute({}, context())).resolves.toStrictEqual({ content: 'flooded' });
    expect(mcp.warnings).toStrictEqual([expect.stringMatching(/^MCP server "flood": Received a progress notification for an unknown token: .*"nobody-0"/)]);
    await mcp.close();
    expect(mcp.warnings).toHaveLength(2);
    expect(mcp.warnings[1]).toMatch(/^MCP server "flood": 1999 more errors like this one, the last: Received a progress notification for an unknown token: .*"nobody-1999"/);
  });
});

describe('a server that floods Airlock with ping requests', () => {
  // Found from outside: 1,000,000 pings from a server that stopped reading its input took Airlock to 3.9 GB, each
  // answer queued toward it; nobody's request was answered and SIGTERM no longer stopped it.
  test('that stopped reading its input is disconnected past the bound with a log line, restarted, and answers the next call', async () => {
    await using mcp = manager({ pings: hostileServer('ping-flood', { FLOOD_COUNT: '20000', PING_NOREAD: '1' }) }, { restart: { initialDelayMs: 10 } });
    await mcp.start();
    const tool = (name: string) => mcp.tools().find((candidate) => candidate.name === name);
    await expect(tool('pings__flood')?.execute({}, context())).rejects.toThrow();
    await vi.waitFor(
      () =>
        expect(mcp.warnings).toStrictEqual([
          `MCP server "pings": the server sent requests faster than it read their answers: over ${MAX_QUEUED_ANSWERS} answers or 16 MiB waited to be sent to it (a flood, or it does not read its input)`,
        ]),
      { timeout: 20_000 },
    );
    await until(mcp, () => mcp.status()[0]?.state === 'ready');
    // One line: no error for each answer left unwritten once the server was being disconnected.
    expect(mcp.warnings).toHaveLength(1);
    await expect(tool('pings__only')?.execute({}, context())).resolves.toStrictEqual({ content: 'called only' });
  });

  // The first bound counted requests from their arrival to their answer's write: 65 in one write were a flood, from a
  // server that read every answer at once.
  test('in one write of 1,000, reading the answers, has every ping answered and stays connected', async () => {
    await using mcp = manager({ pings: hostileServer('ping-burst', { FLOOD_COUNT: '1000' }) });
    await mcp.start();
    const pid = mcp.status()[0]?.pid;
    const tool = (name: string) => mcp.tools().find((candidate) => candidate.name === name);
    await expect(tool('pings__burst')?.execute({}, context())).resolves.toStrictEqual({ content: 'answered 1000 pings' });
    await expect(tool('pings__burst')?.execute({}, context())).resolves.toStrictEqual({ content: 'answered 1000 pings' });
    await expect(tool('pings__only')?.execute({}, context())).resolves.toStrictEqual({ content: 'called only' });
    expect(mcp.status()).toStrictEqual([{ name: 'pings', transport: 'stdio', state: 'ready', toolCount: 2, pid }]);
    expect(mcp.warnings).toStrictEqual([]);
  });
});

describe('two servers whose tools would get one name', () => {
  // `a` + `b__c` and `a__b` + `c` were both `a__b__c`: the first in config order kept it, and while `a` was down the
  // same name, on the same terminal card, was `a__b`'s tool.
  test('offer them under names of their own, each reaching its own server, and say so in the log', async () => {
    await using mcp = manager({
      a: hostileServer('named', { TOOL_NAME: 'b__c' }),
      a__b: hostileServer('named', { TOOL_NAME: 'c' }),
      other: hostileServer('named', { TOOL_NAME: 'c' }),
    });
    await mcp.start();
    const byServer = new Map(mcp.tools().map((tool) => [tool.source, tool]));
    const ofA = byServer.get('mcp:a')!;
    const ofAB = byServer.get('mcp:a__b')!;
    expect(ofA.name).toMatch(/^a__b__c_[0-9a-f]{8}$/);
    expect(ofAB.name).toMatch(/^a__b__c_[0-9a-f]{8}$/);
    expect(ofA.name).not.toBe(ofAB.name);
    expect(byServer.get('mcp:other')?.name).toBe('other__c');
    await expect(ofA.execute({}, context())).resolves.toStrictEqual({ content: 'called b__c' });
    await expect(ofAB.execute({}, context())).resolves.toStrictEqual({ content: 'called c' });
    expect(mcp.warnings.toSorted()).toStrictEqual([
      `MCP server "a": its tools' names would also read as tools of the server "a__b", so they are offered with a hash: b__c as ${ofA.name}`,
      `MCP server "a__b": its tools' names would also read as tools of the server "a", so they are offered with a hash: c as ${ofAB.name}`,
    ]);
  });
});

describe('a stdio server whose answer is over 10 MiB', () => {
  // Found in review: the call failed as "Connection closed" and the server was restarted as one whose process exited.
  test('fails the call naming the limit, logs why the server is restarted, and answers the next call', async () => {
    await using mcp = manager({ big: hostileServer('sized') }, { restart: { initialDelayMs: 10 } });
    await mcp.start();
    const tool = (name: string) => mcp.tools().find((candidate) => candidate.name === name);
    await expect(tool('big__sized')?.execute({ bytes: 3 }, context())).resolves.toStrictEqual({ content: 'xxx' });
    await expect(tool('big__sized')?.execute({ bytes: 11 * 1024 * 1024 }, context())).rejects.toThrow(/^the MCP server "big" was disconnected: the server sent a message over 10 MiB$/);
    await vi.waitFor(() => expect(mcp.warnings).toStrictEqual(['MCP server "big": the server sent a message over 10 MiB']));
    await until(mcp, () => mcp.status()[0]?.state === 'ready');
    await expect(tool('big__only')?.execute({}, context())).resolves.toStrictEqual({ content: 'called only' });
  });
});

describe('a stdio server that exits during a call', () => {
  // Found in review: the call failed with a bare "MCP error -32000: Connection closed".
  test('fails the call saying the server exited before it answered, and is restarted', async () => {
    await using mcp = manager({ big: hostileServer('sized') }, { restart: { initialDelayMs: 10 } });
    await mcp.start();
    const tool = (name: string) => mcp.tools().find((candidate) => candidate.name === name);
    await expect(tool('big__exit')?.execute({}, context())).rejects.toThrow(/^the MCP server "big" exited before it answered$/);
    await until(mcp, () => mcp.status()[0]?.state === 'ready');
    await expect(tool('big__only')?.execute({}, context())).resolves.toStrictEqual({ content: 'called only' });
    expect(mcp.warnings).toStrictEqual(['MCP server "big": the server process exited']);
  });
});

describe('a stdio server whose messages nest deeper than 256 levels', () => {
  // Found in review: one line of 10 KB, an answer to no request nested 5,000 deep, had the SDK build its error with
  // JSON.stringify, which threw RangeError out of the transport's data handler: Airlock's process exited.
  test('sending an answer to no request of Airlock’s has it refused and logged, and Airlock, in a process of its own, stays up', async () => {
    const server = deepMessagesServer();
    const code =
      `import { McpManager } from ${JSON.stringify(MANAGER_MODULE)}; ` +
      'const warnings = []; ' +
      `const mcp = new McpManager({ servers: new Map([['deep', ${JSON.stringify(server)}]]), logger: { info() {}, warn: (line) => warnings.push(line) } }); ` +
      'await mcp.start(); ' +
      "const context = { signal: new AbortController().signal, timeoutMs: 20000, sessionId: 's' }; " +
      'const call = (name, args) => mcp.tools().find((tool) => tool.name === name).execute(args, context).then((ok) => ({ ok }), (error) => ({ error: error.message })); ' +
      "const results = [await call('deep__stray', { depth: 5000 }), await call('deep__only', {})]; " +
      'console.log(JSON.stringify({ results, warnings, state: mcp.status()[0].state })); await mcp.close();';
    const standIn = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    standIn.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    standIn.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const [exitCode] = (await once(standIn, 'exit')) as [number | null];
    expect(exitCode, errors).toBe(0);
    expect(JSON.parse(output)).toStrictEqual({
      results: [{ ok: { content: 'after stray' } }, { ok: { content: 'called only' } }],
      warnings: [`MCP server "deep": the server sent a message nested deeper than ${MAX_MCP_MESSAGE_DEPTH} levels`],
      state: 'ready',
    });
  });

  test('answering a call so fails the call saying why, one at the bound is read, and the server stays connected', async () => {
    await using mcp = manager({ deep: deepMessagesServer() });
    await mcp.start();
    const pid = mcp.status()[0]?.pid;
    const tool = (name: string) => mcp.tools().find((candidate) => candidate.name === name);
    const refused = new RegExp(`^the MCP server's answer was nested deeper than ${MAX_MCP_MESSAGE_DEPTH} levels$`);
    // The message, its result and its structured content are three levels of the bound.
    const atBound = MAX_MCP_MESSAGE_DEPTH - 3;
    const nested = (depth: number): unknown => (depth === 0 ? [] : [nested(depth - 1)]);
    await expect(tool('deep__structured')?.execute({ depth: atBound }, context())).resolves.toStrictEqual({ content: JSON.stringify({ a: nested(atBound - 1) }) });
    await expect(tool('deep__structured')?.execute({ depth: atBound + 1 }, context())).rejects.toThrow(refused);
    await expect(tool('deep__structured')?.execute({ depth: 5000 }, context())).rejects.toThrow(refused);
    await expect(tool('deep__failing')?.execute({ depth: atBound }, context())).rejects.toThrow(/^MCP error 7: failed$/);
    await expect(tool('deep__failing')?.execute({ depth: 5000 }, context())).rejects.toThrow(refused);
    await expect(tool('deep__only')?.execute({}, context())).resolves.toStrictEqual({ content: 'called only' });
    expect(mcp.status()).toStrictEqual([{ name: 'deep', transport: 'stdio', state: 'ready', toolCount: 5, pid }]);
    expect(mcp.warnings).toStrictEqual([]);
  });

  test('sending a notification so has it refused and logged, and the call it came with answered', async () => {
    await using mcp = manager({ deep: deepMessagesServer() });
    await mcp.start();
    const tool = (name: string) => mcp.tools().find((candidate) => candidate.name === name);
    await expect(tool('deep__notify')?.execute({ depth: 5000 }, context())).resolves.toStrictEqual({ content: 'after notify' });
    expect(mcp.warnings).toStrictEqual([`MCP server "deep": the server sent a message nested deeper than ${MAX_MCP_MESSAGE_DEPTH} levels`]);
    expect(mcp.status()[0]?.state).toBe('ready');
  });
});

describe('a Streamable HTTP server whose answer holds a message nesting deeper than 256 levels', () => {
  // Found in review: an answer to no request, nested 5,000 deep, in the answer to a call failed the call with RangeError.
  test.each([
    ['JSON', true],
    ['an event stream', false],
  ])('in %s fails the call saying why, and the connection goes on', async (_, json) => {
    const stray = `{"jsonrpc":"2.0","id":987654,"result":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}`;
    let deep = true;
    await using remote = await httpMcpServer({
      json,
      tools: sizedTool,
      route: (_request, response, message) => {
        if (message?.method !== 'tools/call' || !deep) return false;
        const answer = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'answered' }] } });
        if (json) response.writeHead(200, { 'content-type': 'application/json' }).end(`[${stray},${answer}]`);
        else response.writeHead(200, { 'content-type': 'text/event-stream' }).end(`event: message\ndata: ${stray}\n\nevent: message\ndata: ${answer}\n\n`);
        return true;
      },
    });
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } });
    await mcp.start();
    const sized = mcp.tools().find((tool) => tool.name === 'remote__sized');
    await expect(sized?.execute({ bytes: 1 }, context())).rejects.toThrow(new RegExp(`^the MCP server's answer was nested deeper than ${MAX_MCP_MESSAGE_DEPTH} levels$`));
    deep = false;
    await expect(sized?.execute({ bytes: 2 }, context())).resolves.toStrictEqual({ content: 'xx' });
    expect(mcp.status()).toStrictEqual([{ name: 'remote', transport: 'http', state: 'ready', toolCount: 1 }]);
  });

  // Found in review: the SDK drops a byte order mark from the start of an event stream, and its parser "ï»¿" (one read
  // as Latin-1); the check read such a stream's first line as no data line, and the call failed with RangeError.
  test.each([
    ['a byte order mark', '\uFEFF'],
    ['a byte order mark read as Latin-1', '\u00EF\u00BB\u00BF'],
    ['both', '\uFEFF\u00EF\u00BB\u00BF'],
  ])('in an event stream opening with %s fails the call saying why', async (_, lead) => {
    await using remote = await httpMcpServer({
      json: false,
      tools: sizedTool,
      route: (_request, response, message) => {
        if (message?.method !== 'tools/call') return false;
        const answer = `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[],"structuredContent":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}}`;
        response.writeHead(200, { 'content-type': 'text/event-stream' }).end(`${lead}data: ${answer}\n\n`);
        return true;
      },
    });
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } });
    await mcp.start();
    const sized = mcp.tools().find((tool) => tool.name === 'remote__sized');
    await expect(sized?.execute({ bytes: 1 }, context())).rejects.toThrow(new RegExp(`^the MCP server's answer was nested deeper than ${MAX_MCP_MESSAGE_DEPTH} levels$`));
    expect(mcp.status()).toStrictEqual([{ name: 'remote', transport: 'http', state: 'ready', toolCount: 1 }]);
  });

  test('on the server’s own stream restarts the connection, as after a crash', async () => {
    let gets = 0;
    let sendDeep: (() => void) | undefined;
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
        response.writeHead(200, { 'content-type': 'text/event-stream' }).write(': open\n\n');
        sendDeep = () => response.write(`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${'['.repeat(5000)}${']'.repeat(5000)}}}\n\n`);
        return true;
      },
    });
    await using mcp = manager({ remote: { transport: 'http', url: remote.url, headers: {} } }, { restart: { initialDelayMs: 0 } });
    await mcp.start();
    await vi.waitFor(() => expect(sendDeep).toBeDefined());
    const down = until(mcp, () => mcp.status()[0]?.state === 'restarting');
    sendDeep?.();
    await down;
    expect(mcp.status()[0]?.error).toBe(`the server sent a message nested deeper than ${MAX_MCP_MESSAGE_DEPTH} levels`);
    await until(mcp, () => mcp.status()[0]?.state === 'ready');
    await expect(mcp.tools()[0]?.execute({ bytes: 3 }, context())).resolves.toStrictEqual({ content: 'xxx' });
  });
});
