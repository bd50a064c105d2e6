import type { LoopEvent } from '@airlock/core';
import type { AirlockStore, EventPage } from './store';

/** What a run followed from the store shows in place of a stored event whose record is damaged (`record`: it and why). */
export function leftOutEventText(record: string): string {
  return `A stored event of this run is damaged (${record}): left out of what is shown here, and left as stored.`;
}

/**
 * A page of a run's stored events after `from`, for a run followed from the store while another instance writes it.
 * A page holding a damaged event is read again an event at a time up to it; that event is left out, named to
 * `leftOut` with its seq, and a status saying so takes its place at its seq, so the events after it keep the seqs their
 * owner gave them (a client's lastEventId means the same on every instance) and the follow goes on past it.
 */
export async function followedEventPage(store: AirlockStore, runId: string, from: number, page: EventPage, leftOut: (record: string, seq: number) => void): Promise<LoopEvent[]> {
  try {
    return await store.loadEvents(runId, from, page);
  } catch (error) {
    if (store.damagedRecord?.(error) === undefined) throw error;
  }
  const events: LoopEvent[] = [];
  while (events.length < page.events) {
    let read: LoopEvent[];
    try {
      read = await store.loadEvents(runId, from + events.length, { events: 1, chars: page.chars });
    } catch (error) {
      const record = store.damagedRecord?.(error);
      if (record === undefined) throw error;
      leftOut(record, from + events.length + 1);
      events.push({ type: 'status', text: leftOutEventText(record) });
      break;
    }
    if (read.length === 0) break;
    events.push(...read);
  }
  return events;
}
