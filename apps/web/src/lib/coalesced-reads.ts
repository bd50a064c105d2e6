/**
 * Reads asked for by key, one at a time per key: a read asked for while the same key's read is on its way is made
 * once more when that one is answered, however many times it was asked for meanwhile. So each ask is followed by a
 * read that started after it (a read already on its way may have been answered before the change that asked), and a
 * burst of changes makes two reads per key, not one per change: a tab told of hundreds of changes at once asked the
 * server hundreds of reads at once, past what one connection may have waiting, and the refused reads left the lists
 * stale.
 */
export class CoalescedReads {
  private readonly reading = new Map<string, { again: boolean; read: () => Promise<unknown> }>();

  /** Makes `read` (or, when a read of `key` is on its way, makes the newest read asked for once after that one). A failed read ends quietly. */
  request(key: string, read: () => Promise<unknown>): void {
    const current = this.reading.get(key);
    if (current !== undefined) {
      current.again = true;
      current.read = read;
      return;
    }
    const state = { again: false, read };
    this.reading.set(key, state);
    void (async () => {
      try {
        do {
          state.again = false;
          await state.read().catch(() => undefined);
        } while (state.again);
      } finally {
        this.reading.delete(key);
      }
    })();
  }
}
