/**
 * After telling every watcher of a batch, the fan-out waits this long for each delivery it made (a watcher told of one
 * change) before it tells them of the next batch; the changes that come meanwhile join that batch, one per key.
 * A delivery costs the server about 20–40 µs (the watch's turn, its message framed and sent), so the fan-out takes
 * less than half a core however many connections watch and however many changes they make: 4,000 watches make a
 * batch at most every 200 ms. A person's few tabs make it a fraction of a millisecond.
 */
export const FAN_OUT_PAUSE_PER_DELIVERY_MS = 0.05;

/** Deliveries made in one turn of the event loop at most (a watcher's whole batch at once): `/healthz` and the other connections' requests are answered between turns. */
export const FAN_OUT_DELIVERIES_PER_TURN = 500;

export interface ChangeFanOutOptions {
  /** The pause after a batch for each delivery it made, in ms. Default FAN_OUT_PAUSE_PER_DELIVERY_MS. */
  pausePerDeliveryMs?: number;
  /** Deliveries made in one turn of the event loop at most. Default FAN_OUT_DELIVERIES_PER_TURN. */
  deliveriesPerTurn?: number;
  /** Runs `work` after `delayMs` (0: on the event loop's next turn). Default `setImmediate` / `setTimeout`. */
  schedule?: (work: () => void, delayMs: number) => void;
  /** Clock for the pauses. Default `performance.now`. */
  now?: () => number;
}

interface Pending<C> {
  change: C;
  /** Its place in the order the changes came, over all keys. */
  seq: number;
}

/** One watcher's hold on a fan-out. */
export interface Watching<C> {
  /** The changes made since it started watching that it has not been told of yet; it is not told of them again. */
  takeUntold(): C[];
  /** Stops telling it; the last watcher to stop stops the fan-out listening to its source. */
  stop(): void;
}

interface Watcher<C> {
  tell: (changes: readonly C[]) => void;
  /** The seq of the last change told before it started watching: it hears only the changes after it. */
  after: number;
}

/**
 * The changes of one source (the list of chats, the settings) told to every watch of the server, in batches. A change
 * that comes while a batch waits replaces the one of the same key in it (a watch re-reads or replaces what a key
 * names, so the newest is all it needs). A change is told at once, unless the pause after the last batch runs: then
 * it waits for the pause to end, with all that come meanwhile. So the work of telling every watch is bounded over all connections, not
 * per connection only: a thousand changes from many connections make a few batches, each watch told of each once,
 * and every watch hears the last change of each key, never an older one after it.
 */
export class ChangeFanOut<C> {
  private readonly watchers = new Set<Watcher<C>>();
  private readonly pending = new Map<string, Pending<C>>();
  private seq = 0;
  private stopSource: (() => void) | undefined;
  /** A batch is scheduled or being told. */
  private busy = false;
  /** When the pause after the last batch is over (`now()` time). */
  private pauseEnds = 0;
  private readonly pausePerDelivery: number;
  private readonly deliveriesPerTurn: number;
  private readonly schedule: (work: () => void, delayMs: number) => void;
  private readonly now: () => number;

  /** `listen` starts listening to the source (called once the first watcher comes) and answers how to stop. */
  constructor(
    private readonly listen: (listener: (change: C) => void) => () => void,
    private readonly keyOf: (change: C) => string,
    options: ChangeFanOutOptions = {},
  ) {
    this.pausePerDelivery = options.pausePerDeliveryMs ?? FAN_OUT_PAUSE_PER_DELIVERY_MS;
    this.deliveriesPerTurn = options.deliveriesPerTurn ?? FAN_OUT_DELIVERIES_PER_TURN;
    // A pause keeps no process alive: changes told after a shutdown reach no one.
    this.schedule = options.schedule ?? ((work, delayMs) => void (delayMs > 0 ? setTimeout(work, delayMs).unref() : setImmediate(work)));
    this.now = options.now ?? (() => performance.now());
  }

  /** Calls `tell` with each batch of the changes made after this call, until it is stopped. */
  watch(tell: (changes: readonly C[]) => void): Watching<C> {
    const watcher: Watcher<C> = { tell, after: this.seq };
    this.watchers.add(watcher);
    this.stopSource ??= this.listen((change) => this.add(change));
    return {
      takeUntold: () => {
        const untold = [...this.pending.values()].filter((entry) => entry.seq > watcher.after);
        watcher.after = this.seq;
        return untold.map((entry) => entry.change);
      },
      stop: () => {
        this.watchers.delete(watcher);
        if (this.watchers.size > 0) return;
        this.stopSource?.();
        this.stopSource = undefined;
        this.pending.clear();
      },
    };
  }

  private add(change: C): void {
    const key = this.keyOf(change);
    this.pending.delete(key);
    this.pending.set(key, { change, seq: ++this.seq });
    if (this.busy) return;
    // Told at once when no pause is running, as each change was before: only a burst waits, and is told together.
    if (this.now() >= this.pauseEnds) this.tellBatch();
    else this.scheduleBatch();
  }

  private scheduleBatch(): void {
    this.busy = true;
    this.schedule(() => this.tellBatch(), Math.max(0, this.pauseEnds - this.now()));
  }

  private tellBatch(): void {
    this.busy = true;
    const batch = [...this.pending.values()];
    this.pending.clear();
    const changes = batch.map((entry) => entry.change);
    const oldest = batch[0]?.seq ?? Infinity;
    const watchers = [...this.watchers];
    let deliveries = 0;
    const turn = (from: number) => {
      let index = from;
      let made = 0;
      while (index < watchers.length && (made === 0 || made + changes.length <= this.deliveriesPerTurn)) {
        const watcher = watchers[index++]!;
        if (!this.watchers.has(watcher)) continue;
        // A watcher that came while this batch waited hears only what came after it (it read what was before).
        const told = watcher.after < oldest ? changes : batch.filter((entry) => entry.seq > watcher.after).map((entry) => entry.change);
        if (told.length === 0) continue;
        made += told.length;
        try {
          watcher.tell(told);
        } catch {
          this.watchers.delete(watcher);
        }
      }
      deliveries += made;
      if (index < watchers.length) {
        this.schedule(() => turn(index), 0);
        return;
      }
      this.pauseEnds = this.now() + deliveries * this.pausePerDelivery;
      this.busy = false;
      if (this.pending.size > 0) this.scheduleBatch();
    };
    turn(0);
  }
}
