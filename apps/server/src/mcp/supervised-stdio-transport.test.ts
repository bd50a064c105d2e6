import { spawn, type ChildProcess } from 'node:child_process';
import type * as ChildProcessModule from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, test, vi } from 'vitest';
import { manualClock } from './fixtures/manual-clock';
import { MAX_MCP_MESSAGE_DEPTH } from './json-depth';
import { McpMessageTooDeepError } from './size-limited-fetch';
import { MAX_LINES_PER_TURN, MAX_QUEUED_INPUT_BYTES, MAX_STDERR_BYTES_PER_SECOND, MCP_SERVER_MARKER_VARIABLE, SupervisedStdioTransport } from './supervised-stdio-transport';

// Every process this module starts is recorded, and started as usual.
vi.mock('node:child_process', async (importOriginal) => {
  const actual = await importOriginal<typeof ChildProcessModule>();
  return { ...actual, spawn: vi.fn(actual.spawn) };
});

function startedProcesses() {
  return vi.mocked(spawn).mock.calls.map(([file, args, options]) => ({ file, args, env: options?.env }));
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('an MCP server’s watchdog', () => {
  // Airlock killed between the MCP server's start and its watchdog's would leave the MCP server running for good.
  test('is running before the MCP server starts, watching for the marker it carries', async () => {
    vi.mocked(spawn).mockClear();
    const transport = new SupervisedStdioTransport({ command: '/bin/cat', args: [], env: {} });
    try {
      await transport.start();
      const started = startedProcesses();
      expect(started).toHaveLength(2);
      const [watchdog, server] = started;
      expect(watchdog?.args.slice(0, 1)).toStrictEqual(['-c']);
      expect(watchdog?.args[2]).toBe('airlock-watchdog');
      expect(server?.file).toBe('/bin/cat');
      expect(server?.env?.[MCP_SERVER_MARKER_VARIABLE]).toMatch(/^mcp_[0-9a-f]+$/u);
      expect(watchdog?.args[3]).toBe(`${MCP_SERVER_MARKER_VARIABLE}=${server?.env?.[MCP_SERVER_MARKER_VARIABLE]}`);
    } finally {
      await transport.close();
    }
  });

  // Closed before it knew the MCP server's group, it released the watchdog and left the MCP server running, unwatched.
  test('is released only once the MCP server has stopped, when the transport is closed while the server is starting', async () => {
    vi.mocked(spawn).mockClear();
    const transport = new SupervisedStdioTransport({ command: '/bin/cat', args: [], env: {} });
    const started = transport.start();
    await transport.close();
    await started;
    expect(transport.pid).toBeNull();
    const [watchdog, server] = vi.mocked(spawn).mock.results.map((result) => result.value as ChildProcess);
    expect(server?.exitCode).toBe(0);
    await exited(watchdog!);
  });

  test('is stopped when the MCP server cannot start', async () => {
    vi.mocked(spawn).mockClear();
    const transport = new SupervisedStdioTransport({ command: '/nonexistent/mcp-server', args: [], env: {} });
    await expect(transport.start()).rejects.toThrow('the command /nonexistent/mcp-server was not found');
    const watchdog = vi.mocked(spawn).mock.results[0]?.value as ChildProcess | undefined;
    expect(watchdog?.spawnargs[3]).toBe('airlock-watchdog');
    // A watchdog left running would wait for this process's end; released, it is killed.
    await exited(watchdog!);
    expect(watchdog?.signalCode).toBe('SIGKILL');
  });
});

describe('a server that does not read its input', () => {
  // Found from outside: what was sent to such a server was queued without limit, and closing it waited on the queue.
  test('is reported once more than the bound waits toward it, fails what is sent after, and closes', async () => {
    const overflows: string[] = [];
    const transport = new SupervisedStdioTransport({ command: '/bin/sleep', args: ['600'], env: {}, onOverflow: (reason) => overflows.push(reason) });
    await transport.start();
    try {
      const message = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { data: 'x'.repeat(1024 * 1024) } };
      const sent = Array.from({ length: MAX_QUEUED_INPUT_BYTES / (1024 * 1024) + 2 }, () => transport.send(message).then(() => 'settled', () => 'refused'));
      expect(overflows).toStrictEqual([`the server did not read its input: over ${MAX_QUEUED_INPUT_BYTES / (1024 * 1024)} MiB waited to be written to it`]);
      await expect(transport.send(message)).rejects.toThrow('the server does not read its input');
      await transport.close();
      // Every message settles once the server is gone: none is left waiting on an input nobody reads.
      expect(await Promise.all(sent)).toContain('refused');
    } finally {
      await transport.close();
    }
  });
});

describe('a server that writes a long line in pieces', () => {
  // Each piece was joined to the line so far and the whole searched again: seconds of the server's thread a line.
  test('has each byte of it copied once, its messages read whole, and a line over 10 MiB still refused', async () => {
    const size = 9 * 1024 * 1024;
    const message = (data: string) => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data } });
    // A line that is no JSON, the same long, then the long message, one after it, and a line over the limit, written
    // 16 KiB at a time, each once the last has left, so that Airlock reads them in as many pieces.
    const code =
      `const message = (data) => JSON.stringify(${JSON.stringify(message('DATA'))}).replace('"DATA"', JSON.stringify(data)); ` +
      `const text = 'x'.repeat(16) + '\\n' + 'y'.repeat(${size}) + '\\n' + message('a'.repeat(${size})) + '\\r\\n' + message('after') + '\\n' + 'z'.repeat(${10 * 1024 * 1024 + 1}); ` +
      'let at = 0; const next = () => { if (at < text.length) process.stdout.write(text.slice(at, (at += 16384)), () => setImmediate(next)); }; next();';
    const transport = new SupervisedStdioTransport({ command: process.execPath, args: ['-e', code], env: {} });
    const messages: unknown[] = [];
    const errors: string[] = [];
    transport.onmessage = (received) => messages.push(received);
    transport.onerror = (error) => errors.push(error.message);
    let copied = 0;
    const real = Buffer.concat.bind(Buffer);
    const concat = vi.spyOn(Buffer, 'concat').mockImplementation((list, totalLength) => {
      const joined = real(list, totalLength);
      copied += joined.length;
      return joined;
    });
    try {
      await transport.start();
      await vi.waitFor(() => expect(errors).toHaveLength(3), { timeout: 30_000, interval: 50 });
      expect(errors.slice(0, 2)).toStrictEqual([expect.stringContaining('JSON'), expect.stringContaining('JSON')]);
      expect(errors[2]).toBe(`ReadBuffer exceeded maximum size of ${10 * 1024 * 1024} bytes`);
      expect(messages).toStrictEqual([message('a'.repeat(size)), message('after')]);
      // The two long lines joined once each (the SDK's reader joined the line so far at each piece: gigabytes).
      expect(copied).toBeLessThan(3 * size);
    } finally {
      concat.mockRestore();
      await transport.close();
    }
  });
});

describe('a server that floods its output with lines', () => {
  // Found from outside: 13 MiB of empty lines, each read as an error, held Airlock's thread for 45 s.
  test('has them read in turns, other work running between, every one read and its end told after the last', async () => {
    const lines = 200_000;
    const last = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'last' } };
    const code = `process.stdout.write('\\n'.repeat(${lines}) + ${JSON.stringify(JSON.stringify(last))} + '\\n', () => process.exit(0));`;
    const transport = new SupervisedStdioTransport({ command: process.execPath, args: ['-e', code], env: {} });
    const seen: string[] = [];
    let errors = 0;
    let errorsWhenOtherWorkRan: number | undefined;
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => {
        seen.push('close');
        resolve();
      };
    });
    transport.onmessage = (message) => seen.push(JSON.stringify(message));
    transport.onerror = () => {
      errors += 1;
      if (errors === 1) setImmediate(() => (errorsWhenOtherWorkRan = errors));
    };
    try {
      await transport.start();
      await closed;
      expect(errorsWhenOtherWorkRan).toBeLessThanOrEqual(MAX_LINES_PER_TURN);
      expect(errors).toBe(lines);
      expect(seen).toStrictEqual([JSON.stringify(last), 'close']);
    } finally {
      await transport.close();
    }
  });
});

describe('a server that writes to its stderr without end', () => {
  // Found in review: its stderr was read as fast as it wrote, for a tail of 2 KiB kept: about half of a core.
  test('has it read at most the bound in a second of its clock, the server held meanwhile, and what is left at once when it exits', async () => {
    const clock = manualClock();
    // More than the bound, then a line read from its input, then 16 KiB more and the exit.
    const first = MAX_STDERR_BYTES_PER_SECOND + 16 * 1024;
    const script = `head -c ${first} /dev/zero >&2; read line; head -c 16384 /dev/zero >&2; exit 0`;
    const transport = new SupervisedStdioTransport({ command: '/bin/sh', args: ['-c', script], env: {}, clock });
    let read = 0;
    transport.stderr.on('data', (chunk: Buffer) => (read += chunk.length));
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    await transport.start();
    try {
      await vi.waitFor(() => expect(read).toBeGreaterThanOrEqual(MAX_STDERR_BYTES_PER_SECOND), { timeout: 10_000 });
      // Paused until the second is over, with at most the chunk that went past the bound (64 KiB a pipe) read beyond it.
      expect(clock.pending()).toStrictEqual([1000]);
      expect(read).toBeLessThanOrEqual(MAX_STDERR_BYTES_PER_SECOND + 64 * 1024);
      // The clock does not move: what the server writes before and after its exit is read only because it exited.
      await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await closed;
      expect(read).toBe(first + 16 * 1024);
      expect(clock.pending()).toStrictEqual([]);
    } finally {
      await transport.close();
    }
  });
});


describe('a server that writes a message nested deeper than the bound', () => {
  // Found in review: the SDK's error for an answer to no request JSON.stringified it, which threw RangeError on this
  // transport's data handler, and Airlock's process exited.
  test('has an answer to a request sent failed naming the bound, anything else refused as an error, and the lines after it read', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const lines = [
      // Airlock's request 1, answered.
      `{"jsonrpc":"2.0","result":{"a":${deep}},"id":1}`,
      // Request 1 again, answered already; request 2, never sent; a request and a notification of the server's.
      `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":${deep}}}`,
      `{"jsonrpc":"2.0","id":2,"result":${deep}}`,
      `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"a":${deep}}}`,
      `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${deep}}}`,
      `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${'['.repeat(MAX_MCP_MESSAGE_DEPTH - 2)}${']'.repeat(MAX_MCP_MESSAGE_DEPTH - 2)}}}`,
    ];
    const code = `process.stdin.once('data', () => process.stdout.write(${JSON.stringify(lines.join('\n') + '\n')}));`;
    const transport = new SupervisedStdioTransport({ command: process.execPath, args: ['-e', code], env: {} });
    const messages: unknown[] = [];
    const errors: string[] = [];
    transport.onmessage = (message) => messages.push(message);
    transport.onerror = (error) => errors.push(error.message);
    try {
      await transport.start();
      await transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'deep' } });
      await vi.waitFor(() => expect(messages).toHaveLength(2), { timeout: 10_000 });
      const refusal = new McpMessageTooDeepError();
      expect(messages[0]).toStrictEqual({ jsonrpc: '2.0', id: 1, error: { code: ErrorCode.InternalError, message: refusal.message, data: refusal } });
      expect(errors).toStrictEqual(Array.from({ length: 4 }, () => refusal.disconnect));
      expect(messages[1]).toStrictEqual(JSON.parse(lines[5]!));
    } finally {
      await transport.close();
    }
  });
});

describe('a handler of the messages read that throws', () => {
  // Whatever the SDK throws must not leave the data handler of the server's output: it would end Airlock's process.
  test('has what it threw reported as an error, and the lines after it read', async () => {
    const notification = (data: string) => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data } });
    const code = `process.stdout.write(${JSON.stringify(`${notification('first')}\n${notification('second')}\n`)});`;
    const transport = new SupervisedStdioTransport({ command: process.execPath, args: ['-e', code], env: {} });
    const seen: string[] = [];
    transport.onmessage = (message) => {
      seen.push(JSON.stringify(message));
      if (seen.length === 1) throw new RangeError('Maximum call stack size exceeded');
    };
    transport.onerror = (error) => seen.push(`error: ${error.message}`);
    const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
    try {
      await transport.start();
      await closed;
      expect(seen).toStrictEqual([notification('first'), 'error: Maximum call stack size exceeded', notification('second')]);
    } finally {
      await transport.close();
    }
  });
});

describe('a server that cannot be started', () => {
  // Found in review: a cwd that does not exist failed as "spawn /usr/bin/node ENOENT", blaming the command; a file as
  // cwd as "spawn ENOTDIR"; a command ~/bin/server as ENOENT, with no word that ~ is not expanded.
  test('is refused naming its folder when that does not exist or is no folder, and its command when that is not found, saying a ~ is not expanded', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'airlock-mcp-spawn-'));
    try {
      const file = join(folder, 'file');
      await writeFile(file, '');
      const failure = (command: string, cwd: string) =>
        new SupervisedStdioTransport({ command, args: [], env: {}, cwd }).start().then(
          () => 'started',
          (error: unknown) => (error instanceof Error ? error.message : String(error)),
        );
      const tilde = 'a ~ is not expanded: give the full path';
      expect(await failure(process.execPath, join(folder, 'missing'))).toBe(`the server's folder (cwd) ${join(folder, 'missing')} does not exist`);
      expect(await failure(process.execPath, join(folder, '~', 'srv'))).toBe(`the server's folder (cwd) ${join(folder, '~', 'srv')} does not exist (${tilde})`);
      expect(await failure(process.execPath, file)).toBe(`the server's folder (cwd) ${file} is not a folder`);
      expect(await failure('no-such-command-xyz', folder)).toBe('the command no-such-command-xyz was not found on the PATH');
      expect(await failure('~/bin/server', folder)).toBe(`the command ~/bin/server was not found (${tilde})`);
      expect(await failure(join(folder, 'missing-server'), folder)).toBe(`the command ${join(folder, 'missing-server')} was not found`);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
