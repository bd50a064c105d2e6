import type { Decision, LoopEvent, PendingApproval, ShownReason, ToolArguments } from '@airlock/core';
import type { DecidedBy, StoredGrant, StoredRun } from './store';

/**
 * What several server instances on one shared store need from it beyond the store itself: ownership of runs
 * (a lease each instance renews, with a fencing token), decisions as one conditional write, and wake-ups between
 * instances. Without a cluster a ChatService is the only writer of its store and needs none of this.
 *
 * Every write a run makes carries its fencing token (`AppendEventInput.fence`, the `fence` of `appendMessage` and
 * `endRun`): a store with a cluster refuses a write whose token is no longer the run's, so an instance that lost a
 * run (it stalled past its lease and another took over) can never write into it again.
 */
export interface Cluster {
  /**
   * This instance's id, unique among the live instances sharing the store. A cluster is opened under it only while no
   * other live process holds it, and gives up then the runs a previous life of the id owned; it owns runs under its id
   * and an incarnation of its own, so another process under the same id never renews or releases them.
   */
  readonly instanceId: string;
  /**
   * How long a lease lasts without renewal, in ms. An instance that stops renewing loses its runs after this. It
   * renews every `renewalIntervalMs(leaseMs)`.
   */
  readonly leaseMs: number;

  /**
   * Takes a run that is unowned, or whose lease ran out, for this instance: answers the new fencing token (greater
   * than any before for this run), or undefined when another live instance holds it or the run has ended.
   */
  claimRun(runId: string): Promise<number | undefined>;
  /**
   * Extends the lease of every run this instance holds; answers the ids of the runs it still holds, and of those the
   * ones whose Stop is stored (their owner stops them, should the Stop's message not have reached it). None, ever
   * after, once another process has taken this instance's id (this one stalled past its lease).
   */
  renewLeases(): Promise<RenewedLeases>;
  /** Gives up every run this instance holds (a graceful stop), so others take them over at once. */
  releaseRuns(): Promise<void>;
  /**
   * Gives up one run, if this instance still holds it with this fencing token, and tells the others: it is taken
   * over (here too) and resumed as after a crash. Answers whether it was given up. `holdOff`: it is given up because
   * it could not be kept; see HoldOff.
   */
  releaseRun(runId: string, fence: number, holdOff?: HoldOff): Promise<boolean>;
  /** Unfinished runs no live instance holds: unowned, or with a lease that ran out, and not held off. Oldest first. */
  listClaimableRuns(): Promise<StoredRun[]>;
  /**
   * Records that a person stopped the run, for whichever instance resumes it (its `cancelRequested`), and tells every
   * instance with the same commit (a "cancel" message), so its owner stops it even when the instance that stored the
   * Stop dies right after. Answers whether the run was still going.
   */
  requestCancel(runId: string): Promise<boolean>;

  /**
   * A person's decision, as one conditional write: the call's ledger row goes from undecided to decided only if it
   * is still undecided and belongs to `sessionId`. Of two instances deciding one call at once, exactly one gets
   * "resolved". A write that wins tells every instance ("decided", and "grant" for its grant) with its commit.
   */
  claimDecision(input: ClaimDecisionInput): Promise<ClaimDecisionResult>;
  /** The calls of a session waiting for a decision, whichever instance holds their run. */
  listPendingApprovals(sessionId: string): Promise<PendingApproval[]>;
  /** The waiting call with this approval id, when it is still undecided and belongs to the session. */
  getPendingApproval(sessionId: string, approvalId: string): Promise<PendingApprovalRecord | undefined>;
  /** One grant still in force, by id. */
  getGrant(grantId: string): Promise<StoredGrant | undefined>;

  /** Tells every instance (this one too) about a change; delivered in order per sender, at most once. */
  publish(message: ClusterMessage): Promise<void>;
  /** Calls `listener` for every message from any instance until the returned function is called. */
  subscribe(listener: (message: ClusterMessage) => void): () => void;
}

/** What a renewal of an instance's leases found. */
export interface RenewedLeases {
  /** The runs this instance still holds. */
  held: Set<string>;
  /** Of those, the runs a person stopped (their Stop is stored). */
  stopped: Set<string>;
}

/**
 * How long no instance claims a run given up because it could not be kept, kept with the run: none after a first
 * give-up (another instance takes it at once), `firstMs` after one that comes within `maxMs` of the run being
 * claimable again, then twice the last each time, up to `maxMs`. A run kept that long forgets it.
 */
export interface HoldOff {
  firstMs: number;
  maxMs: number;
}

/** How often an instance renews its leases and its hold on its id: every third of a lease, so one late renewal loses nothing. */
export function renewalIntervalMs(leaseMs: number): number {
  return Math.max(20, Math.floor(leaseMs / 3));
}

export interface ClaimDecisionInput {
  sessionId: string;
  approvalId: string;
  decision: Decision;
  /**
   * "user" for a person (and a stop); "grant" when a grant released a waiting call; "system" for a time limit; "rule"
   * when a deny rule changed while the call waited catches it.
   */
  source: 'user' | 'grant' | 'system' | 'rule';
  reason?: string;
  grantId?: string;
  /**
   * With a deny by a rule (source "rule"): the rule and how it read, kept with the decision as the ledger keeps a
   * rule's decision, so an owner that reads the row back (a takeover, a resync) tells it as the rule's, not a bare reason.
   * `fromWorkspaceFile`: the rule came from the workspace's rules file, which that owner tells the model too. Default false.
   */
  rule?: { ruleId: string; text: ShownReason; fromWorkspaceFile?: boolean };
  decidedAt: number;
  by?: DecidedBy;
  /** With a person's allow: the arguments they edited the call to (checked against the tool's schema already). */
  editedArguments?: ToolArguments;
  /**
   * With a person's "Always allow": the chat's grant, written in the same transaction as the claim and only when the
   * claim wins, so a crash cannot keep the allow without its grant or the grant without its allow.
   */
  grant?: StoredGrant;
  /**
   * For an outcome the run's owner reaches by itself (a timeout, a cancel, a grant's release): written only while
   * this is still the run's fencing token, so an owner that stalled and lost the run writes nothing into it.
   */
  fence?: number;
  /**
   * A person's decision sent with a deadline (`notAfter`), on this process's `performance.now()`: the claim waits on
   * no lock past it and is rolled back (DecisionPastDeadlineError) if the deadline passed by the time its row is
   * claimed, so only the COMMIT itself can fall after it.
   */
  deadline?: number;
}

export type ClaimDecisionResult =
  | { status: 'resolved'; call: PendingApprovalRecord }
  | {
      status: 'already-decided';
      decision: Decision;
      source: string;
      reason: string | null;
      grantId: string | null;
      /** The arguments the person edited the call to, with the allow that won: the call runs as edited. */
      editedArguments?: ToolArguments;
      /**
       * A person stopped the call's run (its Stop is stored) and it has not ended, whatever decided the call: nothing
       * runs on it, and its owner stops the run, as on the Stop's message, which it may have missed.
       */
      runStopped?: true;
    }
  | { status: 'not-found' }
  /**
   * A grant's release (source "grant") of a call still waiting, whose grant was revoked (or deleted with its chat)
   * before the claim: nothing was written, and the call waits on for a person.
   */
  | { status: 'grant-gone' };

/** A waiting call with what is needed to grant it (the ledger row's start half). */
export interface PendingApprovalRecord extends PendingApproval {
  executesCode: boolean;
  toolVersion: string;
}

/**
 * What instances tell each other. Ids only: the data is read from the store, so a message that is lost or late
 * never carries stale state.
 */
export type ClusterMessage =
  /**
   * A run's events up to this seq were stored (sent by the store in the same transaction as the events). `waitingIn`:
   * one of them put a call up for a decision, so that session's waiting list changed (see eventMessage).
   */
  | { type: 'event'; runId: string; seq: number; waitingIn?: string }
  /**
   * A call was decided by a conditional write; its run's owner releases the waiting call, and every instance tells its
   * watchers that the session's waiting list changed. `sessionId` is absent from an instance of an older version.
   */
  | { type: 'decided'; runId: string; approvalId: string; sessionId?: string }
  /** A grant was made or revoked in a session. */
  | { type: 'grant'; sessionId: string; grantId: string; revoked: boolean }
  /** A session was created, changed, deleted, or its run started or ended. */
  | { type: 'session'; sessionId: string }
  /**
   * Someone asked to cancel a run; its owner does. Its calls left the waiting list of `sessionId` when the stop was
   * stored, before the owner (perhaps dead) records it, so every instance tells its watchers.
   */
  | { type: 'cancel'; runId: string; sessionId?: string }
  /** An instance released its runs (a graceful stop): others take them over now rather than at lease expiry. */
  | { type: 'released'; instanceId: string }
  /** Lasting rules, or the trust of a workspace's rules file, changed. */
  | { type: 'rules' }
  /** The web app's tool settings (`settings.update`) changed: each instance reads them again for its watchers. */
  | { type: 'settings' }
  /**
   * Delivered by the local cluster only (never sent): the connection that carries messages was lost and is back, so
   * anything may have been missed; listeners re-read what they follow.
   */
  | { type: 'resync' };

/** A write refused because its fencing token is no longer the run's: the run belongs to another instance now. */
export class FencedError extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} is owned by another instance now; this instance may no longer write to it`);
    this.name = 'FencedError';
  }
}

/**
 * The message a store sends with a write of one run's events: the last seq written and, when one of the events put a
 * call up for a decision, the session, so that every instance tells its watchers at the write's commit (a call stops
 * waiting through a claimDecision, whose `decided` message says so). Nothing more is sent than one message per write,
 * however many calls it puts up.
 */
export function eventMessage(runId: string, events: readonly { sessionId: string; seq: number; event: LoopEvent }[]): ClusterMessage {
  const seq = Math.max(...events.map((written) => written.seq));
  const waiting = events.find((written) => written.event.type === 'tool-start' && written.event.awaitingConfirmation);
  return { type: 'event', runId, seq, ...(waiting === undefined ? {} : { waitingIn: waiting.sessionId }) };
}

/** Encodes a message as the short text a notification carries (ids only, well under PostgreSQL's 8,000 bytes). */
export function encodeClusterMessage(message: ClusterMessage): string {
  return JSON.stringify(message);
}

/** Decodes a notification; anything malformed answers undefined and is ignored. */
export function decodeClusterMessage(text: string): ClusterMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const message = value as Record<string, unknown>;
  const str = (key: string) => typeof message[key] === 'string' && (message[key]).length <= 200;
  switch (message.type) {
    case 'event':
      return str('runId') && Number.isSafeInteger(message.seq)
        ? { type: 'event', runId: message.runId as string, seq: message.seq as number, ...(str('waitingIn') ? { waitingIn: message.waitingIn as string } : {}) }
        : undefined;
    case 'decided':
      return str('runId') && str('approvalId')
        ? { type: 'decided', runId: message.runId as string, approvalId: message.approvalId as string, ...(str('sessionId') ? { sessionId: message.sessionId as string } : {}) }
        : undefined;
    case 'grant':
      return str('sessionId') && str('grantId') && typeof message.revoked === 'boolean'
        ? { type: 'grant', sessionId: message.sessionId as string, grantId: message.grantId as string, revoked: message.revoked }
        : undefined;
    case 'session':
      return str('sessionId') ? { type: 'session', sessionId: message.sessionId as string } : undefined;
    case 'cancel':
      return str('runId') ? { type: 'cancel', runId: message.runId as string, ...(str('sessionId') ? { sessionId: message.sessionId as string } : {}) } : undefined;
    case 'released':
      return str('instanceId') ? { type: 'released', instanceId: message.instanceId as string } : undefined;
    case 'rules':
      return { type: 'rules' };
    case 'settings':
      return { type: 'settings' };
    default:
      return undefined;
  }
}
