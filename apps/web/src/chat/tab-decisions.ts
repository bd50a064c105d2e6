import { useMemo, useSyncExternalStore } from 'react';
import type { PersonDecision } from '../lib/api-types';
import { randomId } from '../lib/random-id';

/**
 * What became of a decision a tab sent on a call: on its way, taken by the server, not applied because the call
 * was decided first elsewhere (another tab, `airlock chat`, an integration), refused by the server (too late, not
 * valid: nothing was applied, and the call went on waiting), failed on the server (it may or may not have been
 * applied), or sent with no answer (the connection closed: it may or may not have been applied).
 */
export type TabDecisionOutcome = 'sent' | 'accepted' | 'superseded' | 'refused' | 'failed' | 'unanswered';

export interface TabDecision {
  decision: PersonDecision;
  outcome: TabDecisionOutcome;
}

/** One tab's latest decision on a call. */
export interface SentFromTab extends TabDecision {
  tab: string;
}

/** The decisions this browser's tabs sent on one call, each tab's latest, and when the last was recorded. */
export interface CallDecisions {
  at: number;
  tabs: readonly SentFromTab[];
}

/**
 * Who made the decision a card shows, as far as this browser knows: this tab, another tab of this browser, neither
 * (another browser, `airlock chat`, an integration), or unknown (a decision sent from here got no clear answer).
 */
export type DecidedBy = 'you' | 'another-tab' | 'elsewhere' | 'unknown';

const KEY_PREFIX = 'airlock.decision.';
const TAB_ID_KEY = 'airlock.tab-id';

/** How many calls' decisions are remembered at most, across the browser's tabs; the oldest goes first. */
export const MAX_TAB_DECISIONS = 500;
/** Tabs remembered per call; a call decided from more tabs than that forgets the oldest. */
const MAX_TABS_PER_CALL = 8;

type SharedStorage = Pick<globalThis.Storage, 'getItem' | 'setItem' | 'removeItem' | 'key' | 'length'>;

export interface TabDecisionsOptions {
  /**
   * Where every tab of this browser profile keeps the decisions it sent (localStorage), so a reload and a new tab
   * still tell the person's own decisions from another client's. Default none: this page alone knows its own.
   */
  shared?: SharedStorage | undefined;
  /** This tab's id, the same across its reloads (kept in its sessionStorage). */
  tabId: string;
  /** Default `Date.now`. */
  now?: () => number;
}

/**
 * The decisions this browser sent, by approval id and tab, kept in localStorage (one key per call) so a reload, and
 * the run's events it replays, still tell the person's own decisions from another client's: the run's
 * tool-decision event says only that a person decided. Storage that is full, blocked or absent keeps them for this
 * page alone and throws nothing.
 */
export class TabDecisions {
  private readonly calls = new Map<string, CallDecisions>();
  private readonly listeners = new Set<() => void>();
  private readonly shared: SharedStorage | undefined;
  readonly tabId: string;
  private readonly now: () => number;

  constructor(options: TabDecisionsOptions) {
    this.shared = options.shared;
    this.tabId = options.tabId;
    this.now = options.now ?? Date.now;
    for (const key of this.sharedKeys()) this.readShared(key);
  }

  /** Whether other tabs' decisions are seen here: without shared storage, "elsewhere" may be another tab. */
  get seesOtherTabs(): boolean {
    return this.shared !== undefined;
  }

  /** Every tab's decisions on a call; the same object until one of them changes. */
  forCall(approvalId: string | undefined): CallDecisions | undefined {
    return approvalId === undefined || approvalId === '' ? undefined : this.calls.get(approvalId);
  }

  /** This tab's own decision on a call. */
  get(approvalId: string | undefined): TabDecision | undefined {
    return ownDecision(this.forCall(approvalId), this.tabId);
  }

  record(approvalId: string, decision: PersonDecision, outcome: TabDecisionOutcome): void {
    // Read again first: another tab may have written this call since its storage event reached this one.
    this.readShared(KEY_PREFIX + approvalId);
    const others = (this.calls.get(approvalId)?.tabs ?? []).filter((sent) => sent.tab !== this.tabId);
    const call: CallDecisions = { at: this.now(), tabs: [...others, { tab: this.tabId, decision, outcome }].slice(-MAX_TABS_PER_CALL) };
    this.calls.delete(approvalId);
    this.calls.set(approvalId, call);
    this.write(KEY_PREFIX + approvalId, JSON.stringify(call));
    this.evict();
    this.notify();
  }

  /** Takes in what another tab wrote (the window's storage event; `key` null when the storage was cleared). */
  storageChanged(key: string | null): void {
    if (key === null) {
      this.calls.clear();
      for (const stored of this.sharedKeys()) this.readShared(stored);
    } else if (key.startsWith(KEY_PREFIX)) this.readShared(key);
    else return;
    this.notify();
  }

  /** Forgets every decision (a test's fresh browser). */
  clear(): void {
    for (const approvalId of this.calls.keys()) this.remove(KEY_PREFIX + approvalId);
    this.calls.clear();
    this.notify();
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  private evict(): void {
    if (this.calls.size <= MAX_TAB_DECISIONS) return;
    const oldestFirst = [...this.calls].sort(([, a], [, b]) => a.at - b.at);
    for (const [approvalId] of oldestFirst.slice(0, this.calls.size - MAX_TAB_DECISIONS)) {
      this.calls.delete(approvalId);
      this.remove(KEY_PREFIX + approvalId);
    }
  }

  private readShared(key: string): void {
    if (this.shared === undefined) return;
    const approvalId = key.slice(KEY_PREFIX.length);
    let stored: string | null;
    try {
      stored = this.shared.getItem(key);
    } catch {
      return;
    }
    const call = stored === null ? undefined : parseCall(stored);
    if (call === undefined) this.calls.delete(approvalId);
    // Unchanged, it stays the same object: a card's snapshot changes only with its call.
    else if (stored !== JSON.stringify(this.calls.get(approvalId))) this.calls.set(approvalId, call);
  }

  private sharedKeys(): string[] {
    const keys: string[] = [];
    try {
      for (let index = 0; index < (this.shared?.length ?? 0); index++) {
        const key = this.shared?.key(index);
        if (key?.startsWith(KEY_PREFIX) === true) keys.push(key);
      }
    } catch {
      // Blocked: nothing shared to read.
    }
    return keys;
  }

  private write(key: string, value: string): void {
    try {
      this.shared?.setItem(key, value);
    } catch {
      // Full or blocked: kept for this page only.
    }
  }

  private remove(key: string): void {
    try {
      this.shared?.removeItem(key);
    } catch {
      // Blocked: nothing to remove.
    }
  }
}

const OUTCOMES: readonly string[] = ['sent', 'accepted', 'superseded', 'refused', 'failed', 'unanswered'];

function parseCall(text: string): CallDecisions | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return undefined;
    const { at, tabs } = value as { at?: unknown; tabs?: unknown };
    if (typeof at !== 'number' || !Array.isArray(tabs)) return undefined;
    const valid = tabs.filter((sent: unknown): sent is SentFromTab => {
      if (typeof sent !== 'object' || sent === null) return false;
      const { tab, decision, outcome } = sent as { tab?: unknown; decision?: unknown; outcome?: unknown };
      return typeof tab === 'string' && (decision === 'allow' || decision === 'deny') && typeof outcome === 'string' && OUTCOMES.includes(outcome);
    });
    return { at, tabs: valid.map(({ tab, decision, outcome }) => ({ tab, decision, outcome })).slice(-MAX_TABS_PER_CALL) };
  } catch {
    return undefined;
  }
}

function ownDecision(call: CallDecisions | undefined, tabId: string): TabDecision | undefined {
  const own = call?.tabs.find((sent) => sent.tab === tabId);
  return own === undefined ? undefined : { decision: own.decision, outcome: own.outcome };
}

/**
 * Who made a person's decision on a call, from what this browser's tabs sent on it: the tab whose decision the
 * server took, or else whose decision is on its way (this one's first); unknown when one got no clear answer (no
 * answer, a failure on the server); another browser or client otherwise (none was sent from here, or each came
 * second or was refused).
 */
export function decidedBy(call: CallDecisions | undefined, tabId: string): DecidedBy {
  const tabs = call?.tabs ?? [];
  const by = (sent: SentFromTab): DecidedBy => (sent.tab === tabId ? 'you' : 'another-tab');
  const accepted = tabs.find((sent) => sent.outcome === 'accepted');
  if (accepted !== undefined) return by(accepted);
  const sent = tabs.filter((entry) => entry.outcome === 'sent');
  if (sent.length > 0) return sent.some((entry) => entry.tab === tabId) ? 'you' : 'another-tab';
  return tabs.some((entry) => entry.outcome === 'unanswered' || entry.outcome === 'failed') ? 'unknown' : 'elsewhere';
}

/** What a card knows of who decided its call: this tab's own decision, who decided, and whether other tabs are seen. */
export interface CallDecider {
  mine: TabDecision | undefined;
  by: DecidedBy;
  seesOtherTabs: boolean;
}

/** Who decided a call, as this browser knows it, kept up to date (this tab's decisions and other tabs'). */
export function useCallDecider(approvalId: string | undefined, store: TabDecisions = tabDecisions): CallDecider {
  const call = useSyncExternalStore(store.subscribe, () => store.forCall(approvalId));
  return useMemo(() => ({ mine: ownDecision(call, store.tabId), by: decidedBy(call, store.tabId), seesOtherTabs: store.seesOtherTabs }), [call, store]);
}

function storageOrNothing(kind: 'localStorage' | 'sessionStorage'): globalThis.Storage | undefined {
  try {
    return typeof window === 'undefined' ? undefined : window[kind];
  } catch {
    return undefined;
  }
}

/**
 * This tab's id, kept in its sessionStorage, so a reload is the same tab and a new tab another. A tab duplicated by
 * the browser starts with a copy of its sessionStorage, and so takes the original's id: its decisions and the
 * original's read as one tab's ("you" either way).
 */
function thisTabId(): string {
  const tabStorage = storageOrNothing('sessionStorage');
  try {
    const kept = tabStorage?.getItem(TAB_ID_KEY);
    if (kept) return kept;
  } catch {
    // Blocked: an id for this page alone.
  }
  const id = randomId('tab');
  try {
    tabStorage?.setItem(TAB_ID_KEY, id);
  } catch {
    // Kept for this page only.
  }
  return id;
}

function sharedStorage(): globalThis.Storage | undefined {
  const storage = storageOrNothing('localStorage');
  try {
    // Blocked storage may throw only when used.
    storage?.getItem(TAB_ID_KEY);
    return storage;
  } catch {
    return undefined;
  }
}

/** This browser's decisions: every decision the page sends (a card, the waiting list, a notification) is recorded here. */
export const tabDecisions = new TabDecisions({ shared: sharedStorage(), tabId: thisTabId() });

if (typeof window !== 'undefined') window.addEventListener('storage', (event) => tabDecisions.storageChanged(event.key));
