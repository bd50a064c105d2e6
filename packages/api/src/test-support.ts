import type { SendWindow, Waker } from './event-log';

/** A send window a test opens and shuts by hand (tests only). */
export class ManualWindow implements SendWindow {
  open = true;
  readonly parked = new Set<Waker>();
  park(waiter: Waker): void {
    this.parked.add(waiter);
  }
  unpark(waiter: Waker): void {
    this.parked.delete(waiter);
  }
  /** Opens it and wakes what waited; a waiter that parks again as it wakes stays parked. */
  reopen(): void {
    this.open = true;
    const parked = [...this.parked];
    this.parked.clear();
    for (const waiter of parked) waiter.wake();
  }
}
