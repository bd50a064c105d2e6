import type { SessionSummary } from '../lib/api-types';

/** A run whose stream ended before its run-end (the server was going down) is followed again this many times at most. */
const MAX_REFOLLOWS = 3;

/** How to show a read of the chat: rebuild it, following `follow` (null: none), with `streamError` on show. */
export interface ChatRead {
  follow: string | null;
  streamError: string | null;
}

/**
 * What one chat view knows of its session's runs between reads of the chat: which runs it has seen, which it saw
 * end, which streams failed. `read` decides from a fresh read of the session whether the view must be rebuilt
 * and which run to follow.
 */
export class ChatRuns {
  /** The history has been shown once (a chat new in this tab has none to show). */
  loaded: boolean;
  private readonly seen = new Set<string>();
  private readonly ended = new Set<string>();
  private readonly failed = new Set<string>();
  /** Runs whose stream ended before their run-end, and how many times. */
  private readonly stopped = new Map<string, number>();
  /** Set when the chat must be read again (its stream failed): the message to keep on show. */
  private rereadBecause: string | undefined;
  /** True while a run goes on that this view does not follow: every read rebuilds the chat. */
  private detached = false;

  constructor(isNew: boolean) {
    this.loaded = isNew;
  }

  /** This view started the run and follows it. */
  started(runId: string): void {
    this.seen.add(runId);
    this.loaded = true;
    this.detached = false;
  }

  /** The run's run-end came. */
  runEnded(runId: string): void {
    this.ended.add(runId);
  }

  hasEnded(runId: string): boolean {
    return this.ended.has(runId);
  }

  /**
   * The run's stream failed (`error`) or ended before its run-end (`stopped`): the chat is read again. A failed
   * run is not followed again; a stopped one is, a few times at most.
   */
  streamFailed(runId: string, message: string, how: 'error' | 'stopped'): void {
    if (how === 'error') this.failed.add(runId);
    else this.stopped.set(runId, (this.stopped.get(runId) ?? 0) + 1);
    this.seen.delete(runId);
    this.rereadBecause = message;
  }

  /**
   * A fresh read of the session, while the view follows `followedRunId`: how to rebuild the chat, or null when
   * what is shown stands. A run whose stream failed is not followed again: its calls are shown as the server has
   * them, and the chat is rebuilt at each read. One whose stream just ended early (the server was going down) is
   * followed again, a few times at most.
   */
  read(session: Pick<SessionSummary, 'activeRunId' | 'lastRunId'>, followedRunId: string | null): ChatRead | null {
    const active = session.activeRunId;
    // A run going that this view does not follow, even one it has seen: a read made while the server was going
    // down says no run is going, and the run it suspended is resumed by the next server.
    const unfollowed = active !== null && active !== followedRunId && !this.ended.has(active);
    // A run this view never followed has come and gone (another tab's, too quick to catch running): its messages
    // are only in the history now.
    const missedRun = active === null && session.lastRunId !== null && !this.seen.has(session.lastRunId) && followedRunId === null;
    const reread = this.rereadBecause;
    if (this.loaded && !unfollowed && !missedRun && reread === undefined && !this.detached) return null;
    if (active !== null) this.seen.add(active);
    if (session.lastRunId !== null) this.seen.add(session.lastRunId);
    this.loaded = true;
    this.rereadBecause = undefined;
    const follow = active !== null && !this.failed.has(active) && (this.stopped.get(active) ?? 0) <= MAX_REFOLLOWS ? active : null;
    this.detached = active !== null && follow === null;
    return { follow, streamError: follow === null ? (reread ?? null) : null };
  }
}
