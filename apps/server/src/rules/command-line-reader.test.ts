import { Worker } from 'node:worker_threads';
import { describe, expect, it, vi } from 'vitest';
import { manualClock } from '../mcp/fixtures/manual-clock';
import { CommandLineReader, readCommandLine } from './command-line-reader';
import { parseCommandLine } from './parse-command-line';

/** Broken in a way the grammar's error recovery takes quadratic time over (seconds unbounded). */
const SLOW = `${')'.repeat(30_000)}${'('.repeat(30_000)}`;

describe('CommandLineReader', () => {
  it('reads a line in its worker as the parser does in this thread', async () => {
    for (const text of ['npm test && echo done', "sudo bash -c 'rm -rf x'", 'echo $(id)', 'ls {a}>/dev/null']) {
      expect(await readCommandLine(text)).toStrictEqual(await parseCommandLine(text));
    }
  });

  it('keeps this thread free while a slow line is read: a timer set after the read started fires before it ends', async () => {
    const reader = new CommandLineReader();
    const order: string[] = [];
    const reading = reader.read(SLOW).then((line) => {
      order.push('read');
      return line;
    });
    await new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push('timer');
        resolve();
      }, 0),
    );
    expect(await reading).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/could not read within/), incomplete: true });
    expect(order).toStrictEqual(['timer', 'read']);
    await reader.close();
  });

  it('ends a line past its time limit as unread, then reads the next one in a new worker', async () => {
    // A worker that hangs on the line "hang" (a loop that never yields) and answers any other at once.
    const fake = () =>
      new Worker(
        `const { parentPort } = require('node:worker_threads');
        parentPort.postMessage({ ready: true });
        parentPort.on('message', ({ id, text }) => {
          if (text === 'hang') for (;;);
          parentPort.postMessage({ id, line: { kind: 'refused', reason: 'read ' + text, reachable: [], incomplete: true } });
        });`,
        { eval: true },
      );
    const clock = manualClock();
    const reader = new CommandLineReader({ timeLimitMs: 200, worker: fake, clock });
    const hung = reader.read('hang');
    const next = reader.read('git status');
    // Its limit runs once the worker is ready, on a clock the test moves; the next line's, in the new worker, too.
    await vi.waitFor(() => expect(clock.pending()).toStrictEqual([200]));
    clock.advance(200);
    expect(await hung).toStrictEqual({ kind: 'refused', reason: 'the command parser took longer than 200 ms', reachable: [], incomplete: true });
    expect(await next).toStrictEqual({ kind: 'refused', reason: 'read git status', reachable: [], incomplete: true });
    await reader.close();
  });

  it("takes owners' lines in turn: a chat's line waits behind at most one line of a chat that sent many", async () => {
    // A worker that answers each line at once with the line's text, so the order of the answers is the reading order.
    const echo = () =>
      new Worker(
        `const { parentPort } = require('node:worker_threads');
        parentPort.postMessage({ ready: true });
        parentPort.on('message', ({ id, text }) => parentPort.postMessage({ id, line: { kind: 'refused', reason: text, reachable: [], incomplete: true } }));`,
        { eval: true },
      );
    const reader = new CommandLineReader({ worker: echo });
    const order: string[] = [];
    const read = (text: string, owner: string) => reader.read(text, owner).then((line) => void order.push(line.kind === 'refused' ? line.reason : '?'));
    const lines = ['a1', 'a2', 'a3', 'a4', 'a5'].map((text) => read(text, 'chat-a'));
    lines.push(read('b1', 'chat-b'), read('c1', 'chat-c'), read('b2', 'chat-b'));
    await Promise.all(lines);
    expect(order).toStrictEqual(['a1', 'a2', 'b1', 'c1', 'a3', 'b2', 'a4', 'a5']);
    await reader.close();
  });

  it('ends every line being read or waiting as unread when closed', async () => {
    const reader = new CommandLineReader();
    const lines = [reader.read(SLOW), reader.read('ls'), reader.read('pwd')];
    await reader.close();
    for (const line of await Promise.all(lines)) expect(line).toStrictEqual({ kind: 'refused', reason: 'the command parser was stopped', reachable: [], incomplete: true });
  });
});
