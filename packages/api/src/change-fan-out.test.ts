import { describe, expect, it } from 'vitest';
import { ChangeFanOut } from './change-fan-out';

interface Change {
  key: string;
  value: number;
}

/** A fan-out whose clock and scheduled work the test drives: `due()` lists the delays asked for, `run()` runs the first. */
function manual(options: { pausePerDeliveryMs?: number; deliveriesPerTurn?: number } = {}) {
  let now = 0;
  let listener: ((change: Change) => void) | undefined;
  const scheduled: { work: () => void; delayMs: number }[] = [];
  const fanOut = new ChangeFanOut<Change>(
    (added) => {
      listener = added;
      return () => (listener = undefined);
    },
    (change) => change.key,
    { ...options, now: () => now, schedule: (work, delayMs) => scheduled.push({ work, delayMs }) },
  );
  return {
    fanOut,
    tell: (key: string, value: number) => listener?.({ key, value }),
    listening: () => listener !== undefined,
    due: () => scheduled.map((entry) => entry.delayMs),
    run: () => scheduled.shift()?.work(),
    advance: (ms: number) => (now += ms),
  };
}

function watchers(fanOut: ChangeFanOut<Change>, count: number) {
  const told = Array.from({ length: count }, () => [] as Change[][]);
  const watching = told.map((batches) => fanOut.watch((changes) => batches.push([...changes])));
  return { told, watching };
}

describe('ChangeFanOut', () => {
  it('tells a change at once; the changes made in the pause after it wait, one per key, the newest, and are told together in one batch', () => {
    const { fanOut, tell, due, run, advance } = manual({ pausePerDeliveryMs: 0.5 });
    const { told } = watchers(fanOut, 4);
    tell('a', 1);
    expect(told).toStrictEqual(Array.from({ length: 4 }, () => [[{ key: 'a', value: 1 }]]));
    for (let value = 2; value <= 100; value++) tell(value % 2 === 0 ? 'a' : 'b', value);
    // Four deliveries, half a millisecond each.
    expect(due()).toStrictEqual([2]);
    advance(2);
    run();
    expect(told).toStrictEqual(
      Array.from({ length: 4 }, () => [
        [{ key: 'a', value: 1 }],
        [
          { key: 'b', value: 99 },
          { key: 'a', value: 100 },
        ],
      ]),
    );
    // Eight deliveries: the next change waits 4 ms.
    tell('a', 101);
    expect(due()).toStrictEqual([4]);
  });

  it('pauses after a batch in proportion to the deliveries it made, so the work is bounded however many watch', () => {
    const { fanOut, tell, due, run, advance } = manual({ pausePerDeliveryMs: 0.05, deliveriesPerTurn: 1_000_000 });
    const { told } = watchers(fanOut, 4000);
    tell('a', 1);
    tell('a', 2);
    expect(due()).toStrictEqual([200]);
    advance(50);
    tell('b', 3);
    expect(due()).toStrictEqual([200]);
    advance(150);
    run();
    expect(told[3999]).toStrictEqual([
      [{ key: 'a', value: 1 }],
      [
        { key: 'a', value: 2 },
        { key: 'b', value: 3 },
      ],
    ]);
    // 8,000 deliveries: the next pause is 400 ms; once it is over, a change is told at once again.
    tell('c', 4);
    expect(due()).toStrictEqual([400]);
    advance(400);
    run();
    advance(400);
    tell('d', 5);
    expect([due(), told[0]?.length]).toStrictEqual([[], 4]);
  });

  it('tells a batch over several turns of the event loop, no more deliveries in each than its limit, and the changes of the last turn after', () => {
    const { fanOut, tell, due, run } = manual({ deliveriesPerTurn: 10, pausePerDeliveryMs: 0 });
    const { told } = watchers(fanOut, 25);
    tell('a', 1);
    const toldOnce = () => told.map((batches) => batches.length);
    expect(toldOnce()).toStrictEqual([...Array<number>(10).fill(1), ...Array<number>(15).fill(0)]);
    tell('b', 2);
    run();
    expect(toldOnce()).toStrictEqual([...Array<number>(20).fill(1), ...Array<number>(5).fill(0)]);
    run();
    // The change made during the batch goes in the next one, after the pause (none here).
    expect([toldOnce(), due()]).toStrictEqual([Array<number>(25).fill(1), [0]]);
    while (due().length > 0) run();
    expect(told.map((batches) => batches.at(-1))).toStrictEqual(Array.from({ length: 25 }, () => [{ key: 'b', value: 2 }]));
  });

  it('tells a watcher only of the changes made after it came; takeUntold hands it those still waiting, which it is then not told again', () => {
    const { fanOut, tell, run, advance } = manual({ pausePerDeliveryMs: 1 });
    const first = watchers(fanOut, 1);
    tell('a', 1);
    tell('a', 2);
    const late: Change[][] = [];
    const watching = fanOut.watch((changes) => late.push([...changes]));
    expect(watching.takeUntold()).toStrictEqual([]);
    tell('b', 3);
    expect(watching.takeUntold()).toStrictEqual([{ key: 'b', value: 3 }]);
    tell('b', 4);
    advance(1);
    run();
    expect(first.told[0]).toStrictEqual([
      [{ key: 'a', value: 1 }],
      [
        { key: 'a', value: 2 },
        { key: 'b', value: 4 },
      ],
    ]);
    expect(late).toStrictEqual([[{ key: 'b', value: 4 }]]);
  });

  it('listens to its source while someone watches, and drops what waited once the last watcher stops', () => {
    const { fanOut, tell, listening, run, advance } = manual({ pausePerDeliveryMs: 1 });
    const { watching, told } = watchers(fanOut, 2);
    expect(listening()).toBe(true);
    tell('a', 1);
    tell('a', 2);
    watching[0]?.stop();
    expect(listening()).toBe(true);
    watching[1]?.stop();
    expect(listening()).toBe(false);
    const again = watchers(fanOut, 1);
    advance(2);
    run();
    tell('a', 3);
    expect([told, again.told]).toStrictEqual([[[[{ key: 'a', value: 1 }]], [[{ key: 'a', value: 1 }]]], [[[{ key: 'a', value: 3 }]]]]);
  });
});
