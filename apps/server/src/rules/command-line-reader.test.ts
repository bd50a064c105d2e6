import { describe, expect, it } from 'vitest';
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
    const reader = new CommandLineReader({ timeLimitMs: 1 });
    const slow = reader.read(SLOW);
    const next = reader.read('git status');
    expect(await slow).toStrictEqual({ kind: 'refused', reason: 'the command parser took longer than 1 ms', reachable: [], incomplete: true });
    const line = await next;
    // The next line too may run past 1 ms in a fresh worker (loading the grammar); either way it is read or unread, never lost.
    expect(line.kind === 'seen' || (line.kind === 'refused' && line.incomplete === true)).toBe(true);
    await reader.close();
  });
});
