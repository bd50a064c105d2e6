/** A socket's share of the bytes held unsent, as the budget sees it. */
export interface SendBufferHolder {
  /** Bytes waiting to be sent on it now. */
  readonly bufferedBytes: number;
  /** Since when (performance.now()) its send window has been shut; undefined while it is open. */
  readonly shutSince: number | undefined;
  /** Closes it, for holding too much while others do too. */
  evict(): void;
}

/**
 * What the server holds unsent over all its sockets. Each socket's send window bounds its own (256 KiB, plus the frame
 * that crossed the mark, which can be a page of a chat), but over thousands of connections that do not read those
 * added up to gigabytes. Past `maxBytes` together, the socket whose window has been shut the longest (the one that
 * went the longest without reading) is closed, then the next, until they are under it; a socket briefly slow, whose
 * window shut a moment ago, is the last to go.
 *
 * Each socket's bytes are noted when it sends a frame and when it drains; between, what it hands to the kernel is not
 * seen, so the sum only overestimates. Over the bound it is measured again, every holder read, before anything is
 * closed.
 */
export class SendBufferBudget {
  private readonly held = new Map<SendBufferHolder, number>();
  private total = 0;

  constructor(private readonly maxBytes: number) {}

  /** Notes what `holder` has waiting now, and closes the longest shut holders while the sum is over the bound. */
  note(holder: SendBufferHolder): void {
    this.set(holder, holder.bufferedBytes);
    if (this.total <= this.maxBytes) return;
    for (const [each] of this.held) this.set(each, each.bufferedBytes);
    while (this.total > this.maxBytes) {
      const victim = this.longestShut() ?? this.holdingMost();
      if (victim === undefined) return;
      this.forget(victim);
      victim.evict();
    }
  }

  /** `holder` closed: what it held is no longer counted. */
  forget(holder: SendBufferHolder): void {
    this.set(holder, 0);
  }

  /** Bytes noted over all holders (for tests of the bound). */
  get noted(): number {
    return this.total;
  }

  private set(holder: SendBufferHolder, bytes: number): void {
    this.total += bytes - (this.held.get(holder) ?? 0);
    if (bytes === 0) this.held.delete(holder);
    else this.held.set(holder, bytes);
  }

  private longestShut(): SendBufferHolder | undefined {
    let found: SendBufferHolder | undefined;
    for (const [holder] of this.held) {
      const since = holder.shutSince;
      if (since !== undefined && (found === undefined || since < found.shutSince!)) found = holder;
    }
    return found;
  }

  private holdingMost(): SendBufferHolder | undefined {
    let found: SendBufferHolder | undefined;
    let most = 0;
    for (const [holder, bytes] of this.held) {
      if (bytes > most) {
        found = holder;
        most = bytes;
      }
    }
    return found;
  }
}
