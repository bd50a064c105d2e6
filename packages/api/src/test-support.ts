import { defineTool, type AnyTool } from '@airlock/core';
import { z } from 'zod';
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

/** A tool that records each text it is run with in `ran` and echoes it (tests only). */
export function echoTool(ran: string[]): AnyTool {
  return defineTool({
    name: 'echo',
    description: 'echoes',
    parameters: z.object({ text: z.string() }),
    annotations: { executesCode: false },
    execute: async ({ text }) => {
      ran.push(text);
      return `echo: ${text}`;
    },
  });
}
