import { describe, expect, it } from 'vitest';
import { DatabaseClock } from './database-clock';

describe('DatabaseClock', () => {
  it('puts a deadline given on a clock two hours behind the database’s on the database’s, and reads it back as given', () => {
    const clock = new DatabaseClock({ before: 1_000, at: 7_201_010, after: 1_020 });
    expect(clock.aheadMs).toBe(7_200_000);
    expect(clock.toDatabase(61_000)).toBe(7_261_000);
    expect(clock.fromDatabase(7_261_000)).toBe(61_000);
    expect([clock.toDatabase(null), clock.fromDatabase(null)]).toStrictEqual([null, null]);
  });

  it('keeps its offset while a reading allows it, however long the round trip, so a deadline reads the same each time', () => {
    const clock = new DatabaseClock({ before: 1_000, at: 1_010, after: 1_020 });
    const stored = clock.toDatabase(5_000);
    clock.read({ before: 2_000, at: 2_003, after: 2_004 });
    clock.read({ before: 3_000, at: 3_500, after: 4_000 });
    expect(clock.fromDatabase(stored)).toBe(5_000);
  });

  it('moves to a reading that shows its offset wrong: a clock stepped a minute ahead is followed', () => {
    const clock = new DatabaseClock({ before: 1_000, at: 1_000, after: 1_000 });
    clock.read({ before: 62_000, at: 2_000, after: 62_010 });
    expect(clock.aheadMs).toBe(-60_005);
    expect(clock.toDatabase(62_005 + 3_000)).toBe(5_000);
  });
});
