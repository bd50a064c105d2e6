import type { EventPage } from '@airlock/api';

/**
 * The seq of the last event a page takes, from the seq and stored size of the events after where it starts (in order,
 * at most `page.events` of them): as many as fit `page.chars`, the first always. Undefined when there is none.
 */
export function lastSeqOfPage(sizes: readonly { seq: number; bytes: number }[], page: EventPage): number | undefined {
  let end = sizes[0];
  let chars = end?.bytes ?? 0;
  for (const size of sizes.slice(1, Math.max(1, page.events))) {
    chars += size.bytes;
    if (chars > page.chars) break;
    end = size;
  }
  return end?.seq;
}
