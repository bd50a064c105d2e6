import { createContext, useContext, useEffect, useRef, useState } from 'react';
import type { ToolArguments } from '../lib/api-types';
import type { ChoiceValue } from './argument-form';
import type { WaitingApprovals } from '../waiting/use-waiting-approvals';
import { HeldEditsContext } from './held-edits';

/** What one of the form's inputs held: its text, its tick, or the value of the option chosen (not its place in the list). */
export type DraftInput = string | boolean | { option: ChoiceValue };

/**
 * What the argument editor held: its form or its raw JSON. A form keeps the arguments its fields were made from only
 * when they are not the proposal (after Raw JSON, then Form), and only the inputs that differ from those arguments:
 * a small edit of a large call stays small.
 */
export type EditDraft =
  | { mode: 'form'; fieldsFrom?: ToolArguments; values: readonly (readonly [string, DraftInput])[] }
  | { mode: 'raw'; text: string };

/** What the person typed on a waiting card and has not sent: an edit of the arguments, a deny reason, or both. */
export interface WaitingDraft {
  edit?: EditDraft;
  reason?: string;
}

interface StoredDraft extends WaitingDraft {
  /** When the call stops waiting by itself (its timeout), null when it has none. */
  expiresAt: number | null;
  savedAt: number;
}

const KEY_PREFIX = 'airlock.draft.';

/** A draft longer than this, as stored, is not kept: storage is a few megabytes shared with the rest of the app. */
export const MAX_DRAFT_CHARS = 100_000;

/** How many calls' drafts are kept at most; the oldest saved goes first. */
export const MAX_DRAFTS = 20;

/**
 * The tab's unsent drafts on waiting cards, by approval id, in its sessionStorage: a reload or a card shown again
 * (another chat and back, a reconnect) gives the person back what they were typing. Only ever this call's own
 * draft, never sent by being restored: Allow edited sends it, checked by the server as any edit. Storage that is
 * full, blocked or absent keeps nothing and throws nothing.
 */
export class WaitingDrafts {
  constructor(
    /** This tab's sessionStorage; undefined when the browser blocks it (nothing is then kept). */
    private readonly storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem' | 'key' | 'length'> | undefined,
    /** The clock expiries are read against. Default: Date.now. */
    private readonly now: () => number = Date.now,
  ) {}

  /** The calls whose draft holds an edit, read from storage once, then kept as drafts are saved and dropped. */
  private edits: Set<string> | undefined;
  private readonly listeners = new Set<() => void>();

  /** The calls whose kept draft holds an edit of the arguments. */
  editIds(): ReadonlySet<string> {
    return new Set(this.knownEdits());
  }

  /** Calls `listener` whenever the calls whose draft holds an edit change. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Drops the drafts of calls whose time to be decided has passed, and any entry that does not read as a draft. */
  dropExpired(): void {
    for (const approvalId of this.ids()) {
      const stored = this.readStored(approvalId);
      if (stored === undefined || (stored.expiresAt !== null && stored.expiresAt <= this.now())) this.drop(approvalId);
    }
  }

  /** Drops every draft but those of `waiting`: the calls known to still wait. */
  keepOnly(waiting: ReadonlySet<string>): void {
    for (const approvalId of this.ids()) if (!waiting.has(approvalId)) this.drop(approvalId);
  }

  read(approvalId: string): WaitingDraft | undefined {
    const stored = this.readStored(approvalId);
    if (stored === undefined) return undefined;
    return { ...(stored.edit === undefined ? {} : { edit: stored.edit }), ...(stored.reason === undefined ? {} : { reason: stored.reason }) };
  }

  /**
   * Keeps `draft` as the call's, in place of what was kept; an empty one drops it. False when it could not be kept
   * (too large, storage full or blocked): what was kept before is dropped then, so an older version never comes back.
   */
  save(approvalId: string, draft: WaitingDraft, expiresAt: number | null): boolean {
    const edit = draft.edit;
    const reason = draft.reason === '' ? undefined : draft.reason;
    if (edit === undefined && reason === undefined) {
      this.drop(approvalId);
      return true;
    }
    const stored: StoredDraft = { ...(edit === undefined ? {} : { edit }), ...(reason === undefined ? {} : { reason }), expiresAt, savedAt: this.now() };
    const text = JSON.stringify(stored);
    if (this.storage === undefined || text.length > MAX_DRAFT_CHARS) {
      this.drop(approvalId);
      return false;
    }
    try {
      this.storage.setItem(KEY_PREFIX + approvalId, text);
    } catch {
      this.drop(approvalId);
      return false;
    }
    this.noteEdit(approvalId, edit !== undefined);
    this.dropOldest(approvalId);
    return true;
  }

  drop(approvalId: string): void {
    try {
      this.storage?.removeItem(KEY_PREFIX + approvalId);
    } catch {
      // Storage gone: nothing is kept to drop.
    }
    this.noteEdit(approvalId, false);
  }

  private knownEdits(): Set<string> {
    this.edits ??= new Set(this.ids().filter((approvalId) => this.readStored(approvalId)?.edit !== undefined));
    return this.edits;
  }

  private noteEdit(approvalId: string, kept: boolean): void {
    const edits = this.knownEdits();
    if (edits.has(approvalId) === kept) return;
    if (kept) edits.add(approvalId);
    else edits.delete(approvalId);
    for (const listener of this.listeners) listener();
  }

  private dropOldest(saved: string): void {
    const ids = this.ids();
    if (ids.length <= MAX_DRAFTS) return;
    const others = ids
      .filter((approvalId) => approvalId !== saved)
      .map((approvalId) => ({ approvalId, savedAt: this.readStored(approvalId)?.savedAt ?? 0 }))
      .sort((a, b) => a.savedAt - b.savedAt);
    for (const { approvalId } of others.slice(0, Math.max(0, others.length + 1 - MAX_DRAFTS))) this.drop(approvalId);
  }

  private ids(): string[] {
    if (this.storage === undefined) return [];
    try {
      const ids: string[] = [];
      for (let index = 0; index < this.storage.length; index++) {
        const key = this.storage.key(index);
        if (key?.startsWith(KEY_PREFIX)) ids.push(key.slice(KEY_PREFIX.length));
      }
      return ids;
    } catch {
      return [];
    }
  }

  private readStored(approvalId: string): StoredDraft | undefined {
    let raw: string | null;
    try {
      raw = this.storage?.getItem(KEY_PREFIX + approvalId) ?? null;
    } catch {
      return undefined;
    }
    if (raw === null) return undefined;
    try {
      return asStoredDraft(JSON.parse(raw) as unknown);
    } catch {
      return undefined;
    }
  }
}

function asStoredDraft(value: unknown): StoredDraft | undefined {
  if (!isRecord(value)) return undefined;
  const { edit, reason, expiresAt, savedAt } = value;
  if (typeof savedAt !== 'number' || (expiresAt !== null && typeof expiresAt !== 'number')) return undefined;
  if (reason !== undefined && typeof reason !== 'string') return undefined;
  const readEdit = edit === undefined ? undefined : asEditDraft(edit);
  if (edit !== undefined && readEdit === undefined) return undefined;
  if (readEdit === undefined && reason === undefined) return undefined;
  return { ...(readEdit === undefined ? {} : { edit: readEdit }), ...(reason === undefined ? {} : { reason }), expiresAt, savedAt };
}

function asEditDraft(value: unknown): EditDraft | undefined {
  if (!isRecord(value)) return undefined;
  if (value.mode === 'raw') return typeof value.text === 'string' ? { mode: 'raw', text: value.text } : undefined;
  if (value.mode !== 'form' || (value.fieldsFrom !== undefined && !isRecord(value.fieldsFrom)) || !Array.isArray(value.values)) return undefined;
  const values: [string, DraftInput][] = [];
  for (const entry of value.values as unknown[]) {
    if (!Array.isArray(entry) || entry.length !== 2) return undefined;
    const [name, input] = entry as unknown[];
    if (typeof name !== 'string' || !isDraftInput(input)) return undefined;
    values.push([name, input]);
  }
  return { mode: 'form', ...(value.fieldsFrom === undefined ? {} : { fieldsFrom: value.fieldsFrom }), values };
}

function isDraftInput(value: unknown): value is DraftInput {
  if (typeof value === 'string' || typeof value === 'boolean') return true;
  if (!isRecord(value) || !Object.hasOwn(value, 'option')) return false;
  const { option } = value;
  return option === null || typeof option === 'string' || typeof option === 'number' || typeof option === 'boolean';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** This tab's drafts; by default none are kept (a test, a card shown outside the app). */
export const WaitingDraftsContext = createContext(new WaitingDrafts(undefined));

/**
 * The tab's drafts, for the app to give its cards: those of calls that stopped waiting are dropped, at start (the
 * first waiting list read, and expiries before it) and whenever a call leaves the list, decided wherever it was.
 */
export function useTabDrafts(waiting: WaitingApprovals): WaitingDrafts {
  const [drafts] = useState(() => {
    const kept = new WaitingDrafts(tabStorage());
    kept.dropExpired();
    return kept;
  });
  const seen = useRef<ReadonlySet<string> | null>(null);
  useEffect(() => {
    if (!waiting.loaded) return;
    const now = new Set(waiting.all.map((approval) => approval.approvalId));
    if (seen.current === null) drafts.keepOnly(now);
    else for (const approvalId of seen.current) if (!now.has(approvalId)) drafts.drop(approvalId);
    seen.current = now;
  }, [waiting, drafts]);
  // An edit kept as a draft is held as an open editor's is: its card goes with its chat, and comes back with it.
  const held = useContext(HeldEditsContext);
  useEffect(() => {
    const sync = () => held.holdKept(drafts.editIds());
    sync();
    const stop = drafts.subscribe(sync);
    return () => {
      stop();
      held.holdKept(new Set());
    };
  }, [drafts, held]);
  return drafts;
}

function tabStorage(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    // Blocked by the browser: drafts last as long as their card.
    return undefined;
  }
}
