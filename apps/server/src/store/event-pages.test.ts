import type { LoopEvent } from '@airlock/api';
import { beforeEach, describe, expect, it } from 'vitest';
import { storeImplementations } from './store-implementations';
import { run, session, statusEvent } from './test-support';

const implementations = await storeImplementations();

describe.each(implementations)('a run’s events read a page at a time: $name', ({ open, skipReason }) => {
  beforeEach((context) => context.skip(skipReason !== undefined, skipReason));

  it('reads at most a page’s events and characters (the first event always), where the last page left off, and tells where the events end', async () => {
    await using opened = await open();
    const { store } = opened;
    await store.createSession(session('s'));
    await store.createRun(run('r', 's'));
    // Events of 100 characters of JSON, one of 1,000 at seq 6.
    const events: LoopEvent[] = Array.from({ length: 12 }, (_, index) => statusEvent((index === 5 ? 'x' : 'y').repeat((index === 5 ? 1_000 : 100) - 27)));
    expect(JSON.stringify(events[0]).length).toBe(100);
    await store.appendEvents(events.map((event, index) => ({ runId: 'r', sessionId: 's', seq: index + 1, event, at: 1 })));

    expect(await store.lastEventSeq('r')).toBe(12);
    expect(await store.lastEventSeq('none')).toBe(0);

    // At most 3 events.
    expect(await store.loadEvents('r', 0, { events: 3, chars: 1_000_000 })).toStrictEqual(events.slice(0, 3));
    // At most 250 characters: two events of 100, not the third.
    expect(await store.loadEvents('r', 1, { events: 10, chars: 250 })).toStrictEqual(events.slice(1, 3));
    // Ends before the large one at seq 6, which comes next alone, over the bound as it is.
    expect(await store.loadEvents('r', 3, { events: 10, chars: 500 })).toStrictEqual(events.slice(3, 5));
    expect(await store.loadEvents('r', 5, { events: 10, chars: 500 })).toStrictEqual([events[5]]);
    expect(await store.loadEvents('r', 6, { events: 100, chars: 1_000_000 })).toStrictEqual(events.slice(6));
    expect(await store.loadEvents('r', 12, { events: 10, chars: 500 })).toStrictEqual([]);
    expect(await store.loadEvents('none', 0, { events: 10, chars: 500 })).toStrictEqual([]);

    // Page after page, each event once and in order.
    const paged: LoopEvent[] = [];
    for (let page = await store.loadEvents('r', 0, { events: 4, chars: 350 }); page.length > 0; page = await store.loadEvents('r', paged.length, { events: 4, chars: 350 })) {
      expect(page.length).toBeLessThanOrEqual(4);
      paged.push(...page);
    }
    expect(paged).toStrictEqual(events);
    // Without a page, everything after the seq, as before.
    expect(await store.loadEvents('r', 10)).toStrictEqual(events.slice(10));
  });
});
