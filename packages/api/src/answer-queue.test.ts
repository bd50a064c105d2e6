import { LimitExceededError } from '@airlock/core';
import { deferred } from '@airlock/core/testing';
import { describe, expect, it, vi } from 'vitest';
import { AnswerQueue } from './answer-queue';
import { ManualWindow } from './test-support';


/** Lets every pending promise job and the macrotask queued before it run. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A query that records when it starts and answers when told. */
function query(started: string[], name: string) {
  const answer = deferred<string>();
  return {
    answer,
    run: () => {
      started.push(name);
      return answer.promise;
    },
  };
}

describe('AnswerQueue', () => {
  it('starts the queries of a connection one at a time, in the order asked', async () => {
    const queue = new AnswerQueue(new ManualWindow());
    const started: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name) => query(started, name)) as [ReturnType<typeof query>, ReturnType<typeof query>, ReturnType<typeof query>];
    const answers = [queue.answer(a.run), queue.answer(b.run), queue.answer(c.run)];
    await turn();
    expect(started).toStrictEqual(['a']);
    a.answer.resolve('A');
    await vi.waitFor(() => expect(started).toStrictEqual(['a', 'b']));
    await turn();
    expect(started).toStrictEqual(['a', 'b']);
    b.answer.resolve('B');
    await vi.waitFor(() => expect(started).toStrictEqual(['a', 'b', 'c']));
    c.answer.resolve('C');
    expect(await Promise.all(answers)).toStrictEqual(['A', 'B', 'C']);
  });

  it('starts the next only after the answer before it is written, and none while the window is shut', async () => {
    const window = new ManualWindow();
    const queue = new AnswerQueue(window);
    const started: string[] = [];
    const big = query(started, 'big');
    const next = query(started, 'next');
    // As tRPC does: the answer is written in the promise jobs that follow the query's return, and shuts the window.
    const written = queue.answer(big.run).then(() => {
      window.open = false;
    });
    const answered = queue.answer(next.run);
    await turn();
    big.answer.resolve('12 MB');
    await written;
    await expect.poll(() => window.parked.size).toBe(1);
    expect(started).toStrictEqual(['big']);

    window.reopen();
    await vi.waitFor(() => expect(started).toStrictEqual(['big', 'next']));
    next.answer.resolve('small');
    expect(await answered).toBe('small');
  });

  it('refuses a query over the number that may wait, and serves the others', async () => {
    const window = new ManualWindow();
    window.open = false;
    const queue = new AnswerQueue(window, 2);
    const answers = [queue.answer(async () => 1), queue.answer(async () => 2)];
    await expect(queue.answer(async () => 3)).rejects.toStrictEqual(new LimitExceededError('queries waiting per connection', 2));
    window.reopen();
    expect(await Promise.all(answers)).toStrictEqual([1, 2]);
  });

  it('runs every query at once on a connection without a send window', async () => {
    const queue = new AnswerQueue(undefined);
    const started: string[] = [];
    const a = query(started, 'a');
    const b = query(started, 'b');
    const answers = [queue.answer(a.run), queue.answer(b.run)];
    expect(started).toStrictEqual(['a', 'b']);
    a.answer.resolve('A');
    b.answer.resolve('B');
    expect(await Promise.all(answers)).toStrictEqual(['A', 'B']);
  });
});
