import { useSyncExternalStore } from 'react';
import type { PersonDecision } from '../lib/api-types';

/**
 * What became of a decision this tab sent on a call: on its way, taken by the server, not applied because the call
 * was decided first elsewhere (another tab, `airlock chat`, an integration), refused by the server (too late, not
 * valid: nothing was applied, and the call went on waiting), failed on the server (it may or may not have been
 * applied), or sent with no answer (the connection closed: it may or may not have been applied).
 */
export type TabDecisionOutcome = 'sent' | 'accepted' | 'superseded' | 'refused' | 'failed' | 'unanswered';

export interface TabDecision {
  decision: PersonDecision;
  outcome: TabDecisionOutcome;
}

/** Who made the decision a card shows, as far as this tab knows. */
export type DecidedBy = 'you' | 'elsewhere' | 'unknown';

const STORAGE_KEY = 'airlock.decided-here';

/** How many calls' decisions are remembered at most; the oldest goes first. */
export const MAX_TAB_DECISIONS = 500;

type Storage = Pick<globalThis.Storage, 'getItem' | 'setItem'>;

/**
 * The decisions this tab sent, by approval id, kept in its sessionStorage so a reload (and the run's events it
 * replays) still tells the person's own decisions from another client's: the run's tool-decision event says only that
 * a person decided. Storage that is full, blocked or absent keeps them for this page alone and throws nothing.
 */
export class TabDecisions {
  private readonly decisions: Map<string, TabDecision>;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly storage: Storage | undefined) {
    this.decisions = new Map(readStored(storage));
  }

  get(approvalId: string | undefined): TabDecision | undefined {
    return approvalId === undefined || approvalId === '' ? undefined : this.decisions.get(approvalId);
  }

  record(approvalId: string, decision: PersonDecision, outcome: TabDecisionOutcome): void {
    this.decisions.delete(approvalId);
    this.decisions.set(approvalId, { decision, outcome });
    for (const oldest of this.decisions.keys()) {
      if (this.decisions.size <= MAX_TAB_DECISIONS) break;
      this.decisions.delete(oldest);
    }
    try {
      this.storage?.setItem(STORAGE_KEY, JSON.stringify([...this.decisions]));
    } catch {
      // Full or blocked: kept for this page only.
    }
    for (const listener of this.listeners) listener();
  }

  /** Forgets every decision (a test's fresh tab). */
  clear(): void {
    this.decisions.clear();
    try {
      this.storage?.setItem(STORAGE_KEY, '[]');
    } catch {
      // Kept for this page only.
    }
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
}

const OUTCOMES: readonly string[] = ['sent', 'accepted', 'superseded', 'refused', 'failed', 'unanswered'];

function readStored(storage: Storage | undefined): [string, TabDecision][] {
  try {
    const stored: unknown = JSON.parse(storage?.getItem(STORAGE_KEY) ?? '[]');
    if (!Array.isArray(stored)) return [];
    return stored.filter((entry: unknown): entry is [string, TabDecision] => {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string') return false;
      const value: unknown = entry[1];
      if (typeof value !== 'object' || value === null) return false;
      const { decision, outcome } = value as { decision?: unknown; outcome?: unknown };
      return (decision === 'allow' || decision === 'deny') && typeof outcome === 'string' && OUTCOMES.includes(outcome);
    });
  } catch {
    return [];
  }
}

function sessionStorageOrNothing(): Storage | undefined {
  try {
    return typeof window === 'undefined' ? undefined : window.sessionStorage;
  } catch {
    return undefined;
  }
}

/** This tab's decisions: every decision the page sends (a card, the waiting list, a notification) is recorded here. */
export const tabDecisions = new TabDecisions(sessionStorageOrNothing());

/**
 * Who made a person's decision on the call with this approval id: this tab, when it sent one that the server took or
 * has not answered yet; another tab or client otherwise (this tab sent none, its own came second, or the server
 * refused it); unknown when this tab's got no answer or failed on the server.
 */
export function decidedBy(mine: TabDecision | undefined): DecidedBy {
  const by: Record<TabDecisionOutcome, DecidedBy> = { sent: 'you', accepted: 'you', superseded: 'elsewhere', refused: 'elsewhere', failed: 'unknown', unanswered: 'unknown' };
  return mine === undefined ? 'elsewhere' : by[mine.outcome];
}

/** This tab's decision on a call, kept up to date. */
export function useTabDecision(approvalId: string | undefined, store: TabDecisions = tabDecisions): TabDecision | undefined {
  return useSyncExternalStore(store.subscribe, () => store.get(approvalId));
}
