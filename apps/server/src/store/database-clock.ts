/** A reading of the database's clock (`at`, epoch ms) between two readings of this instance's (`before`, `after`). */
export interface ClockReading {
  before: number;
  at: number;
  after: number;
}

/**
 * This instance's wall clock against the database's: how far the database's is ahead, read by round trips. The
 * deadlines of waiting calls come and go on this instance's clock and are kept on the database's, which every
 * instance checks them against as it checks leases: written as given plus the offset, read back as stored minus it.
 *
 * The offset in use changes only when a reading shows it wrong (outside what the reading's round trip allows, give or
 * take a millisecond of rounding), so a deadline written is read back as it was given, whatever the round trips took,
 * and one read twice reads the same; a clock set right or stepped meanwhile is followed from the next reading on.
 */
export class DatabaseClock {
  private offset: number;

  constructor(first: ClockReading) {
    this.offset = midpoint(first);
  }

  /** How far the database's clock is ahead of this instance's, in ms (behind when negative). */
  get aheadMs(): number {
    return this.offset;
  }

  /** Takes a new reading: the offset moves to it only where the one in use is outside what it allows. */
  read(reading: ClockReading): void {
    if (this.offset < reading.at - reading.after - 1 || this.offset > reading.at - reading.before + 1) this.offset = midpoint(reading);
  }

  /** A moment on this instance's clock (a call's deadline, none for none), on the database's. */
  toDatabase(at: number | null): number | null {
    return at === null ? null : at + this.offset;
  }

  /** A moment on the database's clock, on this instance's. */
  fromDatabase(at: number | null): number | null {
    return at === null ? null : at - this.offset;
  }
}

function midpoint(reading: ClockReading): number {
  return Math.round(reading.at - (reading.before + reading.after) / 2);
}
