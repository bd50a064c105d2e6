import {
  AirlockError,
  argumentIssues,
  canonicalJson,
  Cancellation,
  ConflictError,
  DecisionNotStoredError,
  PolicyChangedError,
  endsAtOnce,
  grantsNeedExactArguments,
  InvalidArgumentsError,
  NotFoundError,
  ParkedRun,
  quote,
  randomId,
  reasonParts,
  runToolLoop,
  toolResultText,
  toolVersion,
  type AnyTool,
  type ApprovalRegistry,
  type ChatMessage,
  type ChatModel,
  type Decision,
  type DecisionOutcome,
  type DecisionSource,
  type DecisionTimeout,
  type Grant,
  type LoopEvent,
  type LoopEventOf,
  type PendingApproval,
  type PolicyOptions,
  type PolicyVerdict,
  type ResolveResult,
  type RestoredApproval,
  type ResumedCall,
  type ResumeState,
  type RunEndReason,
  type RunResult,
  type ToolArguments,
  type ToolCall,
  type ToolSlots,
  type VersionedGrant,
  MAX_REASON_LENGTH,
} from '@airlock/core';
import { FencedError, renewalIntervalMs, type ClaimDecisionResult, type Cluster, type ClusterMessage, type PendingApprovalRecord } from './cluster';
import type { RuleService } from './context';
import { refuseIfPastDeadline } from './decision-deadline';
import { refuseUnlessShown } from './refuse-unless-shown';
import type { RuleDraft } from './rules/rule';
import { EventLog, eventSize, parseEventId, StoredRunFollower, type RunFollower } from './event-log';
import { MemoryStore } from './memory-store';
import { RunPausedError } from './run-paused-error';
import { RunStoppedError } from './run-stopped-error';
import { followedEventPage } from './followed-event-page';
import { leftOutText, withoutStrayResults } from './left-out-messages';
import { StoreUnavailableError } from './store-unavailable-error';
import { turnedOffTools } from './tool-settings';
import { WaitingCallsJudge } from './waiting-calls-judge';
import type { ToolSettingsService } from './tool-settings-service';
import type { AirlockStore, AppendEventInput, AuditPage, AuditQuery, DecidedBy, LedgerChange, LeftOutCall, SessionPosition, StoredRun, StoredGrant, StoredSessionSummary, ToolCallRecord, UnaskedAllow } from './store';
import { encodeSessionCursor } from './session-cursor';
import { titleMatches } from './session-search';
import { setAsideRun } from './set-aside-run';
import { answerUnansweredCalls, closedCallsLine, closeUnendedCalls, refusalOf, ruleFromWorkspaceFile, RUN_END_NOT_STORED } from './unended-calls';

export interface RunOptions {
  /** Also changes the session's own setting, which every later run of the session keeps. */
  confirmToolCalls?: boolean;
  enabledTools?: string[];
  maxToolCalls?: number;
  toolCallTimeoutMs?: number;
  decisionTimeoutMs?: DecisionTimeout;
}

export interface SessionSummary {
  sessionId: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  /**
   * Whether this session's calls stop for a decision. When false, a call runs unasked (and the ledger says so) unless
   * a deny rule refuses it, or a deny rule applies to a command line the rules cannot read whole: that one is asked.
   */
  confirmToolCalls: boolean;
  /** The run still going in this session, if any: a client re-attaches to it. */
  activeRunId: string | null;
  /** The session's latest run, going or not: a client that did not follow it reloads the history. */
  lastRunId: string | null;
  /**
   * Why the going run is paused: a write of it failed because the store cannot take writes for now (a full disk).
   * Its calls still wait, a decision on them is refused, and it goes on by itself once the store takes writes again;
   * a stop is kept, and applied then (see ChatService.stop). Absent otherwise.
   */
  paused?: string;
}

/** One page of the chat list (see `sessions.list`). */
export interface SessionPage {
  /** Most recently active first; among chats active in the same millisecond, the greater id first. */
  sessions: SessionSummary[];
  /** Pass as `cursor` for the next page, which starts right after this page's last chat; null on the last page. */
  nextCursor: string | null;
}

export interface SessionDetail extends SessionSummary {
  /** The newest messages (or those before `before`), as many as fit `MAX_DETAIL_MESSAGES` and `MAX_DETAIL_CHARS`. */
  messages: ChatMessage[];
  /**
   * The tool calls of those messages, with how each was decided and how it ended, so history tells the truth after a
   * reload; in the order they started (a call's message is stored with its row's first write, or before it).
   */
  toolCalls: ToolCallRecord[];
  /**
   * The run that wrote each of `messages`, at the same place (null for none): a call's ledger row is found by its
   * message's run and the call's id, a call id being unique only within a run.
   */
  runIds: (string | null)[];
  /** How many earlier messages were left out: read them with `before` set to this. 0 when none. */
  messagesBefore: number;
  /**
   * Read without `before` (the newest messages): how the chat's last run ended when it did not finish its answer (it failed, was
   * stopped, or ran out of tool calls), so a reload shows what the chat showed live. Absent while a run goes on.
   */
  lastRunEnd?: { runId: string; reason: Exclude<RunEndReason, 'done'>; error?: string };
  /** The damaged records of the page's messages and calls, left out of `messages` and `toolCalls` (each the record and why). Absent when none. */
  leftOut?: string[];
  /**
   * The calls of the page whose ledger row is among `leftOut`, by run and call id: only these are shown as damaged,
   * not every call of the page with no row. Absent when none.
   */
  leftOutCalls?: LeftOutCall[];
}

/** Messages one read of a chat returns at most: a chat's whole history in one answer would grow with the chat. */
export const MAX_DETAIL_MESSAGES = 500;
/** Characters of messages one read returns at most (the newest message always fits). */
export const MAX_DETAIL_CHARS = 4 * 1024 * 1024;

/** What changed in the list of sessions: a session's title, activity or run, or its deletion. */
export type SessionChange =
  | { type: 'session-changed'; session: SessionSummary }
  | { type: 'session-deleted'; sessionId: string }
  /** A call of the session started or stopped waiting for a decision: its waiting list (`chat.pending`) changed. */
  | { type: 'waiting-changed'; sessionId: string };

/**
 * One read of a finished run's events from the store, for a client that replays it: sent before the next is read,
 * each read no more than this (the first event always), so a replay holds and parses a page at a time.
 */
export const REPLAY_PAGE = { events: 100, chars: 256 * 1024 } as const;

/** Events of finished runs kept in memory over all runs, for clients re-attaching: past it, the least recently used go. */
export const MAX_KEPT_FINISHED_EVENTS = 20_000;

/**
 * Bytes of finished runs kept in memory over all runs (their events as JSON, estimated: see eventSize), alongside
 * MAX_KEPT_FINISHED_EVENTS: a tool's result can be 100,000 characters, so the events alone do not bound what is held.
 */
export const MAX_KEPT_FINISHED_BYTES = 64 * 1024 * 1024;

/**
 * Events a running run keeps (in its log, and as rows in the store): once it reaches them, it is stopped and ends with
 * an error saying so (see outputLimitError). A model that streams a character per chunk made a million events of a
 * turn, each held for as long as the run went on; deltas are now joined (MAX_JOINED_DELTA_CHARS), so a run reaches
 * this only with as many deltas that each came on their own (a model writing a token at a time, for hours).
 */
export const MAX_LIVE_RUN_EVENTS = 200_000;

/** Bytes of events a running run keeps (as JSON, estimated: see eventSize), alongside MAX_LIVE_RUN_EVENTS. */
export const MAX_LIVE_RUN_BYTES = 64 * 1024 * 1024;

/**
 * Events and bytes all running runs keep together: once they reach either, the largest run of the connection whose
 * runs hold the most is stopped, as one that reaches its own bound is (see keepsSharedOutput, sharedOutputLimitError). The bounds of one run do not bound them all: up to
 * --runs-per-connection × --max-connections runs go on at once (16,384 at the defaults), which at 64 MiB each could
 * hold a tebibyte. Eight runs at their own bound, or ten at their events', fit.
 */
export const MAX_LIVE_EVENTS = 2_000_000;
export const MAX_LIVE_BYTES = 512 * 1024 * 1024;

/**
 * The longest text a text (or reasoning) delta that joins several gets: the deltas that come while the one before
 * them is not yet handed on (stored, then shown) are one event up to it, the next starts another.
 */
export const MAX_JOINED_DELTA_CHARS = 4096;

/** Finished runs only in the store that a client asked to attach to, kept for its follow() (small: a number each). */
const MAX_STORED_ATTACHES = 4096;
/** The longest wait between two tries to take up a run paused by its store (see ChatServiceOptions.retryStoreAfterMs). */
const MAX_STORE_RETRY_MS = 30_000;
/** How soon a call read as waiting past its deadline (this clock ahead of the database's) is looked at again. */
const PAST_DEADLINE_RECHECK_MS = 1_000;

export interface ChatServiceOptions {
  registry: ApprovalRegistry;
  /** The model for new runs, looked up at each run start. */
  model: () => ChatModel;
  /** The tools for new runs (built-ins and MCP), looked up at each run start. */
  tools: () => readonly AnyTool[];
  /** Prepended to every model request; not stored in the conversation. */
  systemPrompt?: string;
  /**
   * How long a finished run stays in memory for a client that reconnects (after that it is read from the store, a
   * page at a time). Default 10 minutes. Whatever the time, at most MAX_KEPT_FINISHED_EVENTS (or `maxKeptFinishedEvents`)
   * events and MAX_KEPT_FINISHED_BYTES (or `maxKeptFinishedBytes`) bytes of finished runs stay, the least recently
   * attached to going first.
   */
  finishedRunTtlMs?: number;
  /**
   * How long the rules may take to judge one waiting call again once they changed before it is held as one they could
   * not judge (see WaitingCallsJudge). Default JUDGE_CALL_TIME_LIMIT_MS.
   */
  judgeCallTimeLimitMs?: number;
  /** Default MAX_KEPT_FINISHED_EVENTS. */
  maxKeptFinishedEvents?: number;
  /** Default MAX_KEPT_FINISHED_BYTES. */
  maxKeptFinishedBytes?: number;
  /** The events a running run keeps before it is stopped (see MAX_LIVE_RUN_EVENTS). Default MAX_LIVE_RUN_EVENTS. */
  maxLiveRunEvents?: number;
  /** The bytes of events a running run keeps before it is stopped. Default MAX_LIVE_RUN_BYTES. */
  maxLiveRunBytes?: number;
  /** The events all running runs keep together before one is stopped (see keepsSharedOutput). Default MAX_LIVE_EVENTS. */
  maxLiveEvents?: number;
  /** The bytes of events all running runs keep together before one is stopped (see keepsSharedOutput). Default MAX_LIVE_BYTES. */
  maxLiveBytes?: number;
  /** Keeps sessions, runs, events, the ledger and grants. Default a MemoryStore: nothing outlives the process. */
  store?: AirlockStore;
  /**
   * On shutdown, leave runs as they are in the store (waiting calls stay waiting, a running call becomes
   * interrupted) so the next start resumes them; otherwise runs are cancelled and end. Default false.
   */
  suspendRunsOnShutdown?: boolean;
  /** Default 100,000. A new session beyond it is refused. */
  maxSessions?: number;
  /** Receives a line for each failure that cannot be sent to a client (a write that failed). Default console.warn. */
  log?: (line: string) => void;
  /** Lasting rules, asked before grants and the person. Default none. */
  rules?: RuleService;
  /**
   * Other instances share the store: runs are owned through leases, decisions are conditional writes, and any
   * instance serves any client (see Cluster). Runs are always handed over on shutdown. Default none: this instance
   * is the store's only writer.
   */
  cluster?: Cluster;
  /** Places for the tool calls running at once over all runs (see `RunToolLoopOptions.toolSlots`). Default: no limit. */
  toolSlots?: ToolSlots;
  /**
   * The settings the server keeps: the tools turned off in them are left out of what every run offers the model, new,
   * resumed or taken up from another instance, read again before each model turn (see `RunToolLoopOptions.turnedOff`),
   * whatever tools the run's client asked for; and the limits saved there (call timeout, call limit, decision timeout)
   * hold for a run whose client sets none. Default none: every tool the run asked for is offered, the loop's limits.
   */
  settings?: Pick<ToolSettingsService, 'get'>;
  /**
   * On a single instance, the wait before the first try to take up a run paused because its store could not take a
   * write (see `AirlockStore.isUnavailable`); each failed try doubles it, up to 30 s. With a cluster, the first hold-off
   * of a run given up again soon after it was given up because it could not be kept (see HoldOff). Default 1 s.
   */
  retryStoreAfterMs?: number;
}

interface Run {
  runId: string;
  sessionId: string;
  log: EventLog;
  /** Not an AbortController: a run waiting on a decision should not hold a kilobyte-sized AbortSignal. */
  cancellation: Cancellation;
  done: Promise<void>;
  /** The tools the run was started with, to fingerprint its calls in the ledger. */
  tools: readonly AnyTool[];
  /** Messages the loop added that are not stored yet. */
  unsaved: ChatMessage[];
  /** Set on a suspending shutdown: nothing more is written, so the stored run is left as it was. */
  suspended: boolean;
  /** The next event's seq (events are numbered when queued, stored in order, and seen by clients once stored). */
  nextSeq: number;
  /** Events queued for the store, written in bursts while the loop goes on (text deltas). */
  queued: Queued[];
  /** The burst being written, if any. */
  flushing: Promise<void> | undefined;
  /** A write of the deltas queued is set for the next turn of the event loop (see flushSoon). */
  flushSoon: boolean;
  /** The estimated bytes of the events recorded for the run (see eventSize), against maxLiveRunBytes. */
  bytes: number;
  /**
   * The connection that started it (StartRunInput.requester), whose runs' output is summed when the running runs
   * together reach what they keep (see keepsSharedOutput); undefined for a run resumed after a start, which counts alone.
   * Every field is set when the run is made (see newRun), so the run's fields all fit in the object, with no
   * property array grown beside it for one added later.
   */
  requester: string | undefined;
  /** Its events and bytes in the count over all running runs (see keepsOutput); zero once it is out of it. */
  counted: { events: number; bytes: number };
  /** Set once the run reached what a running run keeps: why it was stopped, which its run-end says. */
  outputLimit: string | undefined;
  /** Why a burst could not be written: the run stops at its next event. */
  writeFailure: unknown;
  /** The burst whose write failed (see writeFailure). */
  unwritten: Queued[] | undefined;
  /** What let the call whose turn it is run unasked, checked again with the write of its running status. */
  unasked: UnaskedAllow | undefined;
  /** With a cluster: this instance's fencing token for the run, and when it was claimed (performance.now(); 0 without one). */
  fence: number | undefined;
  claimedAt: number;
  /** With a cluster: when the last claim or renewal that held the run was asked (performance.now()); see leaseHolds. */
  leaseFrom: number;
  /** With a cluster: another instance holds the run; the log is fed from the store as that instance writes it. */
  remote: boolean;
  /**
   * What the run's loop goes on with once it was parked (set when the loop is made): kept as data rather than in a
   * closure, so a run waiting on the person holds no function and scope of its own for it.
   */
  settings: LoopSettings | undefined;
  /** With a cluster: the run was lost to another instance (a write was fenced or the lease was not renewed). */
  lost: boolean;
  /** Why the run is paused, while it is (see ChatService.pause). */
  pausedBecause: string | undefined;
  /** A person stopped it while it was paused: it is stopped when taken up, before anything more of it runs. */
  stopAsked: boolean;
  /**
   * With a cluster: a person stopped it here and the stop is not stored yet (the database could not be reached). It is
   * stored before the run is given up (see releaseWhenReachable), so whoever takes the run over ends it; but an
   * instance that takes the run over because this one's lease ran out meanwhile knows nothing of it until it is stored.
   */
  stopUnstored: boolean;
  /** While the log is being fed from the store, and whether more was announced meanwhile. */
  reading: boolean;
  /**
   * Followed from the store: the first of its stored events left out as damaged (see followedEventPage), the record
   * and why. Should this instance take the run over, it is set aside for it, as a restart would, not resumed without it.
   */
  leftOutEvent: string | undefined;
  /** Followed from the store: the seq of the last of its stored events left out as damaged, 0 for none (see readRemoteEvents). */
  leftOutAt: number;
  readAgain: boolean;
  /** Followed from the store: its last read failed (not on a damaged record), and it is read again at the next scan. */
  readFailed: boolean;
  /** The last seq its owner announced as written (Infinity: unknown, read to the end); see readRemoteEvents. */
  readTo: number;
  /**
   * Taken up from the store after a pause (see ChatService.pause), not after a restart, and nothing of it stored
   * since: its resumed status says so, and its first write that succeeds ends the pause.
   */
  afterPause: boolean;
}

/** An event queued for the store. */
interface Queued {
  input: AppendEventInput;
  event: LoopEvent;
  show: boolean;
  /**
   * A delta joined from several (see joinDelta): their texts, made one string as its burst is written. A string
   * grown a delta at a time is a rope that keeps a node per delta (a million one-character deltas: tens of MB).
   */
  pieces?: string[];
  /** With pieces: their length together. */
  chars?: number;
}

/** What a stop did (see ChatService.stop). */
export interface StopAnswer {
  /** How many runs were cancelled, or will be: a paused run's stop is applied when it is taken up. */
  cancelled: number;
  /**
   * The stop does not hold for good yet: the run is paused (stopped when taken up), or its stop could not be stored.
   * What will happen to it, and whether the stop holds across a restart, said in full. Absent otherwise.
   */
  paused?: string;
}

/** A run paused because its store could not take a write of it, until a try to take it up from the store succeeds. */
interface PausedRun {
  /** The run as it was paused: still the session's active run, its log open for its followers, holding what is stored. */
  run: Run;
  /**
   * Its calls that were waiting, as they were listed: they stay listed, and a decision on them is refused; once a
   * person stopped the run, they are no longer listed, and a decision on them is answered as cancelled.
   */
  waiting: PendingApproval[];
  /** Why its write failed. */
  error: string;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** Events of a run read from the store after seq `from`. */
interface StoredPage {
  from: number;
  events: LoopEvent[];
}

/** What a run's loop is made from, and made again from when it goes on after being parked. */
interface LoopInput {
  model: ChatModel;
  messages: readonly ChatMessage[];
  confirmToolCalls: boolean;
  options: RunOptions;
  resume?: ResumeState | ParkedRun;
  requester?: string;
  /** Said as statuses after the run-start (see RunToolLoopOptions.notes). */
  notes?: readonly string[];
}

/** A loop's input but for the conversation and what it resumes: what a parked run goes on with (see Run.settings). */
type LoopSettings = Omit<LoopInput, 'messages' | 'resume'>;

/**
 * A chat as this instance knows it. Its conversation is not kept: a run reads it from the store when it starts and
 * after its calls have waited on the person (its loop holds it for the model, not while calls wait), and a read of
 * the chat takes one page from the store.
 */
interface Session {
  summary: StoredSessionSummary;
  activeRun: Run | undefined;
  /** With a cluster: the session's run going on another instance. */
  remoteRunId: string | null;
}

export interface StartRunInput {
  sessionId: string;
  runId?: string;
  message: string;
  options?: RunOptions;
  /**
   * Whom the run's model turns are for: the connection that started it. The model's places are shared fairly
   * between requesters (see ChatRequest.requester). Default none: one requester with every other run given none.
   */
  requester?: string;
}

export interface ConfirmInput {
  sessionId: string;
  approvalId: string;
  decision: 'allow' | 'deny';
  reason?: string;
  always?: boolean;
  /**
   * With always: what it covers. "chat" (the default) grants it in this chat; "workspace" and "global" save a rule
   * (the one `RuleService.propose` previews) that covers later calls in other chats too.
   */
  scope?: 'chat' | 'workspace' | 'global';
  /**
   * With a workspace or global scope: the rule the person was shown (`RuleService.propose`'s draft). If the rule drafted
   * now is another, a ConflictError and the call goes on waiting. Without it, the rule drafted now is saved.
   */
  rule?: RuleDraft;
  /**
   * With allow: the arguments the person edited the call to. They must pass the tool's schema (else an
   * InvalidArgumentsError, and the call goes on waiting); the same as proposed is a plain allow.
   */
  arguments?: ToolArguments;
  /** Who decided, for the ledger. */
  by?: DecidedBy;
  /**
   * This process's `performance.now()` after which the decision is refused (DecisionPastDeadlineError) rather than
   * applied: its client stopped waiting for the answer then. Checked at the last step before it is applied, with
   * nothing awaited between. Default none.
   */
  deadline?: number;
}

/**
 * Sessions and their runs. A run belongs to the server, not to a connection: it goes on when its client drops, and
 * any client of the session can re-attach and replay what it missed. Everything is written to the store as it
 * happens, before clients see it: a run waiting on a decision when the process stops is resumed at the next start.
 */
/** What a confirm is answered with once the loop has written the decision: see ChatService.reportedDecision. */
type DecisionReport = { stored: true; decision: 'allow' | 'deny' } | { stored: false; error: string };

export class ChatService {
  private readonly sessions = new Map<string, Session>();
  private readonly runs = new Map<string, Run>();
  /** Grants made here whose write to the store is under way. */
  private readonly savingGrants = new Set<string>();
  /** A chat's grant asked for with a person's allow here, by the call's approval id, until it is written with that allow. */
  private readonly grantsWithAllow = new Map<string, VersionedGrant>();
  /**
   * With a shared store: its policy version that the rules held here were read at (see readPolicyAgain). Unknown at
   * first (-1 matches none): the first call let through unasked reads it.
   */
  private knownPolicyVersion = -1;
  /** For each re-read of the grants under way: the grants made or revoked here meanwhile, which it leaves as they are. */
  private readonly grantChanges = new Set<Set<string>>();
  private readonly finishedRunTtlMs: number;
  /** Finished runs kept in `runs`, least recently attached to first, with their events and bytes counted; see keepFinished. */
  private readonly keptFinished = new Map<string, { events: number; bytes: number }>();
  private keptFinishedEvents = 0;
  private keptFinishedBytes = 0;
  private readonly maxKeptFinishedEvents: number;
  private readonly maxKeptFinishedBytes: number;
  private readonly maxLiveRunEvents: number;
  private readonly maxLiveRunBytes: number;
  private readonly maxLiveEvents: number;
  private readonly maxLiveBytes: number;
  /** The events and bytes of the running runs, as last counted (see keepsOutput): at or above the truth, checked against it once over a bound. */
  private liveEvents = 0;
  private liveBytes = 0;
  /** Finished runs only in the store, attached to: their session and their last event's seq, for eventsShown and follow. */
  private readonly storedAttaches = new Map<string, { sessionId: string; lastSeq: number }>();
  private readonly maxSessions: number;
  private readonly watchers = new Set<(change: SessionChange) => void>();
  /** Sessions whose waiting list changed since the last announcement: told once per turn of the event loop. */
  private readonly waitingChanges = new Set<string>();
  /** Per session, when its watchers are told of the first deadline of a call listed for a run held elsewhere. */
  private readonly deadlineWatches = new Map<string, { at: number; timer: ReturnType<typeof setTimeout> }>();
  private readonly store: AirlockStore;
  private readonly log: (line: string) => void;
  /** Who is deciding each approval, kept from the confirm call until its decision is written. */
  private readonly deciders = new Map<string, DecidedBy>();
  /**
   * Decisions answered once the loop's decision event is stored: a deny rule made while the call waited still
   * refuses an allow, and the answer says so; a decision that could not be stored is answered as such. Settled by
   * the write of the decision event (or its failure), or by the end of the session's run.
   */
  private readonly reporting = new Map<string, { sessionId: string; settle: (report: DecisionReport | undefined) => void }>();
  /** Serialises what changes the set of sessions and runs, so no check is made stale by a write in between. */
  private admission: Promise<unknown> = Promise.resolve();
  private closing = false;
  /** With a cluster: what stops its timers and its subscription. */
  private clusterWork: { stop: () => void } | undefined;
  private takingOver: Promise<void> | undefined;
  private takeOverAgain = false;
  /** A re-read after a resync is under way, and another resync was heard meanwhile (see resync). */
  private resyncing = false;
  private resyncAgain = false;
  /** Runs paused because the store could not take their writes, by run id (see pause). */
  private readonly paused = new Map<string, PausedRun>();
  /** The wait before the next try to take up a paused run, kept until the run ends: a run paused again waits longer. */
  private readonly storeRetryMs = new Map<string, number>();
  /** Judges the calls waiting here again whenever the rules change; none without rules. */
  private readonly waitingJudge: WaitingCallsJudge | undefined;
  private readonly stopJudging: (() => void) | undefined;

  constructor(private readonly options: ChatServiceOptions) {
    this.finishedRunTtlMs = options.finishedRunTtlMs ?? 10 * 60 * 1000;
    this.maxKeptFinishedEvents = options.maxKeptFinishedEvents ?? MAX_KEPT_FINISHED_EVENTS;
    this.maxKeptFinishedBytes = options.maxKeptFinishedBytes ?? MAX_KEPT_FINISHED_BYTES;
    this.maxLiveRunEvents = options.maxLiveRunEvents ?? MAX_LIVE_RUN_EVENTS;
    this.maxLiveRunBytes = options.maxLiveRunBytes ?? MAX_LIVE_RUN_BYTES;
    this.maxLiveEvents = options.maxLiveEvents ?? MAX_LIVE_EVENTS;
    this.maxLiveBytes = options.maxLiveBytes ?? MAX_LIVE_BYTES;
    this.maxSessions = options.maxSessions ?? 100_000;
    this.store = options.store ?? new MemoryStore();
    this.log = options.log ?? ((line) => console.warn(line));
    if (options.cluster) options.registry.setArbiter((call, outcome) => this.arbitrate(call, outcome));
    const rules = options.rules;
    if (rules) {
      const judge = new WaitingCallsJudge({
        registry: options.registry,
        rules,
        store: this.store,
        sessions: () => [...this.runs.values()].flatMap((run) => (run.remote ? [] : [run.sessionId])),
        toolOf: (call) => [...(this.runs.get(call.runId)?.tools ?? []), ...options.tools()].find((tool) => tool.name === call.toolName),
        changed: (sessionId) => this.announceWaitingChange(sessionId),
        log: this.log,
        ...(options.judgeCallTimeLimitMs === undefined ? {} : { callTimeLimitMs: options.judgeCallTimeLimitMs }),
      });
      this.waitingJudge = judge;
      this.stopJudging = rules.onChange?.(() => void judge.judgeAll());
    }
  }

  /**
   * Reads what the store kept: sessions, grants, and runs that were going when the process stopped. A run that
   * waited on decisions goes on waiting (same approval ids, same deadlines); a call that was running is recorded
   * as interrupted and never re-run; any other unfinished run ends.
   */
  async open(): Promise<{ sessions: number; resumedRuns: number }> {
    const cluster = this.options.cluster;
    // Listening starts before anything is read: a change made meanwhile is applied after, never missed.
    if (cluster) this.clusterWork = this.startClusterWork(cluster);
    for (const summary of await this.store.listSessions()) {
      this.sessions.set(summary.sessionId, { summary, activeRun: undefined, remoteRunId: null });
    }
    for (const grant of await this.store.listGrants()) {
      if (this.sessions.has(grant.sessionId)) this.registry.restoreGrant(grant);
    }
    if (cluster) {
      // Runs owned under this instance's id by a previous life of it (a crash, then a restart with the same
      // --instance-id) were given up when the cluster took the id: they are taken over below like any other.
      for (const run of await this.store.listUnfinishedRuns()) {
        const session = this.sessions.get(run.sessionId);
        if (session) session.remoteRunId = run.runId;
      }
      const taken = await this.takeOver();
      void this.waitingJudge?.judgeAll();
      return { sessions: this.sessions.size, resumedRuns: taken };
    }
    let resumedRuns = 0;
    for (const run of await this.store.listUnfinishedRuns()) {
      if (await this.resumeOrSetAside(run)) resumedRuns++;
    }
    // A rule changed while the calls restored here waited with no process holding them is judged now.
    void this.waitingJudge?.judgeAll();
    return { sessions: this.sessions.size, resumedRuns };
  }

  get registry(): ApprovalRegistry {
    return this.options.registry;
  }

  /** Starts a run for a new user message. A session whose run is still going refuses a second one. */
  startRun(input: StartRunInput): Promise<{ runId: string }> {
    return this.admit(async () => {
      if (this.closing) throw new ConflictError('shutting-down', 'the server is shutting down; try again in a moment');
      const cluster = this.options.cluster;
      // Another instance may have made or changed the session: its row is the truth.
      const existing = cluster ? await this.refreshSession(input.sessionId, false) : this.sessions.get(input.sessionId);
      const busyWith = existing?.activeRun?.runId ?? existing?.remoteRunId;
      if (busyWith) {
        throw new ConflictError('session-busy', `session "${input.sessionId}" is still running ${busyWith}; cancel it or wait for it to end`);
      }
      const runId = input.runId ?? randomId('run', 12);
      if (this.runs.has(runId) || (await this.store.hasRun(runId))) throw new ConflictError('run-exists', `run "${runId}" already exists; start a new run with a new runId`);
      if (!existing && this.sessions.size >= this.maxSessions) throw new ConflictError('too-many-sessions', `this server keeps at most ${this.maxSessions} sessions; delete some first`);
      // Looked up before anything is written: when no model or tool list can be had, nothing is kept.
      const model = this.options.model();
      const tools = this.options.tools();
      const now = Date.now();
      const options = input.options ?? {};
      const limits = await this.savedRunLimits();
      let session = existing;
      if (!session) {
        session = { summary: newSummary(input.sessionId, input.message, now), activeRun: undefined, remoteRunId: null };
        await this.store.createSession(session.summary);
        this.sessions.set(input.sessionId, session);
      }
      // The whole conversation goes to the model; the run's loop holds it for the model's turns, lets go of it while
      // its calls wait on the person, and reads it again from the store for the next turn.
      const { messages: loaded, leftOut } = await this.storedConversation(session.summary.sessionId);
      // No run of the chat goes on: what its last one could not store of its end is written before this run follows it.
      if (existing) loaded.push(...(await this.closeEarlierRun(session.summary, loaded)));
      const messages = answerUnansweredCalls(loaded);
      const notes = leftOut.length === 0 ? undefined : [leftOutText(leftOut)];
      if (notes !== undefined) this.log(`Run ${runId} of chat ${session.summary.sessionId}: ${notes[0]}`);
      const confirmToolCalls = options.confirmToolCalls ?? session.summary.confirmToolCalls;
      const stored: StoredRun = { runId, sessionId: session.summary.sessionId, options, startedAt: now, endedAt: null, endReason: null };
      const userMessage: ChatMessage = { role: 'user', content: input.message };
      // One write: a row without its message would be re-attached to by the same start sent again, a run nothing
      // drives. With a cluster the store also makes this instance the run's owner (fencing token 1), and refuses a
      // second unfinished run in the session that another instance started at the same moment. The setting is
      // written only when the message sets it: the one held here may be stale (changed on another instance).
      await this.store.beginRun({
        run: stored,
        ...(cluster === undefined ? {} : { owner: cluster.instanceId }),
        message: userMessage,
        session: { updatedAt: now, lastRunId: runId, ...(options.confirmToolCalls === undefined ? {} : { confirmToolCalls }) },
      });
      messages.push(userMessage);
      session.summary = { ...session.summary, updatedAt: now, lastRunId: runId, confirmToolCalls };
      const run = this.newRun(runId, session.summary.sessionId, tools);
      if (input.requester !== undefined) run.requester = input.requester;
      if (cluster) run.fence = 1;
      const said = notes === undefined ? {} : { notes };
      this.attachRun(session, run, this.loop(run, { model, messages, confirmToolCalls, options: { ...limits, ...definedOnly(options) }, ...(input.requester === undefined ? {} : { requester: input.requester }), ...said }));
      return { runId };
    });
  }

  /**
   * Writes the end of the chat's last run where the store lacks it (a write failed as it stopped, and the store could
   * not take the end then either): its calls with no end in the ledger end as interrupted (or as decided, when they
   * never ran), its run-end is stored and its row marked ended. Called with no run of the chat going, so that run is
   * over. Answers the results written for the calls of the conversation's last turn (`messages`), to go before the
   * next message. One read when the run's end is stored. A failure is logged, not thrown: the new run goes on, and the
   * model is given a result for those calls all the same (see answerUnansweredCalls).
   */
  private async closeEarlierRun(session: StoredSessionSummary, messages: readonly ChatMessage[]): Promise<ChatMessage[]> {
    const runId = session.lastRunId;
    if (runId === null) return [];
    const answer = new Set(unfinishedCalls(messages).map((call) => call.id));
    const at = Date.now();
    const closed = await closeUnendedCalls(this.store, { runId, sessionId: session.sessionId, answer, error: RUN_END_NOT_STORED, at }).catch((error: unknown) => {
      this.log(`Could not record how the calls of run ${runId} ended: ${messageOf(error)}; recorded when the chat's next run starts, or at the next start`);
    });
    if (closed === undefined) return [];
    this.log(closedCallsLine(runId, closed));
    if ((await this.store.getRun(runId))?.endedAt === null) await this.store.endRun(runId, 'error', at).catch((error: unknown) => this.log(`Could not record the end of run ${runId}: ${messageOf(error)}`));
    return closed.messages;
  }

  /**
   * Calls `listener` with every change to the list of sessions (a run starting or ending, a session
   * created or deleted) until the returned function is called. A listener that throws is dropped.
   */
  watchSessions(listener: (change: SessionChange) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  /**
   * Follows a run's events after `afterSeq`, each as `wrap(id, event)`; stop it with `return()`. A run in memory is
   * followed from its log; a finished run only in the store is read from it a page at a time as its client takes them.
   * The caller must belong to the run's session; call `attachable` first for a run that may only be in the store.
   */
  follow<T>(sessionId: string, runId: string, afterSeq: number, wrap: (id: string, event: LoopEvent) => T, signal?: AbortSignal): RunFollower<T> {
    const run = this.runs.get(runId);
    if (run) {
      if (run.sessionId !== sessionId) throw new NotFoundError('run', runId);
      return run.log.follow(afterSeq, wrap, signal);
    }
    const stored = this.storedAttaches.get(runId);
    if (!stored || stored.sessionId !== sessionId) throw new NotFoundError('run', runId);
    return new StoredRunFollower(runId, afterSeq, stored.lastSeq, (after) => this.storedEventPage(runId, after), wrap, signal);
  }

  /**
   * A page of a finished run's stored events, for its client. A page with a damaged event is read again one event at a
   * time up to it, so the client gets every event before it; the read that reaches it fails, naming it. Read so, a
   * page is still a page at most (REPLAY_PAGE): a failure taken for damage where every event reads alone would
   * otherwise have the whole run read into one.
   */
  private async storedEventPage(runId: string, after: number): Promise<LoopEvent[]> {
    try {
      return await this.store.loadEvents(runId, after, REPLAY_PAGE);
    } catch (error) {
      if (this.store.damagedRecord?.(error) === undefined) throw error;
      const events: LoopEvent[] = [];
      let chars = 0;
      while (events.length < REPLAY_PAGE.events && chars < REPLAY_PAGE.chars) {
        const read = await this.store.loadEvents(runId, after + events.length, { events: 1, chars: REPLAY_PAGE.chars }).catch((damaged: unknown) => {
          if (events.length === 0) throw damaged;
          return [];
        });
        if (read.length === 0) break;
        events.push(...read);
        for (const event of read) chars += JSON.stringify(event).length;
      }
      return events;
    }
  }

  /**
   * How many events of a run its followers here have been shown, or undefined where a client may have seen more: a
   * run going on another instance is followed here from the store, a little after its owner shows them.
   */
  eventsShown(runId: string): number | undefined {
    const run = this.runs.get(runId);
    if (run === undefined) return this.storedAttaches.get(runId)?.lastSeq;
    return run.remote ? undefined : run.log.size;
  }

  /**
   * Whether the session has a run of this id to re-attach to: going, or finished and kept (its events are read
   * back from the store, a page at a time as its client takes them, when it is no longer in memory, so a client
   * re-sending a run's input after a restart replays it rather than starting it again). A finished run only in the
   * store costs one read here: where its events end. With `start`, the message and options of a start naming the
   * run: see checkSameStart.
   */
  async attachable(sessionId: string, runId: string, start?: RunStart): Promise<boolean> {
    if (start !== undefined) {
      if (!(await this.attachable(sessionId, runId))) return false;
      await this.checkSameStart(sessionId, runId, start);
      // Looked up again: a finished run may have left memory while the store was read (it is read from there then).
    }
    const inMemory = this.runs.get(runId);
    if (inMemory) {
      if (inMemory.sessionId !== sessionId) return false;
      if (this.keptFinished.has(runId)) this.keepFinished(inMemory);
      return true;
    }
    const stored = await this.store.getRun(runId);
    if (!stored || stored.sessionId !== sessionId) return false;
    if (this.runs.has(runId)) return true;
    if (this.options.cluster && stored.endedAt === null) {
      // Going on another instance: followed here from the store, woken by that instance's writes.
      const mirror = this.newRun(runId, sessionId, []);
      mirror.remote = true;
      this.runs.set(runId, mirror);
      await this.readRemoteEvents(mirror);
      return true;
    }
    const lastSeq = await this.store.lastEventSeq(runId);
    if (this.runs.has(runId)) return true;
    this.storedAttaches.delete(runId);
    this.storedAttaches.set(runId, { sessionId, lastSeq });
    for (const oldest of this.storedAttaches.keys()) {
      if (this.storedAttaches.size <= MAX_STORED_ATTACHES) break;
      this.storedAttaches.delete(oldest);
    }
    return true;
  }

  /**
   * Refuses a start naming a run of this chat that was started with another message or other options (ConflictError
   * "run-exists"): a client retrying its start after a dropped connection sends the same ones and re-attaches, but
   * another start would re-attach too, and its message be dropped unseen. A run whose first message was not kept with
   * it (from before messages kept their run) is taken as the same start. Reads the store, only on this rare path.
   */
  private async checkSameStart(sessionId: string, runId: string, start: RunStart): Promise<void> {
    const [run, first] = await Promise.all([this.store.getRun(runId), this.store.loadFirstRunMessage(sessionId, runId)]);
    if (first?.role === 'user' && first.content !== start.message) {
      throw new ConflictError('run-exists', `runId: run "${runId}" already exists with another message; start a new run with a new runId`);
    }
    // Options that do not read (a damaged record) cannot be told apart: the message alone decides, as for a run whose
    // first message was not kept. A re-attach replays the run; it runs nothing.
    if (run !== undefined && run.unreadable === undefined && !sameOptions(run.options, start.options ?? {})) {
      throw new ConflictError('run-exists', `runId: run "${runId}" already exists with other options; start a new run with a new runId`);
    }
  }

  isRunActive(runId: string): boolean {
    const run = this.runs.get(runId);
    return run !== undefined && !run.log.isClosed;
  }

  /** Cancels the session's active run (only `runId`, when given). Answers how many runs were cancelled. */
  async cancel(sessionId: string, runId?: string): Promise<number> {
    return (await this.stop(sessionId, runId)).cancelled;
  }

  /**
   * Stops the session's active run (only `runId`, when given), as `cancel`, and stores the stop. A paused run cannot be
   * stopped now (its end could not be stored): the stop is kept, stored too if the store takes it, and applied when the
   * run is taken up, before anything more of it runs; `paused` then says so. A run going here is stopped at once; when
   * its stop cannot be stored, `paused` says so and what happens to the run (on a single instance it is paused as its
   * end fails to be stored too, and stopped for good when taken up).
   */
  async stop(sessionId: string, runId?: string): Promise<StopAnswer> {
    const session = this.sessions.get(sessionId);
    const run = session?.activeRun;
    const cluster = this.options.cluster;
    const remote = session?.remoteRunId;
    if (!run && cluster && remote && (runId === undefined || runId === remote)) {
      // Stored first: an owner that died before hearing it would leave the run going, and whoever takes the run over
      // reads it there. Its owner, told with the Stop's commit, cancels it; the end comes back through the store like
      // any of its events.
      if (!(await cluster.requestCancel(remote))) return { cancelled: 0 };
      return { cancelled: 1 };
    }
    if (run && (runId === undefined || run.runId === runId)) {
      const paused = this.paused.get(run.runId);
      if (paused?.run === run) return { cancelled: 1, paused: await this.stopWhenTakenUp(paused) };
    }
    if (!run || (runId !== undefined && run.runId !== runId) || run.cancellation.aborted) return { cancelled: 0 };
    // Stopped here at once, nothing more of it runs; then stored, for whoever takes it up should its end not be stored.
    run.stopAsked = true;
    // Set before the cancel: a run whose end cannot be stored is given up from it, and stores its stop first.
    run.stopUnstored = cluster !== undefined;
    run.cancellation.cancel();
    const notStored = await this.storeStop(run);
    return notStored === undefined ? { cancelled: 1 } : { cancelled: 1, paused: notStored };
  }

  /**
   * Stores a person's stop of a run going here (its `cancelRequested`): a run whose cancel cannot be stored is taken up
   * again as stored (after a pause, at the next start, or by another instance), and then stops before anything more of
   * it runs. Answers undefined once stored (or with a store that keeps no stop: its end is its only record), or what
   * the person is told when it could not be: the run is stopped here all the same.
   */
  private async storeStop(run: Run): Promise<string | undefined> {
    const cluster = this.options.cluster;
    const store = cluster === undefined ? this.store.requestCancel?.bind(this.store) : (runId: string) => cluster.requestCancel(runId);
    if (store === undefined) return undefined;
    try {
      await store(run.runId);
      run.stopUnstored = false;
      return undefined;
    } catch (error) {
      const detail = messageOf(error);
      const head = `The run ${run.runId} is stopped here, but its stop could not be stored (${detail})`;
      // Stored meanwhile, by the hand-over of the run (see releaseWhenReachable).
      if (cluster !== undefined && !run.stopUnstored) return undefined;
      if (cluster !== undefined && this.store.isUnavailable?.(error) === true) {
        // The stop lives only here until stored, and the other instances can be told of it only through the database:
        // once this instance's lease runs out, another takes the run over as stored, without the stop, and nothing can
        // tell it sooner. So the answer promises the stop only while this instance holds the run.
        this.log(`Run ${run.runId}: its stop could not be stored (${detail}); it is stored once the database answers, and holds until then only while this instance holds the run`);
        return stopHeldHereText(head, cluster.leaseMs);
      }
      if (cluster !== undefined) {
        run.stopUnstored = false;
        this.log(`Run ${run.runId}: its stop could not be stored (${detail}); it is stopped on this instance only`);
        return `${head}: if its end cannot be stored either, the run is taken up again once the database answers (here or on another instance), its calls waiting for a decision again; stop it again then.`;
      }
      // Its end cannot be written either: the run is paused (see drive), and its stop applied and stored when taken up.
      const paused = this.store.isUnavailable?.(error) === true;
      this.log(`Run ${run.runId}: its stop could not be stored (${detail}); it is stopped here, ${paused ? 'and stored once the store takes writes again' : 'and stored with its end, if the store takes it'}`);
      return paused
        ? `${head}: it is stored once Airlock can store again (it tries again by itself). If Airlock restarts before then, the run comes back, its calls waiting for a decision again.`
        : `${head}. If Airlock restarts before the run's end is stored, the run comes back, its calls waiting for a decision again.`;
    }
  }

  /**
   * Keeps a person's stop of a paused run, to be applied when it is taken up (see resumeRun), and stores it if the
   * store takes it, so a start after a restart stops it too. Answers what will happen, as the person is told.
   */
  private async stopWhenTakenUp(paused: PausedRun): Promise<string> {
    const { runId } = paused.run;
    paused.run.stopAsked = true;
    if (paused.waiting.length > 0) this.announceWaitingChange(paused.run.sessionId);
    const head = `The run ${runId} is paused until its data can be stored (${paused.error}); it will be stopped when it is taken up, before anything more of it runs.`;
    const store = this.store.requestCancel?.bind(this.store);
    if (store === undefined) return `${head} The stop is kept in memory only: if Airlock restarts before then, the run goes on.`;
    try {
      await store(runId);
      return `${head} The stop is stored: it holds across a restart.`;
    } catch (error) {
      this.log(`Run ${runId}: its stop could not be stored (${messageOf(error)}); it is kept in memory until the run is taken up`);
      return `${head} The stop could not be stored (${messageOf(error)}): if Airlock restarts before then, the run goes on.`;
    }
  }

  async confirm(input: ConfirmInput): Promise<ResolveResult> {
    // A rule changed just before is judged first on the chat's calls: an allow of a call it denies finds it denied by
    // the rule. Every decision in a chat waits alike, so two sent one after the other still land in that order.
    await this.waitingJudge?.idle(input.sessionId);
    if (this.options.cluster) return this.confirmInCluster(this.options.cluster, input);
    const paused = this.pausedWaiting(input.sessionId).find(({ waiting }) => waiting.approvalId === input.approvalId);
    // A stopped run's calls are cancelled with it when it is taken up: the stop was given first.
    if (paused?.stopped === true) return { resolved: false, status: 'already-decided', decision: 'cancel' };
    if (paused) throw new RunPausedError(paused.waiting.runId, paused.error);
    const edit = input.decision === 'allow' ? input.arguments : undefined;
    if (edit !== undefined) this.checkEdit(input.sessionId, input.approvalId, edit);
    const rules = this.options.rules;
    const asRule = input.decision === 'allow' && input.always === true && input.scope !== undefined && input.scope !== 'chat' && rules !== undefined;
    const pending = asRule ? this.options.registry.listPending(input.sessionId).find((p) => p.approvalId === input.approvalId) : undefined;
    // The rule is drafted before the call is released, from the very arguments the person was shown (or edited to),
    // and the tool as its card showed it.
    const tool = pending && (await this.toolAsShown(pending));
    const draft = pending && rules ? await rules.propose(input.sessionId, { toolName: pending.toolName, arguments: edit ?? pending.arguments }, input.scope!, tool) : undefined;
    if (draft) refuseUnlessShown(draft.draft, input.rule);
    if (input.decision === 'allow' && input.always === true && !asRule) await this.judgeBeforeGrant(input.sessionId);
    // Node hands a signal to its handlers only after the other events it read with it, and then the decision's
    // write and its call's start follow in one go: an allow read with a SIGTERM was stored and its tool started, to
    // be killed at once by the shutdown. Two turns of the event loop let a stop already sent begin first.
    await nextTurnOfEventLoop();
    await nextTurnOfEventLoop();
    if (this.closing) throw new ConflictError('shutting-down', this.stoppingDecisionText());
    refuseIfPastDeadline(input);
    // Kept until the decision event is written, so the ledger says who decided. Only the first asker's: a repeat or
    // a stranger's request for the same id, answered "already-decided" or "not-found", must not touch the winner's.
    // A chat's grant is written in one transaction with the allow (see record), and takes effect once that is
    // stored, before the loop goes on: after a crash at any moment both are kept or neither, and one that cannot be
    // stored leaves the call waiting, allowed by nothing.
    const grant = input.decision === 'allow' && input.always === true && !asRule ? this.options.registry.draftGrantFor(input.approvalId, input.sessionId, edit) : undefined;
    if (grant) this.grantsWithAllow.set(input.approvalId, grant);
    const by = input.by !== undefined && !this.deciders.has(input.approvalId) ? input.by : undefined;
    if (by) this.deciders.set(input.approvalId, by);
    const decided = this.options.registry.resolve(input.approvalId, input.decision, {
      sessionId: input.sessionId,
      ...(input.reason === undefined ? {} : { reason: input.reason }),
      ...(edit === undefined ? {} : { arguments: edit }),
    });
    if (grant && !decided.resolved) this.grantsWithAllow.delete(input.approvalId);
    const result: ResolveResult = decided.resolved && grant ? { ...decided, grant } : decided;
    if (!result.resolved && by !== undefined && this.deciders.get(input.approvalId) === by) this.deciders.delete(input.approvalId);
    if (result.status === 'not-found') {
      // The registry remembers only what this process decided (and not all of it): a call decided before a restart
      // is known from its ledger row.
      const recorded = await this.store.findDecision(input.sessionId, input.approvalId);
      return recorded === undefined ? result : { resolved: false, status: 'already-decided', decision: recorded };
    }
    if (!result.resolved) return result;
    // Answered once the loop's write of the decision is done: a decision that could not be stored is not resolved.
    const report = await this.reportedDecision(input.sessionId, input.approvalId);
    if (grant) this.grantsWithAllow.delete(input.approvalId);
    if (report?.stored === false) throw new DecisionNotStoredError(input.approvalId, report.error);
    // Not reported because a shutdown stopped the run before the decision was written (the rules still judging an
    // allow, say): nothing of it is stored, and the next start puts the call back to waiting, so it was not applied.
    if (report === undefined && this.closing) throw new ConflictError('shutting-down', this.stoppingDecisionText());
    // A deny rule refused the allow after all: the call was denied, and nothing of "Always allow" is kept (a grant is
    // written only with an allow). A rule saved for it would be listed as the person's, and allow the call unasked
    // once that deny rule went.
    if (report?.decision === 'deny') return { resolved: true, status: 'resolved', decision: 'deny' };
    const alwaysNotSaved = draft && rules ? await this.addRule(rules, draft.draft) : undefined;
    const answer = report === undefined ? result : { ...result, decision: report.decision };
    return alwaysNotSaved === undefined ? answer : { ...answer, alwaysNotSaved };
  }

  /**
   * What the loop reports of a call just decided here, once its decision event is written: the decision ('deny' when
   * a rule refused an allow after all), or that it could not be stored. Undefined when the run stopped first.
   */
  private reportedDecision(sessionId: string, approvalId: string): Promise<DecisionReport | undefined> {
    return new Promise((resolve) => {
      this.reporting.set(approvalId, {
        sessionId,
        settle: (report) => {
          this.reporting.delete(approvalId);
          resolve(report);
        },
      });
    });
  }

  /** Answers the confirm waiting on a decision event just written, or not written. */
  private reportStored(event: LoopEvent, error?: unknown): void {
    if (event.type !== 'tool-decision' || event.approvalId === '') return;
    const answer = this.reporting.get(event.approvalId);
    if (!answer) return;
    if (error !== undefined) answer.settle({ stored: false, error: messageOf(error) });
    else answer.settle(event.decision === 'allow' || event.decision === 'deny' ? { stored: true, decision: event.decision } : undefined);
  }

  /** A person's edit must pass the tool's schema; a call not waiting here is left for the registry to answer. */
  private checkEdit(sessionId: string, approvalId: string, args: ToolArguments): void {
    const pending = this.options.registry.listPending(sessionId).find((p) => p.approvalId === approvalId);
    if (pending) checkEditAgainst(this.options.tools(), pending, args);
  }

  /**
   * A waiting call of the session, whichever instance holds its run, with its tool as its card showed it (see
   * toolAsShown): what the preview of "Always allow" drafts its rule from, as `confirm` does. Undefined when no call
   * of the session waits with this id; ConflictError when that tool is not here as it was shown.
   */
  async waitingAsShown(sessionId: string, approvalId: string): Promise<{ waiting: PendingApproval; tool: AnyTool } | undefined> {
    const cluster = this.options.cluster;
    if (cluster) {
      const waiting = await cluster.getPendingApproval(sessionId, approvalId);
      return waiting && { waiting, tool: await this.toolAsShown(waiting, waiting.toolVersion) };
    }
    const waiting = this.options.registry.listPending(sessionId).find((p) => p.approvalId === approvalId);
    return waiting && { waiting, tool: await this.toolAsShown(waiting) };
  }

  /**
   * The tool of a waiting call as its card showed it: of its run's tools or the tools here now, the one with the
   * version recorded when the call was put up (`recorded`, or else its ledger row's). A lasting rule "Always allow"
   * saves is drafted from this one, never from the tool as it is when the decision lands: its server may have
   * rewritten it while the card waited, and a rule for the new version would let that run unasked. Throws
   * ConflictError when neither has that version (the tool changed or went away, and the run's copy is elsewhere).
   */
  private async toolAsShown(waiting: PendingApproval, recorded?: string): Promise<AnyTool> {
    const version = recorded ?? (await this.store.listRunToolCalls(waiting.runId)).find((record) => record.approvalId === waiting.approvalId)?.toolVersion;
    const candidates = [...(this.runs.get(waiting.runId)?.tools ?? []), ...this.options.tools()];
    const tool = version ? candidates.find((candidate) => candidate.name === waiting.toolName && toolVersion(candidate) === version) : undefined;
    if (tool) return tool;
    throw new ConflictError(
      'tool-changed',
      `the tool "${waiting.toolName}" is not here as this call's card showed it (its server changed it, or it is gone): "Always allow" cannot save a rule for the tool shown; allow or deny this call alone`,
    );
  }

  /** The session's calls waiting for a decision on this instance, those of a paused run included (see pause). */
  pending(sessionId: string): PendingApproval[] {
    const paused = this.pausedWaiting(sessionId).filter(({ stopped }) => !stopped);
    const pending = this.options.registry.listPending(sessionId);
    return paused.length === 0 ? pending : [...pending, ...paused.map(({ waiting }) => waiting)];
  }

  /** The session's calls waiting for a decision, whichever instance holds their run. */
  async listWaiting(sessionId: string): Promise<PendingApproval[]> {
    if (!this.options.cluster) return this.pending(sessionId);
    const waiting = await this.options.cluster.listPendingApprovals(sessionId);
    this.tellAtDeadline(sessionId, waiting);
    return waiting;
  }

  /**
   * A call whose run another instance holds leaves the waiting list at its deadline, by the database's clock. Its
   * owner records the timeout and says so (`decided`), but a dead owner says nothing, and the instance taking its run
   * over records it only a lease or more later: the list read here is stale from that deadline on. The session's
   * watchers are told then, so a tab reads its list again, and a read that still lists it (this clock ahead of the
   * database's) is looked at again a second later. One timer per session, at the earliest deadline read.
   */
  private tellAtDeadline(sessionId: string, waiting: readonly PendingApproval[]): void {
    if (this.closing) return;
    const now = Date.now();
    let at = Infinity;
    for (const call of waiting) {
      const run = this.runs.get(call.runId);
      if (call.expiresAt === null || (run !== undefined && !run.remote)) continue;
      at = Math.min(at, call.expiresAt > now ? call.expiresAt : now + PAST_DEADLINE_RECHECK_MS);
    }
    const armed = this.deadlineWatches.get(sessionId);
    if (at === Infinity || (armed !== undefined && armed.at <= at)) return;
    clearTimeout(armed?.timer);
    const timer = setTimeout(() => {
      this.deadlineWatches.delete(sessionId);
      this.announceWaitingChange(sessionId);
      // setTimeout fires at once past 2^31 - 1 ms: a deadline further off is told early, and read again then.
    }, Math.min(at - now, 2 ** 31 - 1));
    timer.unref?.();
    this.deadlineWatches.set(sessionId, { at, timer });
  }

  /**
   * The waiting calls of the session's paused runs, each with why its run is paused and whether a person stopped the
   * run (its calls then wait no more: they are cancelled when it is taken up).
   */
  private pausedWaiting(sessionId: string): { waiting: PendingApproval; error: string; stopped: boolean }[] {
    if (this.paused.size === 0) return [];
    return [...this.paused.values()]
      .filter((paused) => paused.run.sessionId === sessionId)
      .flatMap(({ run, waiting, error }) => waiting.map((call) => ({ waiting: call, error, stopped: run.stopAsked })));
  }

  listGrants(sessionId: string): Grant[] {
    return this.options.registry.listGrants(sessionId);
  }

  async revokeGrant(sessionId: string, grantId: string): Promise<boolean> {
    if (!this.options.registry.listGrants(sessionId).some((grant) => grant.grantId === grantId)) return false;
    this.grantChanged(grantId);
    // Taken out of the store first: a revoke the store cannot take leaves the grant in force and listed, to be revoked
    // again. Taken out here first, it was gone from the list while the store kept it, and a restart put it back.
    await this.store.deleteGrant(grantId);
    const revoked = this.options.registry.revokeGrant(sessionId, grantId);
    if (revoked) this.publish({ type: 'grant', sessionId, grantId, revoked: true });
    return revoked;
  }

  /** Every session held here, newest first: for the server's own use. A client reads them a page at a time (listSessionPage). */
  listSessions(): SessionSummary[] {
    return [...this.sessions.values()].sort((a, b) => b.summary.updatedAt - a.summary.updatedAt).map(summary);
  }

  /**
   * One page of the chat list, read from the store in its order (most recently active first, then the greater id):
   * at most `limit` chats after `after`. A chat the store has and this instance has not heard of yet (made on another
   * instance a moment ago) is listed with no run: the change that tells of it follows. With `titleContains`, only the
   * chats whose title contains it, whatever the case.
   */
  async listSessionPage(query: { limit: number; after?: SessionPosition; running?: boolean; titleContains?: string }): Promise<SessionPage> {
    // One more than the page, to know whether another follows without an empty last page.
    const limit = query.limit + 1;
    const { after, titleContains } = query;
    const rows =
      query.running === true
        ? this.runningPage(limit, after, titleContains)
        : await this.store.listSessionPage({ limit, ...(after === undefined ? {} : { after }), ...(titleContains === undefined ? {} : { titleContains }) });
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return {
      sessions: page.map((stored) => {
        const session = this.sessions.get(stored.sessionId);
        return session === undefined ? { ...stored, activeRunId: null } : summary(session);
      }),
      nextCursor: rows.length > query.limit && last !== undefined ? encodeSessionCursor(last) : null,
    };
  }

  /**
   * The sessions with a run going here or, as far as this instance knows, on another, in listSessionPage's order:
   * those runs are held in memory, so this reads no store.
   */
  private runningPage(limit: number, after: SessionPosition | undefined, titleContains: string | undefined): StoredSessionSummary[] {
    const isAfter = (session: StoredSessionSummary) =>
      after === undefined || session.updatedAt < after.updatedAt || (session.updatedAt === after.updatedAt && session.sessionId < after.sessionId);
    const matches = (session: StoredSessionSummary) => titleContains === undefined || titleMatches(session.title, titleContains);
    return [...this.sessions.values()]
      .filter((session) => (session.activeRun !== undefined || session.remoteRunId !== null) && isAfter(session.summary) && matches(session.summary))
      .map((session) => session.summary)
      .sort((a, b) => b.updatedAt - a.updatedAt || (a.sessionId < b.sessionId ? 1 : -1))
      .slice(0, limit);
  }

  /** A chat and its newest messages, or its messages before the `before`-th (a page of an earlier part). */
  async getSession(sessionId: string, before?: number): Promise<SessionDetail> {
    const session = this.sessions.get(sessionId);
    if (!session) throw new NotFoundError('session', sessionId);
    // Only the page is read: the chat may be far longer than one answer, and is not kept here.
    // A damaged message or call row is left out and named: the chat still opens, and goes on (see storedConversation).
    const leftOut: string[] = [];
    const leftOutCalls: LeftOutCall[] = [];
    const query = {
      ...(before === undefined ? {} : { before }),
      limit: MAX_DETAIL_MESSAGES,
      maxChars: MAX_DETAIL_CHARS,
      leftOut: (record: string, call?: LeftOutCall) => {
        leftOut.push(record);
        if (call !== undefined) leftOutCalls.push(call);
      },
    };
    const page = await this.store.loadMessagePage(sessionId, query);
    const damaged = { ...(leftOut.length === 0 ? {} : { leftOut }), ...(leftOutCalls.length === 0 ? {} : { leftOutCalls }) };
    const detail: SessionDetail = { ...summary(session), messages: page.messages, runIds: page.runIds, toolCalls: page.toolCalls, messagesBefore: page.start, ...damaged };
    const lastRunEnd = before === undefined ? await this.lastRunEnd(session) : undefined;
    return lastRunEnd === undefined ? detail : { ...detail, lastRunEnd };
  }

  private async lastRunEnd(session: Session): Promise<SessionDetail['lastRunEnd']> {
    const runId = session.summary.lastRunId;
    if (runId === null || summary(session).activeRunId !== null) return undefined;
    const log = this.runs.get(runId)?.log;
    // A damaged last event does not keep the chat from opening: a re-attach to the run names it.
    const stored = () =>
      this.store.loadLastEvent(runId).catch((error: unknown) => {
        if (this.store.damagedRecord?.(error) === undefined) throw error;
        return undefined;
      });
    const end = log?.isClosed === true && log.size > 0 ? log.eventAt(log.size) : await stored();
    if (end?.type !== 'run-end' || end.reason === 'done') return undefined;
    return end.error === undefined ? { runId, reason: end.reason } : { runId, reason: end.reason, error: end.error };
  }

  /** Changes a session's own settings. */
  async updateSession(sessionId: string, changes: { confirmToolCalls?: boolean; title?: string }): Promise<SessionSummary> {
    return this.admit(async () => {
      const session = this.sessions.get(sessionId);
      if (!session) throw new NotFoundError('session', sessionId);
      const now = Date.now();
      const next = { ...session.summary, ...definedOnly(changes), updatedAt: now };
      await this.store.updateSession(sessionId, { ...definedOnly(changes), updatedAt: now });
      session.summary = next;
      this.notify({ type: 'session-changed', session: summary(session) });
      this.publish({ type: 'session', sessionId });
      return summary(session);
    });
  }

  /** One page of the ledger, newest first: at most `query.limit` rows, and at most MAX_AUDIT_PAGE_CHARS characters of them (the first row always). */
  audit(query: AuditQuery): Promise<AuditPage> {
    return this.store.listAudit(query);
  }

  /** Deletes a session: its run is cancelled, its pending calls end as cancel, its grants go; its ledger rows stay. */
  async deleteSession(sessionId: string): Promise<boolean> {
    const session = this.sessions.get(sessionId);
    if (!session) return false;
    const run = session.activeRun;
    if (run) {
      run.cancellation.cancel();
      await run.done;
    }
    // A run on another instance is stopped by its owner, and its end waited for: deleted first, its rows would be
    // gone before its owner could record how its tool ended, and its owner's clients would be told nothing.
    const remote = session.remoteRunId;
    const cluster = this.options.cluster;
    if (remote && cluster && (await cluster.requestCancel(remote))) await this.remoteEnd(cluster, sessionId, remote);
    return this.admit(async () => {
      if (this.sessions.get(sessionId) !== session) return false;
      // A message taken in while the run above stopped started another: it is stopped too, or it would go on (its
      // calls running, out of reach of any Stop) in a chat that is no more.
      const started = session.activeRun;
      if (started) {
        started.cancellation.cancel();
        await started.done;
      }
      this.options.registry.clearSession(sessionId);
      await this.store.deleteSession(sessionId);
      for (const paused of this.paused.values()) if (paused.run.sessionId === sessionId) this.unpause(paused);
      this.options.rules?.forgetSession(sessionId);
      this.sessions.delete(sessionId);
      this.endFollowedRuns(sessionId);
      this.notify({ type: 'session-deleted', sessionId });
      this.publish({ type: 'session', sessionId });
      return true;
    });
  }

  /**
   * Waits until `runId`, going on at another instance, has ended, or for as long as its owner could take to hear a
   * stop: a lease and a scan to take it over, should the owner be gone. Woken by the run's events and its session's
   * changes (its end is stored before the owner says the session changed), and every second besides.
   */
  private async remoteEnd(cluster: Cluster, sessionId: string, runId: string): Promise<void> {
    const deadline = Date.now() + Math.min(2 * cluster.leaseMs + 5_000, 60_000);
    let wake = () => {};
    const unsubscribe = cluster.subscribe((message) => {
      if ((message.type === 'event' && message.runId === runId) || (message.type === 'session' && message.sessionId === sessionId)) wake();
    });
    try {
      for (;;) {
        const run = await this.store.getRun(runId);
        const left = deadline - Date.now();
        if (run === undefined || run.endedAt !== null || left <= 0 || this.closing) return;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 1_000));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    } finally {
      unsubscribe();
    }
  }

  /**
   * Refuses from now on a new run and a decision (ConflictError 'shutting-down'), the runs going on as they are: the
   * first step of a shutdown, taken the moment it begins (`shutdown` takes it too).
   */
  refuseNewWork(): void {
    this.closing = true;
  }

  /**
   * Ends every run's work in this process and waits for it. With `suspendRunsOnShutdown`, nothing more is written:
   * waiting calls stay waiting in the store and a running call is left to be recorded as interrupted at the next
   * start. Otherwise runs are cancelled and end (tool-end and run-end emitted and stored).
   */
  async shutdown(): Promise<void> {
    this.refuseNewWork();
    this.stopJudging?.();
    this.waitingJudge?.stop();
    // A paused run stays as it is stored (unfinished, its calls waiting): the next start takes it up.
    for (const paused of this.paused.values()) clearTimeout(paused.timer);
    for (const { timer } of this.deadlineWatches.values()) clearTimeout(timer);
    this.deadlineWatches.clear();
    const cluster = this.options.cluster;
    const active = [...this.sessions.values()].flatMap((session) => (session.activeRun ? [session.activeRun] : []));
    for (const run of active) {
      // With a cluster, runs are always handed over: another instance resumes them.
      if (this.options.suspendRunsOnShutdown || cluster) run.suspended = true;
      run.cancellation.cancel();
    }
    await Promise.all(active.map((run) => run.done));
    if (cluster) {
      this.clusterWork?.stop();
      this.clusterWork = undefined;
      // Released below with the rest: a stop not stored yet goes first, or the next owner would resume the run.
      for (const run of this.runs.values()) {
        if (run.stopUnstored && !run.remote) await this.storeUnstoredStop(cluster, run).catch((error: unknown) => this.log(`Could not store the stop of run ${run.runId}: ${messageOf(error)}`));
      }
      await cluster.releaseRuns().catch((error: unknown) => this.log(`Could not hand over this instance's runs: ${messageOf(error)}`));
    }
  }

  /** Why a decision that comes once the shutdown began is refused. */
  private stoppingDecisionText(): string {
    const after = this.suspendsRunsOnShutdown ? 'the call still waits for a decision when Airlock is started again' : 'the call ends with its run';
    return `Airlock is stopping: the decision was not applied, nothing was stored, and ${after}`;
  }

  /** Whether a shutdown leaves runs going (stored, resumed by the next start or another instance) rather than ending them. */
  get suspendsRunsOnShutdown(): boolean {
    return this.options.suspendRunsOnShutdown === true || this.options.cluster !== undefined;
  }

  get activeRunCount(): number {
    let count = 0;
    for (const session of this.sessions.values()) if (session.activeRun) count++;
    return count;
  }

  /**
   * A person's decision with a cluster: first one conditional write in the store (of two instances deciding one call,
   * one wins), then the call is released where it waits: here, or on its owner, told by a message.
   */
  private async confirmInCluster(cluster: Cluster, input: ConfirmInput): Promise<ResolveResult> {
    const rules = this.options.rules;
    const asRule = input.decision === 'allow' && input.always === true && input.scope !== undefined && input.scope !== 'chat' && rules !== undefined;
    const requested = input.decision === 'allow' ? input.arguments : undefined;
    const always = input.decision === 'allow' && input.always === true && !asRule;
    const waiting = asRule || always || requested !== undefined ? await cluster.getPendingApproval(input.sessionId, input.approvalId) : undefined;
    // Looked for only when a rule is drafted: a plain allow or a chat's grant holds for the version recorded already.
    const tool = waiting && asRule ? await this.toolAsShown(waiting, waiting.toolVersion) : undefined;
    // An edit is checked against the tool's schema; one that changes nothing is a plain allow.
    if (requested !== undefined && waiting) checkEditAgainst(this.options.tools(), waiting, requested);
    const edit = requested !== undefined && waiting && canonicalJson(requested) !== canonicalJson(waiting.arguments) ? requested : undefined;
    // Refused by a deny rule after all (set while the call waited, or matching the edit), the call is denied where it
    // runs: nothing of "Always allow" is kept. A grant claimed with it would outlive the deny it never ran past.
    const refused = waiting !== undefined && (always || asRule) && (await this.deniedByRules(waiting, edit ?? waiting.arguments, tool));
    const draft = waiting && asRule && rules && !refused ? await rules.propose(input.sessionId, { toolName: waiting.toolName, arguments: edit ?? waiting.arguments }, input.scope!, tool) : undefined;
    if (draft) refuseUnlessShown(draft.draft, input.rule);
    const reason = input.decision === 'deny' ? normaliseReason(input.reason) : undefined;
    if (always) await this.judgeBeforeGrant(input.sessionId);
    // Last before the claim, which is the decision: its write may still take a round trip to the database.
    refuseIfPastDeadline(input);
    // Asked for on the edited call, the grant covers the edited call. It is written with the allow, in the claim's
    // own transaction: a crash between the two cannot keep one without the other.
    let grant = always && waiting !== undefined && !refused ? this.registry.draftGrant({ sessionId: waiting.sessionId, toolName: waiting.toolName, executesCode: waiting.executesCode, toolVersion: waiting.toolVersion, arguments: edit ?? waiting.arguments }) : undefined;
    const claimedGrant = grant !== undefined;
    if (grant) {
      this.grantChanged(grant.grantId);
      this.savingGrants.add(grant.grantId);
    }
    let claim: ClaimDecisionResult;
    try {
      claim = await cluster.claimDecision({
        sessionId: input.sessionId,
        approvalId: input.approvalId,
        decision: input.decision,
        source: 'user',
        ...(reason === undefined ? {} : { reason }),
        decidedAt: Date.now(),
        ...(input.by === undefined ? {} : { by: input.by }),
        ...(edit === undefined ? {} : { editedArguments: edit }),
        ...(grant === undefined ? {} : { grant: { ...grant, scope: 'session' as const } }),
        ...(input.deadline === undefined ? {} : { deadline: input.deadline }),
      });
    } catch (error) {
      // Refused with nothing written (a full disk, a database going down): the call still waits, as on one instance.
      if (error instanceof StoreUnavailableError && !error.mayBeStored) throw new DecisionNotStoredError(input.approvalId, error.message);
      throw error;
    } finally {
      if (grant) this.savingGrants.delete(grant.grantId);
    }
    // "grant-gone" answers only a grant's release, never a person's decision.
    if (claim.status === 'not-found' || claim.status === 'grant-gone') return { resolved: false, status: 'not-found' };
    if (claim.status === 'already-decided') {
      // The call's run was stopped, and its owner here may have missed the Stop's message: it stops now, or the call
      // would wait on, refused to everyone and listed nowhere. An owner elsewhere is told by the Stop's own commit,
      // and reads the Stop at its next renewal.
      if (claim.runStopped === true) this.stopHeldRunOf(input.sessionId, input.approvalId);
      return { resolved: false, status: 'already-decided', decision: claim.decision };
    }
    const call = claim.call;
    let reported: Promise<DecisionReport | undefined> | undefined;
    const owner = this.runs.get(call.runId);
    const local = owner !== undefined && !owner.remote && owner.log.isClosed === false && this.registry.listPending(input.sessionId).some((p) => p.approvalId === input.approvalId);
    if (local) {
      const result = this.registry.resolve(input.approvalId, input.decision, {
        sessionId: input.sessionId,
        ...(reason === undefined ? {} : { reason }),
        ...(edit === undefined ? {} : { arguments: edit }),
      });
      if (result.resolved && result.decision === 'allow') reported = this.reportedDecision(input.sessionId, input.approvalId);
    }
    // Not found before the claim (it had not reached the store yet): drafted from the claimed row and stored after.
    // The decision is stored from here on: a grant or rule that cannot be saved is said so, and the decision answered.
    let alwaysNotSaved: string | undefined;
    if (always && waiting === undefined) {
      const drafted = this.registry.draftGrant({ sessionId: call.sessionId, toolName: call.toolName, executesCode: call.executesCode, toolVersion: call.toolVersion, arguments: edit ?? call.arguments });
      alwaysNotSaved = await this.saveGrant(drafted).then(
        () => void (grant = drafted),
        (error: unknown) => this.notSaved('grant', error),
      );
    }
    // In force here once the call is released (restored earlier, it would release that very call as the grant's).
    if (grant) this.registry.restoreGrant(grant);
    // Every instance was told of the decision (and of a grant written with it) by the claim's commit: the call's
    // owner releases it even if this instance lost the run meanwhile or stops now.
    if (grant && !claimedGrant) this.publish({ type: 'grant', sessionId: grant.sessionId, grantId: grant.grantId, revoked: false });
    // Released here, the call's decision as the loop reports it; released by its owner elsewhere, the person's (it
    // was claimed in the store first, so it holds even when the loop's own write of it failed).
    const report = await reported;
    const decision = report?.stored === true ? report.decision : input.decision;
    if (draft && rules && decision === 'allow') alwaysNotSaved = await this.addRule(rules, draft.draft);
    return { resolved: true, status: 'resolved', decision, ...(grant ? { grant } : {}), ...(alwaysNotSaved === undefined ? {} : { alwaysNotSaved }) };
  }

  /**
   * Whether the rules deny the waiting call with these arguments, judged here with its tool as its card showed it
   * (`shown`, or else the copy of that version here): as its owner judges an allow of it again. False where no copy
   * of that version is here: the owner still refuses the call.
   */
  private async deniedByRules(waiting: PendingApprovalRecord, args: ToolArguments, shown?: AnyTool): Promise<boolean> {
    const rules = this.options.rules;
    const candidates = [...(this.runs.get(waiting.runId)?.tools ?? []), ...this.options.tools()];
    const tool = shown ?? candidates.find((candidate) => candidate.name === waiting.toolName && toolVersion(candidate) === waiting.toolVersion);
    if (rules === undefined || tool === undefined) return false;
    const verdict = await rules.evaluate(waiting.sessionId, { id: waiting.toolCallId, name: waiting.toolName, arguments: args }, tool, { preview: true });
    return verdict?.effect === 'deny';
  }

  /** Adds the rule an "Always allow" asked for, once its allow is stored: undefined, or why it was not saved. */
  private async addRule(rules: RuleService, draft: Parameters<RuleService['add']>[0]): Promise<string | undefined> {
    return rules.add(draft).then(
      () => undefined,
      (error: unknown) => this.notSaved('rule', error),
    );
  }

  /** Why a grant or rule was not saved, for the person: an Airlock error's own words, else only that (logged here). */
  private notSaved(what: 'grant' | 'rule', error: unknown): string {
    this.log(`The ${what} asked for with an allow was not saved: ${messageOf(error)}`);
    return error instanceof AirlockError ? error.message : `the ${what} could not be saved`;
  }

  /**
   * With a cluster, an automatic ending of a wait (timeout, cancel, a grant's release) is written as a person's
   * decision is, conditionally; when a decision made elsewhere came first, that one holds. A person's decision got
   * here only after its own write won, and a run being handed over or lost writes nothing.
   */
  private arbitrate(call: PendingApproval & RestoredApproval, outcome: DecisionOutcome): Promise<DecisionOutcome> | undefined {
    const cluster = this.options.cluster;
    if (!cluster) return undefined;
    if (outcome.source === 'user' && (outcome.decision === 'allow' || outcome.decision === 'deny')) return undefined;
    const run = this.runs.get(call.runId);
    if (!run || run.remote || run.suspended || run.lost) return undefined;
    return cluster
      .claimDecision({
        sessionId: call.sessionId,
        approvalId: call.approvalId,
        decision: outcome.decision,
        source: outcome.source === 'grant' || outcome.source === 'system' || outcome.source === 'rule' ? outcome.source : 'user',
        ...(outcome.source === 'rule' && outcome.reason !== undefined ? { reason: outcome.reason } : {}),
        ...(outcome.source === 'rule' && outcome.verdict !== undefined
          ? { rule: { ruleId: outcome.verdict.ruleId, text: outcome.verdict.description, ...(outcome.verdict.fromWorkspaceFile === true ? { fromWorkspaceFile: true } : {}) } }
          : {}),
        ...(outcome.grantId === undefined ? {} : { grantId: outcome.grantId }),
        decidedAt: Date.now(),
        ...(run.fence === undefined ? {} : { fence: run.fence }),
      })
      .then(
        (claim): DecisionOutcome | Promise<DecisionOutcome> => {
          if (claim.status === 'already-decided') return foundOnClaim(run, claim);
          if (claim.status === 'grant-gone') return this.waitAgain(call, run);
          // Not written (the run is another instance's now, or ended): nothing runs on it.
          if (claim.status === 'not-found' && outcome.decision === 'allow') return { decision: 'cancel', source: 'system' };
          return outcome;
        },
        (error: unknown): DecisionOutcome | Promise<DecisionOutcome> => {
          this.log(`Could not record the ${outcome.decision} of ${call.approvalId}: ${messageOf(error)}`);
          // A grant's release the database could not take for now: the call waits again for a person (or its row, read
          // back, holds the release after all). A blip does not cancel a call a person may still decide.
          if (outcome.source === 'grant' && this.store.isUnavailable?.(error) === true) return this.waitAgain(call, run);
          // A timeout or a stop not known to have won: a person may have decided the call elsewhere a moment before.
          if (outcome.decision === 'timeout' || outcome.decision === 'cancel') return this.endOnceKnown(call, run, cluster, outcome.decision);
          // Not recorded, so not known to have won: nothing runs on it.
          return outcome.decision === 'allow' ? { decision: 'cancel', source: 'system' } : outcome;
        },
      );
  }

  /**
   * A call whose timeout or stop the database did not take: the store may hold a person's decision made on another
   * instance a moment before, so the call neither runs nor is told timed out or cancelled until its row is read. It is
   * read again a renewal interval later, as long as it takes: a decision it holds is the call's (an allow of a stopped
   * run runs nothing: the loop ends it cancelled, as it does an allow that won over a stop's claim); while it holds
   * none, the timeout, or the stop once the run is stopped, is claimed again. A stop of the run not stored yet is
   * stored first, so whichever instance holds the run (another, once this lease ran out) ends it; one stored elsewhere,
   * its message perhaps missed, is read before the row and stops the run here, so an allow made before it runs
   * nothing. A run handed over or lost meanwhile cancels the call, and it does not run.
   */
  private async endOnceKnown(call: PendingApproval, run: Run, cluster: Cluster, ending: 'timeout' | 'cancel'): Promise<DecisionOutcome> {
    const claimed = (): DecisionOutcome & { source: 'user' | 'system' } => (ending === 'cancel' || run.cancellation.aborted ? { decision: 'cancel', source: 'user' } : { decision: 'timeout', source: 'system' });
    const ended = await this.untilStoreAnswers({
      waitFirst: true,
      holds: () => !this.closing && !run.suspended && this.runs.get(run.runId) === run,
      attempt: async (): Promise<DecisionOutcome> => {
        await this.storeUnstoredStop(cluster, run);
        if (run.remote || run.lost) return { decision: 'cancel', source: 'system' };
        if (!run.cancellation.aborted && (await this.store.getRun(call.runId))?.cancelRequested === true) run.cancellation.cancel();
        const record = (await this.store.listRunToolCalls(call.runId)).find((candidate) => candidate.approvalId === call.approvalId);
        if (record === undefined || record.outcome !== null) return { decision: 'cancel', source: 'system' };
        if (record.decision !== null) return recordedOutcome(record);
        const outcome = claimed();
        const claim = await cluster.claimDecision({
          sessionId: call.sessionId,
          approvalId: call.approvalId,
          decision: outcome.decision,
          source: outcome.source,
          decidedAt: Date.now(),
          ...(run.fence === undefined ? {} : { fence: run.fence }),
        });
        if (claim.status === 'already-decided') return foundOnClaim(run, claim);
        return claim.status === 'resolved' ? outcome : { decision: 'cancel', source: 'system' };
      },
      failed: (error, retryMs) => {
        this.log(`Could not read or record the ${claimed().decision} of ${call.approvalId}: ${messageOf(error)}; tried again in ${retryMs} ms`);
        return true;
      },
    });
    return ended ?? { decision: 'cancel', source: 'system' };
  }

  /**
   * A call whose release by a grant found the grant revoked on another instance (not heard here yet), or whose claim
   * the database could not take for now: nothing was written, so it waits again, with its id and deadline, for a person
   * (or a grant still in force); a claim that was written after all (its connection lost once it was sent) is read
   * back and holds. A decision that came meanwhile, its message finding the call no longer waiting here, is read from
   * the store once it is back. The run's Stop is read before the row, as applyDecisionsFromStore reads it.
   */
  private async waitAgain(call: PendingApproval & RestoredApproval, run: Run): Promise<DecisionOutcome> {
    const recorded = async () => {
      // An allow made elsewhere before a Stop whose message was missed then reaches a stopped run, which runs nothing.
      if (!run.cancellation.aborted && (await this.store.getRun(call.runId))?.cancelRequested === true) run.cancellation.cancel();
      return (await this.store.listRunToolCalls(call.runId)).find((record) => record.approvalId === call.approvalId);
    };
    let record: ToolCallRecord | undefined | 'unread';
    try {
      record = await recorded();
    } catch (error) {
      // The database still down: the call was waiting here, undecided, a moment ago; it waits again as it was, and
      // its row is read once the database answers (a claim written after all, or a decision made elsewhere).
      this.log(`Could not read ${call.approvalId} back after its release was not stored: ${messageOf(error)}; it waits again`);
      record = 'unread';
    }
    if (record === undefined || (record !== 'unread' && record.outcome !== null)) return { decision: 'cancel', source: 'system' };
    if (record !== 'unread' && record.decision !== null) return recordedOutcome(record);
    let waited: Promise<DecisionOutcome>;
    try {
      waited = this.registry.restore(record === 'unread' ? call : approvalOf(record)).wait(run.cancellation);
    } catch (error) {
      // The slot's wait would take a rejection as the grant's allow, which was not written: nothing runs on it.
      this.log(`Could not put ${call.approvalId} back to waiting: ${messageOf(error)}`);
      return { decision: 'cancel', source: 'system' };
    }
    this.announceWaitingChange(call.sessionId);
    void this.applyDecisionsFromStore(run, [call.approvalId]);
    return waited;
  }

  private startClusterWork(cluster: Cluster): { stop: () => void } {
    const unsubscribe = cluster.subscribe((message) => {
      this.onClusterMessage(message).catch((error: unknown) => this.log(`Could not apply a change from another instance (${message.type}): ${messageOf(error)}`));
    });
    // Leases are renewed well before they run out; runs whose owner stopped renewing are looked for as often. Both are
    // off the path of events and decisions, which are woken by messages.
    const renew = setInterval(() => void this.renewLeases(), renewalIntervalMs(cluster.leaseMs));
    const scan = setInterval(() => {
      void this.takeOver();
      this.readFollowedAgain();
    }, Math.max(20, Math.floor(cluster.leaseMs / 2)));
    renew.unref?.();
    scan.unref?.();
    return {
      stop: () => {
        unsubscribe();
        clearInterval(renew);
        clearInterval(scan);
      },
    };
  }

  private async onClusterMessage(message: ClusterMessage): Promise<void> {
    switch (message.type) {
      case 'event': {
        const run = this.runs.get(message.runId);
        if (message.waitingIn !== undefined) this.announceWaitingElsewhere(message.waitingIn, run);
        if (run?.remote && message.seq > run.log.size) await this.readRemoteEvents(run, message.seq);
        return;
      }
      case 'decided': {
        const run = this.runs.get(message.runId);
        this.announceWaitingOfRun(message.runId, message.sessionId, run);
        // Released here already (decided on this instance, or the message is a repeat): nothing to read.
        if (run) await this.applyDecisionsFromStore(run, [message.approvalId]);
        return;
      }
      case 'grant': {
        if (message.revoked) {
          this.grantChanged(message.grantId);
          this.registry.revokeGrant(message.sessionId, message.grantId);
          return;
        }
        if (!this.sessions.has(message.sessionId) || this.registry.listGrants(message.sessionId).some((grant) => grant.grantId === message.grantId)) return;
        // A revoke heard while the grant is read may have been committed after the read: the grant read is not put
        // in force then (it would stay here, revoked, and release the chat's waiting calls).
        const changed = new Set<string>();
        this.grantChanges.add(changed);
        let grant: StoredGrant | undefined;
        try {
          grant = await this.options.cluster?.getGrant(message.grantId);
        } finally {
          this.grantChanges.delete(changed);
        }
        if (grant && this.registry.listPending(message.sessionId).length > 0) {
          // Another instance's rule may have come unheard yet: the rules are read again before the grant is judged.
          await this.options.rules?.reload?.();
          await this.judgeBeforeGrant(message.sessionId);
        }
        if (grant && !changed.has(grant.grantId)) this.registry.restoreGrant(grant);
        return;
      }
      case 'session':
        await this.refreshSession(message.sessionId, true);
        // Its owner tells a chat's change after marking its run ended: a run followed here whose last event read was
        // left out as damaged (perhaps its run-end) is read again, and closes if it has ended (see readRemoteEvents).
        for (const run of [...this.runs.values()]) {
          if (run.remote && run.sessionId === message.sessionId && endsLeftOut(run)) await this.readRemoteEvents(run);
        }
        return;
      case 'cancel': {
        const run = this.runs.get(message.runId);
        this.announceWaitingOfRun(message.runId, message.sessionId, run);
        if (run && !run.remote) run.cancellation.cancel();
        return;
      }
      case 'released':
        if (message.instanceId !== this.options.cluster?.instanceId) await this.takeOver();
        return;
      case 'rules':
      case 'settings':
        return;
      case 'resync':
        this.resync();
        return;
    }
  }

  /**
   * Reads again what messages may have missed, one pass at a time: the resyncs heard while a pass reads are merged
   * into one more pass after it (each reconnection would otherwise read every chat again, all at once). A pass that
   * fails is tried again a renewal interval later.
   */
  private resync(): void {
    if (this.resyncing) {
      this.resyncAgain = true;
      return;
    }
    this.resyncing = true;
    void this.untilStoreAnswers({
      holds: () => !this.closing,
      attempt: async () => {
        do {
          this.resyncAgain = false;
          await this.resyncPass();
        } while (this.resyncAgain && !this.closing);
      },
      failed: (error, retryMs) => {
        this.log(`Could not apply a change from another instance (resync): ${messageOf(error)}; read again in ${retryMs} ms`);
        return true;
      },
    }).finally(() => (this.resyncing = false));
  }

  private async resyncPass(): Promise<void> {
    // Read again the grants (first: a revoke missed meanwhile stops allowing here before anything slower is read), the
    // list of sessions, what is followed here and the decisions of calls waiting here. A chat with a run elsewhere may
    // have had calls start or stop waiting meanwhile: its watchers read its waiting list again.
    await this.resyncGrants();
    for (const stored of await this.store.listSessions()) {
      const session = await this.refreshSession(stored.sessionId, true);
      if (session?.remoteRunId) this.announceWaitingChange(stored.sessionId);
    }
    for (const run of [...this.runs.values()]) {
      if (run.remote) await this.readRemoteEvents(run);
      else if (!run.log.isClosed) {
        // A Stop stored on another instance whose message was missed: the run stops here as on that message, before
        // any decision read from its calls' rows is let go. An allow made there before the Stop and missed with it
        // then reaches a stopped run, which runs nothing; released first, its tool ran while the Stop was read.
        if ((await this.store.getRun(run.runId))?.cancelRequested === true) run.cancellation.cancel();
        for (const record of await this.store.listRunToolCalls(run.runId)) if (record.decision !== null) this.applyRecordedDecision(run, record);
      }
    }
    await this.takeOver();
  }

  /**
   * Makes the grants held here those the store keeps: a revoke or a grant announced while messages were missed
   * would otherwise go unseen until a restart (a revoked grant still allowing calls here). A grant made here whose
   * write is still under way is kept.
   */
  private async resyncGrants(): Promise<void> {
    // A grant made or revoked here while the store is read may be read either way: it is left as it is here.
    const changed = new Set<string>();
    this.grantChanges.add(changed);
    try {
      const held = [...this.sessions.keys()].flatMap((sessionId) => this.registry.listGrants(sessionId));
      const stored = await this.store.listGrants();
      const kept = new Set(stored.map((grant) => grant.grantId));
      for (const grant of held) {
        if (!kept.has(grant.grantId) && !this.savingGrants.has(grant.grantId) && !changed.has(grant.grantId)) this.registry.revokeGrant(grant.sessionId, grant.grantId);
      }
      const missed = stored.filter((grant) => this.sessions.has(grant.sessionId) && !this.registry.listGrants(grant.sessionId).some((candidate) => candidate.grantId === grant.grantId));
      // A rule of another instance may have been missed with them: the rules are read again, and the chats' waiting
      // calls judged by them, before a missed grant can release one (as for a grant heard of in time).
      const judged = new Set(missed.map((grant) => grant.sessionId).filter((sessionId) => this.registry.listPending(sessionId).length > 0));
      if (judged.size > 0) await this.options.rules?.reload?.();
      for (const sessionId of judged) await this.judgeBeforeGrant(sessionId);
      for (const grant of missed) {
        if (changed.has(grant.grantId) || this.registry.listGrants(grant.sessionId).some((candidate) => candidate.grantId === grant.grantId)) continue;
        this.registry.restoreGrant(grant);
      }
    } finally {
      this.grantChanges.delete(changed);
    }
  }

  /**
   * A grant of the chat releases the waiting calls it covers: first they are judged by the rules as they are now (a
   * deny rule changed since one was put up may have it released only by an exact grant; see WaitingCallsJudge), so a
   * change not yet judged (the workspace's rules file, a rule of another instance) cannot let the grant release it.
   */
  private async judgeBeforeGrant(sessionId: string): Promise<void> {
    if (this.registry.listPending(sessionId).length > 0) await this.waitingJudge?.judge(sessionId);
  }

  /** Tells the re-reads of the grants under way that this grant was made or revoked here (see resyncGrants). */
  private grantChanged(grantId: string): void {
    for (const changed of this.grantChanges) changed.add(grantId);
  }

  /** Keeps a grant made here, marked as being written meanwhile (see resyncGrants). */
  private async saveGrant(grant: VersionedGrant): Promise<void> {
    this.grantChanged(grant.grantId);
    this.savingGrants.add(grant.grantId);
    try {
      await this.store.saveGrant({ ...grant, scope: 'session' });
    } finally {
      this.savingGrants.delete(grant.grantId);
    }
  }

  /**
   * Releases the calls of a run held here that were decided on another instance, with the decisions their ledger rows
   * hold. A read that fails (a damaged row aside) is tried again a renewal interval later, as long as one of them still
   * waits here: the message that a call was decided comes once, and a call left waiting would run only at its deadline.
   */
  private async applyDecisionsFromStore(run: Run, approvalIds: readonly string[]): Promise<void> {
    const asked = () => {
      const waiting = new Set(this.registry.listPending(run.sessionId).map((pending) => pending.approvalId));
      return approvalIds.filter((approvalId) => waiting.has(approvalId));
    };
    await this.untilStoreAnswers({
      holds: () => !this.closing && !run.remote && !run.log.isClosed && this.runs.get(run.runId) === run && asked().length > 0,
      attempt: async () => {
        // The run's Stop first, as a resync reads it: an allow made before a Stop whose message was missed then
        // reaches a stopped run, which runs nothing; released first, its tool ran while the Stop was read.
        if (!run.cancellation.aborted && (await this.store.getRun(run.runId))?.cancelRequested === true) run.cancellation.cancel();
        const still = asked();
        for (const record of await this.store.listRunToolCalls(run.runId)) {
          if (still.includes(record.approvalId) && record.decision !== null) this.applyRecordedDecision(run, record);
        }
      },
      failed: (error, retryMs) => {
        const damaged = this.store.damagedRecord?.(error) !== undefined;
        this.log(`Could not read the decisions made on another instance of run ${run.runId}: ${messageOf(error)}${damaged ? '' : `; read again in ${retryMs} ms`}`);
        return !damaged;
      },
    });
  }

  /**
   * Tries `attempt` until the store answers it: again a renewal interval after each failure, told to `failed` (which
   * answers whether to try again: not for a damaged record), as long as `holds()` before each try. `waitFirst`: the
   * first try waits an interval too. Answers what the attempt answered, or undefined once it stopped without an answer.
   */
  private async untilStoreAnswers<T>(retry: { holds: () => boolean; attempt: () => Promise<T>; failed: (error: unknown, retryMs: number) => boolean; waitFirst?: boolean }): Promise<T | undefined> {
    const retryMs = renewalIntervalMs(this.options.cluster?.leaseMs ?? 0);
    for (let wait = retry.waitFirst === true; ; wait = true) {
      if (wait) await new Promise<void>((resolve) => setTimeout(resolve, retryMs).unref?.());
      if (!retry.holds()) return undefined;
      try {
        return await retry.attempt();
      } catch (error) {
        if (!retry.failed(error, retryMs)) return undefined;
      }
    }
  }

  /**
   * Ends a call of `run` waiting here with the decision its ledger row holds (written by another instance, or by this
   * one when its answer was lost), as it was made: a grant's release as the grant's, a person's as theirs, a timeout
   * as a timeout here. A cancel is a Stop's (its calls are cancelled only with their run): the run stops here too, as
   * on the Stop's message. Whatever the row holds ends the wait: left waiting, the call could never be decided, since
   * every decision on it is refused as decided already in the store.
   */
  private applyRecordedDecision(run: Run, record: ToolCallRecord): void {
    if (record.decision === null) return;
    const ended = this.registry.applyRecorded(record.approvalId, record.sessionId, recordedOutcome(record));
    if (ended && record.decision === 'cancel') run.cancellation.cancel();
  }

  /** Ends the runs of a deleted session that are followed here: nothing more will be written to them. */
  private endFollowedRuns(sessionId: string): void {
    for (const run of this.runs.values()) {
      if (run.remote && run.sessionId === sessionId) {
        run.remote = false;
        endDeleted(run);
        this.forgetLater(run.runId);
      }
    }
  }

  /**
   * Reads a session's row again (another instance changed it) and tells watchers. Answers the session, or undefined
   * when it is gone. `announce`: tell this instance's watchers.
   */
  private async refreshSession(sessionId: string, announce: boolean): Promise<Session | undefined> {
    const stored = await this.store.getSession(sessionId);
    let session = this.sessions.get(sessionId);
    if (!stored) {
      // A run of the session going on here stops: its next write is refused, and its clients are told it ended.
      if (session?.activeRun && !session.activeRun.cancellation.aborted) session.activeRun.cancellation.cancel();
      if (session && !session.activeRun) {
        this.sessions.delete(sessionId);
        this.registry.clearSession(sessionId);
        this.endFollowedRuns(sessionId);
        if (announce) this.notify({ type: 'session-deleted', sessionId });
      }
      return session?.activeRun ? session : undefined;
    }
    let remoteRunId: string | null = null;
    if (stored.lastRunId !== null && session?.activeRun?.runId !== stored.lastRunId) {
      const run = await this.store.getRun(stored.lastRunId);
      if (run && run.endedAt === null) remoteRunId = run.runId;
    }
    if (!session) {
      session = { summary: stored, activeRun: undefined, remoteRunId };
      this.sessions.set(sessionId, session);
    } else {
      session.summary = stored;
      session.remoteRunId = session.activeRun ? null : remoteRunId;
    }
    if (announce) this.notify({ type: 'session-changed', session: summary(session) });
    return session;
  }

  /**
   * Feeds a run followed here from the store, up to what its owner has written: to `announcedSeq` (what a message of
   * its owner said it wrote), or when not given to the end of what is stored. Read a page at a time (REPLAY_PAGE), so
   * a long run followed from its start, or a burst of large results, is not read at once; reads run one at a time.
   */
  private async readRemoteEvents(run: Run, announcedSeq = Infinity): Promise<void> {
    run.readTo = Math.max(run.readTo, announcedSeq);
    if (run.reading) {
      run.readAgain = true;
      return;
    }
    run.reading = true;
    run.readFailed = false;
    try {
      do {
        run.readAgain = false;
        // A pass reads no further than what was stored as it began: an owner writing on announces the rest.
        const readTo = Number.isFinite(run.readTo) ? run.readTo : await this.store.lastEventSeq(run.runId);
        if (run.log.size < readTo) {
          for await (const page of this.storedPages(run.runId, run.log, (record, seq) => this.leftOutFollowed(run, record, seq))) {
            // This instance may have taken the run over meanwhile: then it writes the log itself.
            if (!run.remote || this.runs.get(run.runId)?.log !== run.log) return;
            appendInOrder(run.log, page);
            if (run.log.eventAt(run.log.size)?.type === 'run-end') {
              this.endFollowed(run);
              return;
            }
            if (run.log.size === page.from || run.log.size >= readTo) break;
            // Many runs followed here are read a page each in turn, not one whole run after another.
            await nextTurnOfEventLoop();
          }
        }
        // Its last event read was left out as damaged: it may have been its run-end, which would have closed the log.
        // The run has ended when its row says so and nothing is stored after that event; its clients here are let go
        // then, after the status in its place, rather than left waiting for an end that never comes.
        if (endsLeftOut(run) && (await this.endedAfter(run.runId, run.log.size))) {
          if (!run.remote || this.runs.get(run.runId)?.log !== run.log) return;
          this.endFollowed(run);
          return;
        }
        // All that was announced is read (or all there is): a later message says how far to read next.
        if (!run.readAgain) run.readTo = run.log.size;
      } while (run.readAgain);
    } catch (error) {
      if (this.store.damagedRecord?.(error) !== undefined) throw error;
      // Its owner's messages may say nothing more (it has ended): read again at the next scan (see readFollowedAgain).
      run.readFailed = true;
      this.log(`Could not read run ${run.runId}, followed here: ${messageOf(error)}; read again shortly`);
    } finally {
      run.reading = false;
    }
  }

  /** Reads again, at each scan, the runs followed here whose last read failed. */
  private readFollowedAgain(): void {
    for (const run of this.runs.values()) {
      if (run.remote && run.readFailed && !run.reading) void this.catchUpFollowed(run);
    }
  }

  /**
   * Reads a run followed here as far as it is stored. Its chat is read again once it ended here (the change that said
   * so may have come while it was still this instance's, or been read before its end could be); one whose rows are
   * gone (its chat deleted elsewhere) is ended for its clients here, not left waiting. A read that fails marks the run,
   * read again at the next scan.
   */
  private async catchUpFollowed(run: Run): Promise<void> {
    try {
      await this.readRemoteEvents(run);
      if (run.readFailed) return;
      const session = this.sessions.get(run.sessionId);
      if (run.remote) {
        if ((await this.store.getRun(run.runId)) !== undefined) return;
        run.remote = false;
        if (session?.remoteRunId === run.runId) session.remoteRunId = null;
        endDeleted(run);
        this.forgetLater(run.runId);
        // The chat went with it: it is forgotten here now.
        await this.refreshSession(run.sessionId, true);
      } else if (session?.remoteRunId === run.runId) {
        await this.refreshSession(run.sessionId, true);
      }
    } catch (error) {
      if (run.remote && this.store.damagedRecord?.(error) === undefined) run.readFailed = true;
      this.log(`Could not follow run ${run.runId}: ${messageOf(error)}`);
    }
  }

  /** A followed run's end was read: its log closes, and the run is kept as a finished one. */
  private endFollowed(run: Run): void {
    run.log.close();
    run.remote = false;
    this.forgetLater(run.runId);
  }

  /** Whether a run has ended in the store with `seq` its last stored event. */
  private async endedAfter(runId: string, seq: number): Promise<boolean> {
    const stored = await this.store.getRun(runId);
    if (stored === undefined || stored.endedAt === null) return false;
    return (await this.store.lastEventSeq(runId)) === seq;
  }

  /** A stored event of a run followed here was left out as damaged: said in the log, and kept for a takeover. */
  private leftOutFollowed(run: Run, record: string, seq: number): void {
    run.leftOutEvent ??= record;
    run.leftOutAt = seq;
    this.log(`Run ${run.runId} of chat ${run.sessionId}, followed here: a stored event of it is damaged (${record}): left out of what its clients here are shown, and left as stored.`);
  }

  /** A run lost to another instance is followed from the store from where it stopped here. */
  private followElsewhere(session: Session, run: Run): void {
    run.remote = true;
    run.lost = false;
    session.remoteRunId = run.runId;
    this.notify({ type: 'session-changed', session: summary(session) });
    // Lost because its rows are gone (the session deleted elsewhere, heard while the run was still this instance's),
    // or ended elsewhere already: its clients here, and the chat, are told (see catchUpFollowed).
    void this.catchUpFollowed(run);
  }

  /** Takes over the runs no live instance holds, and resumes them here. Answers how many resumed. One scan at a time. */
  private async takeOver(): Promise<number> {
    const cluster = this.options.cluster;
    if (!cluster || this.closing) return 0;
    if (this.takingOver) {
      this.takeOverAgain = true;
      await this.takingOver;
      return 0;
    }
    let resumed = 0;
    const scan = (async () => {
      do {
        this.takeOverAgain = false;
        // A run given up again and again because it could not be kept is held off in the store (see HoldOff): it is
        // not listed, so it does not bounce between instances as fast as they can fail.
        for (const stored of await cluster.listClaimableRuns()) {
          if (this.closing) return;
          // A run still driven here whose lease ran out (a pause longer than the lease) is not taken back: resumed as
          // a second run beside it, it would record the call still running as interrupted, and the first run, no
          // longer the session's, would be out of reach of the renewal that stops a lost run's calls. The next
          // renewal keeps the lease, or finds the run taken over and stops it.
          const local = this.runs.get(stored.runId);
          if (local !== undefined && !local.remote && this.sessions.get(local.sessionId)?.activeRun === local) continue;
          const asked = performance.now();
          const fence = await cluster.claimRun(stored.runId);
          if (fence === undefined) continue;
          const adopted = await this.admit(async () => {
            if (!this.sessions.has(stored.sessionId)) await this.refreshSession(stored.sessionId, true);
            return this.resumeOrSetAside(stored, fence, asked);
          }).catch((error: unknown) => {
            // Claimed, neither resumed nor ended: it is given up, or no instance would take it again while this one
            // renews its lease (renewed with every run it owns), and a decision on it would never be acted on.
            const adopted = this.sessions.get(stored.sessionId)?.activeRun?.runId === stored.runId;
            this.log(`Could not resume run ${stored.runId}: ${messageOf(error)}${adopted ? '' : '; it is given up, to be taken over again'}`);
            if (!adopted) this.releaseWhenReachable(stored.runId, fence);
            return false;
          });
          if (!adopted) continue;
          resumed++;
          // A rule changed while the run's calls waited on an instance that never judged them (it died first, or
          // missed the change) is judged here, where they wait now.
          void this.waitingJudge?.judgeRestored(stored.sessionId);
        }
      } while (this.takeOverAgain && !this.closing);
    })();
    this.takingOver = scan.catch((error: unknown) => this.log(`Could not look for runs to take over: ${messageOf(error)}`)).finally(() => (this.takingOver = undefined));
    await this.takingOver;
    return resumed;
  }

  /**
   * Gives up a run this instance can no longer store, or claimed and could not resume, trying again until the database
   * answers. Another instance takes it over on the release's message, this one at its next scan; given up again soon
   * after, every instance holds off claiming it for a while (`retryStoreAfterMs`, then twice as long, up to
   * MAX_STORE_RETRY_MS; see HoldOff), so it does not bounce between instances as fast as they fail. `run`: the run
   * held here, whose stop not yet stored is stored first.
   */
  private releaseWhenReachable(runId: string, fence: number, run?: Run): void {
    const cluster = this.options.cluster;
    if (!cluster) return;
    const holdOff = { firstMs: this.options.retryStoreAfterMs ?? 1_000, maxMs: MAX_STORE_RETRY_MS };
    void this.untilStoreAnswers({
      holds: () => !this.closing,
      attempt: async () => {
        if (run !== undefined) await this.storeUnstoredStop(cluster, run);
        await cluster.releaseRun(runId, fence, holdOff);
      },
      failed: (error) => {
        this.log(`Could not give up run ${runId} yet: ${messageOf(error)}`);
        return true;
      },
    });
  }

  /**
   * Stores a person's stop that could not be stored when it was made, which tells the other instances: the run's next
   * owner reads it as it takes the run over and ends the run; one that took it already (this lease ran out) stops it.
   */
  private async storeUnstoredStop(cluster: Cluster, run: Run): Promise<void> {
    if (!run.stopUnstored) return;
    const going = await cluster.requestCancel(run.runId);
    run.stopUnstored = false;
    // Ended meanwhile (its end was stored after all): there is nothing left to stop.
    if (going) this.log(`Run ${run.runId}: its stop is stored now`);
  }

  /**
   * Pauses a run whose write the store could not take for now (on a single instance): nothing more of it is written,
   * its waiting calls leave the registry undecided (still listed, a decision on them refused with RunPausedError),
   * and it stays the session's going run, as the store keeps it. It is taken up from the store, as at a start, by a
   * try after `retryStoreAfterMs`, then twice as long after each failed one (up to MAX_STORE_RETRY_MS).
   */
  private pause(run: Run, error: string): void {
    run.suspended = true;
    run.pausedBecause = error;
    // Only calls whose start was stored stay listed (the log holds what was stored): one put up in the write that
    // failed was never shown, and is not in the store to be taken up.
    const stored = new Set<string>();
    for (let seq = 1; seq <= run.log.size; seq++) {
      const event = run.log.eventAt(seq);
      if (event?.type === 'tool-start' && event.approvalId !== '') stored.add(event.approvalId);
    }
    const waiting = this.options.registry.withdrawRun(run.sessionId, run.runId).filter((call) => stored.has(call.approvalId));
    const retried = this.storeRetryMs.get(run.runId);
    const retryMs = retried ?? this.options.retryStoreAfterMs ?? 1_000;
    const paused: PausedRun = { run, waiting, error, timer: undefined };
    this.paused.set(run.runId, paused);
    // Stopped by a person: its calls left the list as it was stopped (see pausedWaiting).
    if (run.stopAsked) this.announceWaitingChange(run.sessionId);
    if (retried === undefined) this.log(`Run ${run.runId} is paused: it could not be stored (${error}); it is taken up again from the store once a write succeeds`);
    else this.log(`Run ${run.runId} is still paused (${error}): next try in ${Math.max(1, Math.round(retryMs / 1000))} s`);
    this.takeUpLater(paused, retryMs);
  }

  private takeUpLater(paused: PausedRun, retryMs: number): void {
    if (this.closing) return;
    this.storeRetryMs.set(paused.run.runId, Math.min(retryMs * 2, MAX_STORE_RETRY_MS));
    paused.timer = setTimeout(() => void this.takeUp(paused), retryMs);
    paused.timer.unref?.();
  }

  /** Tries to take up a paused run from the store, as a start would; tried again later when that fails too. */
  private async takeUp(paused: PausedRun): Promise<void> {
    const { runId, sessionId } = paused.run;
    await this.admit(async () => {
      if (this.closing || this.paused.get(runId) !== paused) return;
      try {
        const stored = await this.store.getRun(runId);
        if (stored === undefined || stored.endedAt !== null) {
          // Gone or ended meanwhile (the chat deleted): nothing is left to take up.
          this.unpause(paused);
          return;
        }
        // Still among the paused runs while it is read back, so a stop meanwhile is kept (see stop); it may be paused
        // again by its first write, before this returns (see flush for the end of the pause). One whose records are
        // damaged is set aside, as at a start, and runs nothing.
        const resumed = await this.resumeOrSetAside(stored, undefined, undefined, paused);
        if (!resumed) this.unpause(paused);
        else if (this.paused.get(runId) === paused) this.paused.delete(runId);
      } catch (error) {
        if (!this.paused.has(runId) && this.sessions.get(sessionId)?.activeRun === paused.run) this.paused.set(runId, paused);
        if (this.paused.get(runId) !== paused) return;
        const retryMs = this.storeRetryMs.get(runId) ?? MAX_STORE_RETRY_MS;
        this.log(`Run ${runId} is still paused (${messageOf(error)}): next try in ${Math.max(1, Math.round(retryMs / 1000))} s`);
        this.takeUpLater(paused, retryMs);
      }
    });
  }

  /** A paused run let go of without being taken up: its session has no going run here any more. */
  private unpause(paused: PausedRun): void {
    clearTimeout(paused.timer);
    this.paused.delete(paused.run.runId);
    this.storeRetryMs.delete(paused.run.runId);
    const session = this.sessions.get(paused.run.sessionId);
    if (session?.activeRun === paused.run) {
      session.activeRun = undefined;
      this.notify({ type: 'session-changed', session: summary(session) });
    }
    paused.run.log.close();
    this.forgetLater(paused.run.runId);
  }

  /**
   * Renews this instance's leases; a run whose lease could not be renewed is another instance's now. A run held here
   * whose Stop is stored stops, as on the Stop's message: should that message not have come, the run goes on no
   * longer than a renewal interval after it.
   */
  private async renewLeases(): Promise<void> {
    const cluster = this.options.cluster;
    if (!cluster || this.closing) return;
    const asked = performance.now();
    let held: Set<string>;
    try {
      const renewed = await cluster.renewLeases();
      held = renewed.held;
      this.stopStored(renewed.stopped);
    } catch (error) {
      this.log(`Could not renew this instance's leases: ${messageOf(error)}`);
      return;
    }
    for (const session of this.sessions.values()) {
      const run = session.activeRun;
      if (run?.fence !== undefined && held.has(run.runId)) run.leaseFrom = Math.max(run.leaseFrom, asked);
      // A run claimed after the renewal was asked for may not be in its answer yet.
      if (!run || run.fence === undefined || run.claimedAt >= asked || held.has(run.runId)) continue;
      run.lost = true;
      run.cancellation.cancel();
    }
  }

  /**
   * With a cluster, a tool starts only while this instance's lease on its run is known to hold. The fenced write of
   * its running status proves the run was still this instance's when it went in, not when the tool starts: a process
   * that stalled past its lease in between (a pause as the write's answer came) would start the tool after another
   * instance took the run over and recorded the call as interrupted. Half a lease after the last renewal that held
   * the run was asked (renewals come every third), the lease is renewed first; throws FencedError when the run is
   * another's, or the renewal's failure.
   */
  private async leaseHolds(run: Run): Promise<void> {
    const cluster = this.options.cluster;
    if (!cluster || run.fence === undefined || performance.now() - run.leaseFrom < cluster.leaseMs / 2) return;
    const asked = performance.now();
    const renewed = await cluster.renewLeases();
    if (!renewed.held.has(run.runId)) throw new FencedError(run.runId);
    run.leaseFrom = Math.max(run.leaseFrom, asked);
    // Stopped before the tool starts: the loop starts nothing on a cancelled run.
    this.stopStored(renewed.stopped);
  }

  /** Stops the run held here whose call `approvalId` waits here: its Stop is stored (see confirmInCluster). */
  private stopHeldRunOf(sessionId: string, approvalId: string): void {
    const waiting = this.registry.listPending(sessionId).find((pending) => pending.approvalId === approvalId);
    if (waiting !== undefined) this.stopStored(new Set([waiting.runId]));
  }

  /** Stops the runs held here among `runIds`, whose Stop is stored, as the Stop's message would (see renewLeases). */
  private stopStored(runIds: ReadonlySet<string>): void {
    for (const runId of runIds) {
      const run = this.runs.get(runId);
      if (run && !run.remote && !run.cancellation.aborted) run.cancellation.cancel();
    }
  }

  /** Sends a message to the other instances; a failure loses nothing they cannot read again, so it is only logged. */
  private publish(message: ClusterMessage): void {
    this.options.cluster?.publish(message).catch((error: unknown) => this.log(`Could not tell the other instances (${message.type}): ${messageOf(error)}`));
  }

  private admit<T>(work: () => Promise<T>): Promise<T> {
    const result = this.admission.then(work);
    this.admission = result.catch(() => undefined);
    return result;
  }

  private policyFor(sessionId: string): { policy?: (call: ToolCall, tool: AnyTool, options?: PolicyOptions) => Promise<PolicyVerdict | undefined>; policyVersion?: () => number } {
    const rules = this.options.rules;
    if (!rules) return {};
    const policy = (call: ToolCall, tool: AnyTool, options?: PolicyOptions) => rules.evaluate(sessionId, call, tool, options);
    return rules.version === undefined ? { policy } : { policy, policyVersion: () => rules.version!() };
  }

  /**
   * The loop of a run, started or resumed: the conversation so far, behind the system prompt. It parks while its
   * calls wait on the person (see drive), and goes on with the same settings (see driveOn). Neither a parked run
   * nor what goes on with it holds the conversation: the loop reads it from the store again before its next model
   * turn (`history`), so a run waiting in a long chat holds none of it.
   */
  private loop(run: Run, input: LoopInput): ReturnType<typeof runToolLoop> {
    // Taken apart so that nothing kept with the run holds the conversation: its settings live as long as the run.
    const { messages, resume, ...settings } = input;
    run.settings = settings;
    return runToolLoop({
      model: settings.model,
      messages: resume instanceof ParkedRun ? [] : [...this.systemMessages(), ...messages],
      history: () => this.conversation(run.sessionId),
      park: true,
      // The calls' ends leave for the run's clients (a transport writes once the tick's jobs are done) before the
      // next turn's set-up, which has no I/O wait in it, runs.
      beforeNextTurn: nextTurnOfEventLoop,
      tools: run.tools,
      registry: this.options.registry,
      sessionId: run.sessionId,
      runId: run.runId,
      signal: run.cancellation,
      // The chat's setting as it is at each call, not as it was when the run started: turned back on, it holds from
      // the next call (also when another instance changed it: its summary is refreshed here).
      confirmToolCalls: () => this.sessions.get(run.sessionId)?.summary.confirmToolCalls ?? settings.confirmToolCalls,
      currentTool: (name) => this.options.tools().find((tool) => tool.name === name),
      ...this.policyFor(run.sessionId),
      ...(this.options.toolSlots === undefined ? {} : { toolSlots: this.options.toolSlots }),
      ...this.turnedOffFor(run.tools),
      onMessage: (message) => run.unsaved.push(message),
      ...(resume === undefined ? {} : { resume }),
      ...(settings.requester === undefined ? {} : { requester: settings.requester }),
      ...(settings.notes === undefined ? {} : { notes: settings.notes }),
      ...loopOptions(settings.options),
    });
  }

  /**
   * The limits the person saved in Settings (tool call timeout, call limit, decision timeout), for a run whose client
   * gives none of its own: the web app copies them into its runs' options, the terminal client and plain API clients
   * do not, and their runs got the built-in defaults (a 3 s timeout saved, a call ran 5 minutes). None while nothing
   * was saved: the defaults are the loop's own. Not kept with the run: a retried start sends the same options.
   */
  private async savedRunLimits(): Promise<Pick<RunOptions, 'maxToolCalls' | 'toolCallTimeoutMs' | 'decisionTimeoutMs'>> {
    const source = this.options.settings;
    if (source === undefined) return {};
    const { settings, saved } = await source.get();
    if (!saved) return {};
    return {
      maxToolCalls: settings.maxToolCalls,
      toolCallTimeoutMs: settings.toolCallTimeoutSeconds * 1000,
      decisionTimeoutMs: settings.decisionTimeoutSeconds === 'never' ? 'never' : settings.decisionTimeoutSeconds * 1000,
    };
  }

  /** The loop's `turnedOff`: the run's tools the settings turn off, as they are at each model turn. */
  private turnedOffFor(tools: readonly AnyTool[]): { turnedOff?: () => Promise<ReadonlySet<string>> } {
    const { settings } = this.options;
    if (settings === undefined) return {};
    return { turnedOff: async () => turnedOffTools((await settings.get()).settings.disabledTools, tools) };
  }

  private systemMessages(): ChatMessage[] {
    return this.options.systemPrompt ? [{ role: 'system', content: this.options.systemPrompt }] : [];
  }

  /** The chat's whole conversation as its model reads it: behind the system prompt. */
  private async conversation(sessionId: string): Promise<ChatMessage[]> {
    const messages = answerUnansweredCalls((await this.storedConversation(sessionId)).messages);
    messages.unshift(...this.systemMessages());
    return messages;
  }

  /**
   * A chat's stored conversation, a message whose record is damaged left out (`leftOut` names each): the chat goes on
   * without it rather than failing every next message. The results of a turn left out go with it (withoutStrayResults).
   */
  private async storedConversation(sessionId: string): Promise<{ messages: ChatMessage[]; leftOut: string[] }> {
    const leftOut: string[] = [];
    const messages = await this.store.loadMessages(sessionId, (record) => leftOut.push(record));
    return { messages: leftOut.length === 0 ? messages : withoutStrayResults(messages), leftOut };
  }

  /**
   * The end of a chat's conversation from its last message of the person's on (the whole chat when it has none): what
   * a run resumed after a restart needs of it, its last turn and its calls. Read a page at a time from the end.
   */
  private async lastRunMessages(sessionId: string): Promise<ChatMessage[]> {
    const pages: ChatMessage[][] = [];
    let before: number | undefined;
    for (;;) {
      const page = await this.store.loadMessagePage(sessionId, { ...(before === undefined ? {} : { before }), limit: MAX_DETAIL_MESSAGES, maxChars: MAX_DETAIL_CHARS });
      const person = page.messages.findLastIndex((message) => message.role === 'user');
      if (person >= 0) {
        pages.push(page.messages.slice(person));
        break;
      }
      pages.push(page.messages);
      if (page.start === 0 || page.messages.length === 0) break;
      before = page.start;
    }
    return pages.reverse().flat();
  }

  private newRun(runId: string, sessionId: string, tools: readonly AnyTool[]): Run {
    // Only a cluster reads when a run was claimed: a single instance keeps 0 there, a small integer held in the run,
    // where a performance.now() is a number boxed beside it (16 B each, for every run waiting on the person).
    const claimedAt = this.options.cluster === undefined ? 0 : performance.now();
    return {
      runId,
      sessionId,
      log: new EventLog(runId),
      cancellation: new Cancellation(),
      done: Promise.resolve(),
      tools,
      unsaved: [],
      suspended: false,
      requester: undefined,
      leftOutEvent: undefined,
      leftOutAt: 0,
      nextSeq: 1,
      queued: [],
      flushing: undefined,
      flushSoon: false,
      bytes: 0,
      counted: { events: 0, bytes: 0 },
      outputLimit: undefined,
      writeFailure: undefined,
      unwritten: undefined,
      fence: undefined,
      unasked: undefined,
      claimedAt,
      leaseFrom: claimedAt,
      remote: false,
      settings: undefined,
      lost: false,
      reading: false,
      readAgain: false,
      readFailed: false,
      readTo: 0,
      afterPause: false,
      pausedBecause: undefined,
      stopAsked: false,
      stopUnstored: false,
    };
  }

  private attachRun(session: Session, run: Run, generator: ReturnType<typeof runToolLoop>): void {
    session.activeRun = run;
    session.remoteRunId = null;
    this.runs.set(run.runId, run);
    run.done = this.drive(session, run, generator);
    this.notify({ type: 'session-changed', session: summary(session) });
    this.publish({ type: 'session', sessionId: session.summary.sessionId });
  }

  /** Appends to `log` the run's stored events after those it holds, a page at a time (REPLAY_PAGE), never all at once. */
  private async readStoredEvents(runId: string, log: EventLog): Promise<void> {
    for await (const page of this.storedPages(runId, log)) {
      appendInOrder(log, page);
      if (page.events.length === 0 || log.size === page.from) return;
    }
  }

  /**
   * The run's stored events after those `log` holds, a page (REPLAY_PAGE) at a time so a long run is never read at
   * once. Each page is read from where `log` ends when it is asked for: the caller appends one (appendInOrder) before
   * asking for the next, and stops when it has read enough. With `leftOut` (a run followed here), a damaged event is
   * left out, a status in its place, and named to it (see followedEventPage); without, it fails the read.
   */
  private async *storedPages(runId: string, log: EventLog, leftOut?: (record: string, seq: number) => void): AsyncGenerator<StoredPage> {
    for (;;) {
      const from = log.size;
      yield { from, events: leftOut === undefined ? await this.store.loadEvents(runId, from, REPLAY_PAGE) : await followedEventPage(this.store, runId, from, REPLAY_PAGE, leftOut) };
    }
  }

  /**
   * Resumes a run the store kept unfinished (see resumeRun), unless one of its records is damaged: it is then set
   * aside, said in the log, and ended as far as its records read, running nothing (setAsideRun), so the start and
   * every other run go on. Answers whether it was resumed. `paused`: the run paused here that is taken up.
   */
  private async resumeOrSetAside(stored: StoredRun, fence?: number, leaseFrom?: number, paused?: PausedRun): Promise<boolean> {
    const mirror = this.runs.get(stored.runId);
    let record = stored.unreadable ?? (mirror?.remote === true ? mirror.leftOutEvent : undefined);
    if (record === undefined) {
      try {
        return await this.resumeRun(stored, fence, paused, leaseFrom);
      } catch (error) {
        record = this.store.damagedRecord?.(error);
        if (record === undefined) throw error;
      }
    }
    this.log(`Run ${stored.runId} of chat ${stored.sessionId} was set aside: a stored record of it is damaged (${record}). Nothing more of it runs; its records were left as they are.`);
    await setAsideRun(this.store, stored, record, fence).catch((error: unknown) => {
      // Claimed by a takeover: it is given up (see takeOver), and set aside by whichever instance claims it next;
      // paused: it stays paused, and is set aside by the next try to take it up.
      if (fence !== undefined || paused !== undefined) throw error;
      this.log(`Could not record the end of run ${stored.runId}, set aside: ${messageOf(error)}; it is set aside again at the next start`);
    });
    // Followed here until now: its clients here are shown the end written for it.
    if (mirror?.remote === true && this.runs.get(stored.runId) === mirror) await this.readRemoteEvents(mirror);
    // Paused here: its clients, still on its log, are shown that end too, before the log closes.
    if (paused !== undefined) await this.readStoredEvents(stored.runId, paused.run.log).catch((error: unknown) => this.log(`Could not read the end of run ${stored.runId}, set aside: ${messageOf(error)}`));
    return false;
  }

  /**
   * Puts a run that was going when its process stopped back to work, or ends it. Answers whether it resumed. `fence`:
   * with a cluster, this instance's new token for the run (it has just claimed it).
   */
  private async resumeRun(stored: StoredRun, fence?: number, paused?: PausedRun, leaseFrom?: number): Promise<boolean> {
    const session = this.sessions.get(stored.sessionId);
    if (!session) {
      await this.store.endRun(stored.runId, 'error', Date.now(), fence);
      return false;
    }
    if (await this.followedByNewerRun(stored)) {
      // Over, though its row says otherwise: it is not resumed (the conversation's last turn is the newer run's), its
      // calls with no end end as interrupted or as decided, and the model reads a result for them (see conversation).
      const at = Date.now();
      const closed = await closeUnendedCalls(this.store, { runId: stored.runId, sessionId: stored.sessionId, answer: new Set(), error: RUN_END_NOT_STORED, at, ...(fence === undefined ? {} : { fence }) });
      await this.store.endRun(stored.runId, 'error', at, fence);
      if (closed !== undefined) this.log(closedCallsLine(stored.runId, closed));
      return false;
    }
    // Not the whole chat: the loop reads that from the store once the calls have ended, before the model's next turn.
    const messages = await this.lastRunMessages(stored.sessionId);
    const limits = await this.savedRunLimits();
    const records = new Map((await this.store.listRunToolCalls(stored.runId)).map((record) => [record.toolCallId, record]));
    // A run followed here while another instance held it, or paused here, keeps its log, so its followers go on
    // without a break.
    const mirror = this.runs.get(stored.runId);
    const log = paused?.run.log ?? (mirror?.remote ? mirror.log : new EventLog(stored.runId));
    await this.readStoredEvents(stored.runId, log);
    const run: Run = {
      ...this.newRun(stored.runId, session.summary.sessionId, this.options.tools()),
      log,
      nextSeq: log.size + 1,
      bytes: log.bytes,
      fence,
      ...(leaseFrom === undefined ? {} : { leaseFrom }),
      afterPause: paused !== undefined,
      // Still paused, as far as anyone can tell, until a write of it succeeds.
      pausedBecause: paused?.run.pausedBecause,
      stopAsked: paused?.run.stopAsked === true,
    };
    const last = log.size > 0 ? log.eventAt(log.size) : undefined;
    if (last?.type === 'run-end') {
      // Its end was stored and the run's row not marked ended: only that is left to record.
      await this.store.endRun(run.runId, last.reason, Date.now(), fence);
      this.runs.set(run.runId, run);
      log.close();
      this.forgetLater(run.runId);
      return false;
    }
    const unfinished = unfinishedCalls(messages);
    // Every call of its last turn had ended, and the model had written nothing of the next: the run goes on with that
    // turn (a model request runs nothing), so what the calls came to (a refusal and its reason) reaches the model.
    const betweenTurns = unfinished.length === 0 && messages.at(-1)?.role === 'tool' && partialTurn(log) === undefined;
    if (unfinished.length === 0 && !betweenTurns) {
      // It stopped while the model was answering: a model turn is not resumed half-way, the run ends and says why.
      this.runs.set(run.runId, run);
      // What the model had written of its answer is kept, as when its stream fails: the chat reads after the restart
      // as it read before.
      const partial = messages.at(-1)?.role === 'assistant' ? undefined : partialTurn(log);
      if (partial !== undefined) {
        run.unsaved.push(partial);
        await this.saveMessages(run);
      }
      // Stopped by a person meanwhile (see the stop applied below): it ends as any stopped run does.
      const stopped = stored.cancelRequested === true || paused?.run.stopAsked === true;
      const error = run.afterPause ? 'This run stopped when its data could not be stored; send the message again to continue.' : 'The server stopped while this run was going; send the message again to continue.';
      await this.record(run, stopped ? { type: 'run-end', runId: run.runId, reason: 'cancelled' } : { type: 'run-end', runId: run.runId, reason: 'error', error });
      await this.store.endRun(run.runId, stopped ? 'cancelled' : 'error', Date.now(), fence);
      log.close();
      this.forgetLater(run.runId);
      if (fence !== undefined) this.publish({ type: 'session', sessionId: stored.sessionId });
      return false;
    }
    // A decision recorded with no decision event was made (by a conditional write) while no process held the call:
    // its tool never started, so it is acted on now rather than counted as interrupted.
    const decisionEvents = new Set<string>();
    // Calls allowed but still in line for a place among the running calls when the server stopped: never started.
    const inLine = new Set<string>();
    for (let seq = 1; seq <= log.size; seq++) {
      const event = log.eventAt(seq);
      if (event?.type === 'tool-decision') decisionEvents.add(event.toolCallId);
      // Only since the last resume: a call in line then, resumed and started since, says nothing more about itself.
      if (event?.type === 'status' && event.resumed) inLine.clear();
      if (event?.type === 'status' && event.toolCallId !== undefined) {
        if (event.waitingForPlace) inLine.add(event.toolCallId);
        else inLine.delete(event.toolCallId);
      }
    }
    const restored: string[] = [];
    // Calls run in the model's order: one could have started only if every call before it had ended.
    let earlierEnded = true;
    // The waiting calls are put back in the registry from here on: should the run not be attached (its loop could not
    // be made), they go with it, or every later claim of the run failed on a call "already pending" and gave it up.
    try {
      const calls = unfinished.map((call): ResumedCall => {
        const record = records.get(call.id);
        const couldHaveStarted = earlierEnded;
        earlierEnded &&= record !== undefined && record.outcome !== null;
        if (!record) return { call, state: 'new' };
        if (record.outcome !== null && record.result !== null) {
          const ended = { call, state: 'ended' as const, outcome: record.outcome, result: record.result };
          return record.cut === null ? ended : { ...ended, cut: record.cut };
        }
        const decidedUnseen = record.decision !== null && !decisionEvents.has(call.id) && record.approvalId !== '';
        if (record.decision === null || decidedUnseen) {
          if (record.approvalId === '') return { call, state: 'ended', outcome: 'cancelled', result: toolResultText.notStartedBeforeRestart(call.name) };
          const ticket = this.options.registry.restore(approvalOf(record), decidedUnseen ? recordedOutcome(record) : undefined);
          if (!decidedUnseen) restored.push(record.approvalId);
          return { call, state: 'waiting', ticket };
        }
        const neverStarted = !couldHaveStarted || inLine.has(call.id);
        if (record.decision === 'allow' && neverStarted && record.approvalId !== '') {
          // Allowed out of order (a later call decided first), or still in line for a place: it never started, and
          // runs at its turn.
          const outcome = recordedOutcome(record);
          return { call, state: 'decided', ticket: this.options.registry.restore(approvalOf(record), outcome), outcome };
        }
        // Let through by a grant, a rule or confirmation off, and still in line: it is not run now without being asked.
        if (record.decision === 'allow' && neverStarted) return { call, state: 'ended', outcome: 'cancelled', result: toolResultText.notStartedBeforeRestart(call.name) };
        // Stopped by a pause, not by the server: its end could not be stored.
        if (record.decision === 'allow') return { call, state: 'ended', outcome: 'interrupted', result: paused === undefined ? toolResultText.interrupted(call.name) : toolResultText.endNotStored(call.name) };
        return { call, state: 'ended', ...refusalOf(call.name, record.decision, record) };
      });
      const executed = [...records.values()].filter((record) => record.outcome === 'executed');
      const executedCallIds = executed.map((record) => record.toolCallId);
      // An edited call ran as edited: that is what a call of the model's repeats, not the proposal the person changed.
      const executedEdits = new Map(executed.flatMap((record) => (record.editedArguments === null ? [] : [[record.toolCallId, record.editedArguments] as const])));
      const resume: ResumeState = { calls, toolCallsUsed: toolMessagesSinceLastUser(messages), executedCallIds, ...(executedEdits.size === 0 ? {} : { executedEdits }) };
      const loop = this.loop(run, { model: this.options.model(), messages, confirmToolCalls: session.summary.confirmToolCalls, options: { ...limits, ...definedOnly(stored.options) }, resume });
      // Stopped by a person while no instance held it (its owner had died), or while it was paused: it ends here as
      // cancelled, running nothing.
      run.stopAsked ||= paused?.run.stopAsked === true;
      if (stored.cancelRequested === true || run.stopAsked) run.cancellation.cancel();
      this.attachRun(session, run, loop);
    } catch (error) {
      if (this.sessions.get(stored.sessionId)?.activeRun !== run) this.options.registry.withdrawRun(stored.sessionId, stored.runId);
      throw error;
    }
    // A decision written between the read above and the restore was announced when no slot could take it: read again.
    if (fence !== undefined && restored.length > 0) void this.applyDecisionsFromStore(run, restored);
    return true;
  }

  /** Whether the chat of an unfinished run started a newer one after it: the run is over, its end not stored. */
  private async followedByNewerRun(stored: StoredRun): Promise<boolean> {
    const lastRunId = (await this.store.getSession(stored.sessionId))?.lastRunId ?? null;
    if (lastRunId === null || lastRunId === stored.runId) return false;
    // A run is made before it is named the chat's last: one stopped in between is the newer of the two.
    const last = await this.store.getRun(lastRunId);
    return last !== undefined && last.startedAt >= stored.startedAt;
  }

  /**
   * Drives a run's loop, storing each event before the loop goes on, until the run ends or parks. A parked run is
   * driven again, by a new call, once it can go on: meanwhile no loop and no frame of this method is held.
   */
  private async drive(session: Session, run: Run, generator: ReturnType<typeof runToolLoop>): Promise<void> {
    let reason = 'error';
    /** The run's last event: stored at once, shown only once the run has ended everywhere (store and memory). */
    let end: LoopEvent | undefined;
    let parked: ParkedRun | undefined;
    /** A person's decision that could not be stored: the loop is told, and puts the call back to waiting. */
    let notStored: DecisionNotStoredError | PolicyChangedError | undefined;
    try {
      for (;;) {
        // The loop waits here until the previous event is stored (text deltas excepted, see record): an allow is on
        // disk before its tool starts.
        const next: IteratorResult<LoopEvent, RunResult> = notStored === undefined ? await generator.next() : await generator.throw(notStored);
        notStored = undefined;
        if (next.done) {
          // Waiting on the person: held as data (its calls' tickets and conversation) until one of them settles.
          parked = next.value.parked;
          if (parked === undefined) await this.saveMessages(run);
          else run.log.compact();
          break;
        }
        const event = shownEvent(run, next.value);
        if (event.type === 'run-end') {
          reason = event.reason;
          end = event;
        }
        // The messages that came before the event go in its write (a tool's answer and its tool-end are one).
        // A decision on the call whose turn it is goes in one write with what follows at once: a refusal with the
        // call's end, an allow with its start (one synced commit, not two, before the tool runs). A person's refusal
        // is written on its own, so one that cannot be stored is known before anything follows it; a person's allow
        // that cannot be stored is known at its start, before the tool runs (see takeBackDecision).
        const personal = event.type === 'tool-decision' && event.approvalId !== '';
        try {
          await this.record(run, event, event !== end, session, endsAtOnce(next.value) && (!personal || event.decision === 'allow'));
        } catch (error) {
          if (error instanceof PolicyChangedError && this.takeBackUnasked(run, error)) {
            // Another instance revoked, removed or turned back on what let the call through: read again, judged again.
            await this.readPolicyAgain(run.sessionId);
            notStored = error;
            continue;
          }
          if (error instanceof RunStoppedError && this.takeBackRunning(run, error)) {
            // A person stopped the run on another instance and its message has not come: the run stops here as on
            // that message, and the loop, going on, starts nothing of a stopped run (the call ends cancelled).
            run.cancellation.cancel();
            continue;
          }
          notStored = this.takeBackDecision(run, error);
          if (notStored === undefined) throw error;
          this.log(`The decision on ${notStored.approvalId} could not be stored (${messageOf(error)}): the call waits again`);
          continue;
        }
        if (changesWaiting(event)) this.announceWaitingChange(session.summary.sessionId);
        // The call's running status is stored, and the loop starts the tool as it goes on.
        if (event.type === 'status' && event.toolCallId !== undefined && event.waitingForPlace !== true) await this.leaseHolds(run);
      }
      await this.flushed(run);
    } catch (error) {
      const message = messageOf(error);
      if (error instanceof FencedError) run.lost = true;
      // With several instances, a run whose write failed because the database could not be reached is given up and
      // resumed as after a crash (here or elsewhere) once the database answers, rather than left unfinished and owned.
      const handOver = !run.lost && this.options.cluster !== undefined && run.fence !== undefined && this.store.isUnavailable?.(error) === true;
      if (handOver) run.lost = true;
      // On a single instance, such a run is paused, not ended: its end could not be stored either, and a run said to
      // have stopped, with its calls cancelled, while the store keeps it going would come back at the next start.
      const pause = !run.lost && !run.suspended && this.options.cluster === undefined && this.store.isUnavailable?.(error) === true;
      // Paused first: its calls leave the registry undecided, not cancelled as by the abandon below.
      if (pause) this.pause(run, message);
      // A run that parked and then failed to store what came before ends (or pauses) like any other.
      parked?.abandon();
      parked = undefined;
      if (run.lost) {
        // Another instance holds the run now: this one writes nothing more, and its clients follow the new owner.
        run.suspended = true;
        if (handOver) {
          this.log(`Run ${run.runId} could not be stored (${message}): it is given up, to be resumed once the database answers`);
          this.releaseWhenReachable(run.runId, run.fence!, run);
        } else {
          this.log(`Run ${run.runId} continues on another instance: ${message}`);
        }
      } else if (!pause) {
        this.log(`Run ${run.runId} stopped: ${message}`);
      }
      const ends = !run.lost && !pause;
      // A refusal held for the next write is still stored when the store can take it: the call was refused.
      if (ends) await this.flushed(run).catch(() => undefined);
      run.cancellation.cancel();
      // Lets the loop end its waits and tools; its last events are no longer stored.
      await generator.return({ runId: run.runId, reason: 'error', error: message, messages: [] }).catch(() => undefined);
      // Calls put back at a restart that the loop never came to wait on: no longer waiting, nor decidable.
      if (ends) this.options.registry.cancelRun(run.sessionId, run.runId);
      if (ends) run.log.append({ type: 'run-end', runId: run.runId, reason: 'error', error: `The run stopped: ${message}` });
    } finally {
      if (parked === undefined) await this.settleEnd(session, run, reason, end);
    }
    // Returned, not awaited: this call ends here, and the run's `done` follows the call that goes on.
    if (parked !== undefined) return this.driveOn(session, run, parked);
  }

  /** Drives a parked run again once one of its calls settles (decided, timed out, or cancelled with the run). */
  private driveOn(session: Session, run: Run, parked: ParkedRun): Promise<void> {
    return parked.wake(run.cancellation).then(() => this.drive(session, run, this.loop(run, { ...run.settings!, messages: [], resume: parked })));
  }

  /** What follows a run's end, however it ended: its record, its clients told, its log closed. */
  private async settleEnd(session: Session, run: Run, reason: string, end: LoopEvent | undefined): Promise<void> {
    // An allow whose decision the loop did not report (the run stopped first) is answered as given; on a paused run,
    // as not stored: nothing of it was, and the call waits again once the run is taken up.
    const paused = this.paused.get(run.runId)?.run === run ? this.paused.get(run.runId) : undefined;
    const notReported = paused === undefined ? undefined : { stored: false as const, error: paused.error };
    for (const answer of this.reporting.values()) if (answer.sessionId === run.sessionId) answer.settle(notReported);
    // Stopped by a failure, with its run-end (and perhaps its calls' ends) not stored: written now if the store takes
    // them, while the run is still the chat's (a new run of the chat would write them too).
    const failed = paused === undefined && !run.suspended && !run.lost && (end === undefined || run.writeFailure !== undefined);
    if (failed && this.sessions.get(session.summary.sessionId) === session) await this.closeFailedRun(run);
    // A run suspended by a shutdown is still going as far as anyone can tell (the next start or another instance
    // resumes it): reads made while the server stops keep saying so.
    if (!run.suspended || run.lost) session.activeRun = undefined;
    const now = Date.now();
    if (run.lost) {
      this.followElsewhere(session, run);
    } else if (paused !== undefined) {
      // Paused: nothing of its end is stored or shown, and its followers stay on its log until it is taken up.
      this.notify({ type: 'session-changed', session: summary(session) });
    } else {
      if (!run.suspended) this.storeRetryMs.delete(run.runId);
      if (!run.suspended && this.sessions.get(session.summary.sessionId) === session) {
        session.summary = { ...session.summary, updatedAt: now };
        try {
          await this.store.endRun(run.runId, reason, now, run.fence);
          await this.store.updateSession(session.summary.sessionId, { updatedAt: now });
        } catch (error) {
          this.log(`Could not record the end of run ${run.runId}: ${messageOf(error)}`);
        }
        this.notify({ type: 'session-changed', session: summary(session) });
        this.publish({ type: 'session', sessionId: session.summary.sessionId });
      }
      if (end !== undefined && run.log.size === run.nextSeq - 2) run.log.append(end);
      run.log.close();
      this.forgetLater(run.runId);
    }
  }

  /** Writes the end of a run that stopped on a failure, as closeEarlierRun would later: only logged when it fails. */
  private async closeFailedRun(run: Run): Promise<void> {
    const shown = run.log.eventAt(run.log.size);
    const error = shown?.type === 'run-end' && shown.error !== undefined ? shown.error : RUN_END_NOT_STORED;
    try {
      const answer = new Set(unfinishedCalls(await this.lastRunMessages(run.sessionId)).map((call) => call.id));
      const closed = await closeUnendedCalls(this.store, { runId: run.runId, sessionId: run.sessionId, answer, error, at: Date.now(), ...(run.fence === undefined ? {} : { fence: run.fence }) });
      if (closed !== undefined && closed.calls.length > 0) this.log(closedCallsLine(run.runId, closed));
    } catch (failure) {
      // Not "at the next start": the run is unfinished in the store, so a start takes it up as stored.
      this.log(`Could not record how the calls of run ${run.runId} ended: ${messageOf(failure)}; recorded when the chat's next run starts, unless Airlock restarts first: the run is then taken up as stored`);
    }
  }

  private async saveMessages(run: Run): Promise<void> {
    if (run.unsaved.length === 0 || run.suspended) return;
    const by = run.fence === undefined ? { runId: run.runId } : { runId: run.runId, fence: run.fence };
    for (const message of run.unsaved.splice(0)) await this.store.appendMessage(run.sessionId, message, Date.now(), by);
  }

  /**
   * Stores an event with what it changes in the ledger, then lets clients see it. Text deltas are queued and
   * written in bursts without holding the loop: a write of what is queued is set for the next turn of the event loop
   * (one write for all that came meanwhile, or while the previous burst was written), and a delta that comes while
   * the one before it is still queued is joined to it (see joinDelta). Every other event waits for everything before
   * it, and for itself, to be stored. A `held` event is queued without a write of its own: it goes in the next
   * event's write (or the run's last), and is shown with it; only an event the loop follows at once is held
   * (`endsAtOnce`). A run that reaches what a running run keeps is stopped (see keepsOutput).
   */
  private async record(run: Run, event: LoopEvent, show = true, session?: Session, held = false): Promise<void> {
    if (run.suspended) return;
    const delta = event.type === 'text-delta' || event.type === 'reasoning-delta';
    // Messages ride only with an event the loop waits for; before a delta they are written (and waited for) first.
    if (session !== undefined && delta && run.unsaved.length > 0) await this.saveMessages(run);
    if (delta && show && joinDelta(run, event)) {
      this.keepsOutput(run);
      this.flushSoon(run);
      if (run.writeFailure !== undefined) throw run.writeFailure;
      return;
    }
    const messages = session !== undefined && run.unsaved.length > 0 ? run.unsaved.splice(0) : undefined;
    const at = Date.now();
    const ledger = this.ledgerChange(run, event, at);
    const unasked = this.unaskedCheck(run, event);
    const grant = this.grantWithAllow(run, event);
    const input: AppendEventInput = {
      runId: run.runId,
      sessionId: run.sessionId,
      seq: run.nextSeq++,
      event,
      at,
      ...(ledger === undefined ? {} : { ledger }),
      ...(messages === undefined ? {} : { messages }),
      ...(run.fence === undefined ? {} : { fence: run.fence }),
      ...(unasked === undefined ? {} : { unasked }),
      ...(grant === undefined ? {} : { grant: { ...grant, scope: 'session' as const } }),
    };
    run.queued.push({ input, event, show });
    run.bytes += eventSize(event);
    this.keepsOutput(run);
    if (held) return;
    if (!delta) {
      this.startFlush(run);
      await this.flushed(run);
    } else {
      this.flushSoon(run);
      if (run.writeFailure !== undefined) throw run.writeFailure;
    }
  }

  /**
   * Sets a write of the queued deltas for the next turn of the event loop, unless one is set or going (it takes them).
   * Not a timer: a delta that nothing follows is written once the jobs and input of this turn are done, and the
   * deltas a model's chunks bring in one read of its stream are one write and one event, not one each.
   */
  private flushSoon(run: Run): void {
    if (run.flushing !== undefined || run.flushSoon) return;
    run.flushSoon = true;
    setImmediate(() => {
      run.flushSoon = false;
      this.startFlush(run);
    });
  }

  /**
   * Stops a run once its events reach what a running run keeps (maxLiveRunEvents, maxLiveRunBytes): it is cancelled,
   * so its model stream and its tools stop, and its run-end says why (see drive). Only the events that end it follow.
   */
  private keepsOutput(run: Run): void {
    if (run.outputLimit !== undefined) return;
    const events = run.nextSeq - 1;
    this.liveEvents += events - run.counted.events;
    this.liveBytes += run.bytes - run.counted.bytes;
    run.counted = { events, bytes: run.bytes };
    if (events >= this.maxLiveRunEvents || run.bytes >= this.maxLiveRunBytes) {
      run.outputLimit = outputLimitError(events >= this.maxLiveRunEvents ? `${this.maxLiveRunEvents.toLocaleString('en-US')} events` : `${mebibytes(this.maxLiveRunBytes)} of events`);
      this.log(`Run ${run.runId} stopped: it reached ${events} events (${run.bytes} bytes), what a running run keeps`);
      this.uncount(run);
      run.cancellation.cancel();
      return;
    }
    if (this.liveEvents >= this.maxLiveEvents || this.liveBytes >= this.maxLiveBytes) this.keepsSharedOutput();
  }

  /**
   * Counted again over the running runs, from what each holds (a run that ended by a way that did not take it out of
   * the count leaves it then); if they still hold the events or bytes kept over all of them, the largest run of the
   * connection whose runs hold the most together is stopped (a run with no connection counts alone): a connection
   * flooding over several runs has its own stopped, not another's run larger than each of them. Only here, once over a
   * bound: the run that passed it is the largest as often as not.
   */
  private keepsSharedOutput(): void {
    let events = 0;
    let bytes = 0;
    const overEvents = this.liveEvents >= this.maxLiveEvents;
    const measure = (counted: { events: number; bytes: number }) => (overEvents ? counted.events : counted.bytes);
    const holders = new Map<string | Run, { held: number; largest: Run }>();
    for (const run of this.runs.values()) {
      if (run.log.isClosed || run.remote || run.outputLimit !== undefined) {
        run.counted = { events: 0, bytes: 0 };
        continue;
      }
      events += run.counted.events;
      bytes += run.counted.bytes;
      const key = run.requester ?? run;
      const holder = holders.get(key);
      if (holder === undefined) holders.set(key, { held: measure(run.counted), largest: run });
      else {
        holder.held += measure(run.counted);
        if (measure(run.counted) > measure(holder.largest.counted)) holder.largest = run;
      }
    }
    this.liveEvents = events;
    this.liveBytes = bytes;
    let most: { held: number; largest: Run } | undefined;
    for (const holder of holders.values()) if (most === undefined || holder.held > most.held) most = holder;
    if (most === undefined || (events < this.maxLiveEvents && bytes < this.maxLiveBytes)) return;
    const largest = most.largest;
    largest.outputLimit = sharedOutputLimitError(events >= this.maxLiveEvents ? `${this.maxLiveEvents.toLocaleString('en-US')} events` : `${mebibytes(this.maxLiveBytes)} of events`);
    const whose = largest.requester === undefined ? 'it held the most' : `it was the largest run of connection ${largest.requester}, whose runs held the most together (${most.held} ${overEvents ? 'events' : 'bytes'})`;
    this.log(`Run ${largest.runId} stopped: the running runs reached ${events} events (${bytes} bytes), what they keep together, and ${whose}: ${largest.counted.events} events, ${largest.counted.bytes} bytes`);
    this.uncount(largest);
    largest.cancellation.cancel();
  }

  /** Takes a run out of the count over all running runs: it ended, or is stopped. */
  private uncount(run: Run): void {
    this.liveEvents -= run.counted.events;
    this.liveBytes -= run.counted.bytes;
    run.counted = { events: 0, bytes: 0 };
  }

  /** The chat's grant asked for with the person's allow this event carries, to be written with it; see confirm. */
  private grantWithAllow(run: Run, event: LoopEvent): VersionedGrant | undefined {
    if (event.type !== 'tool-decision' || event.approvalId === '' || event.decision !== 'allow') return undefined;
    const grant = this.grantsWithAllow.get(event.approvalId);
    if (grant === undefined || grant.sessionId !== run.sessionId) return undefined;
    this.grantChanged(grant.grantId);
    this.savingGrants.add(grant.grantId);
    return grant;
  }

  /** A grant written with its allow takes effect here, before the loop goes on to its next call. */
  private grantStored(input: AppendEventInput): void {
    const grant = input.grant;
    if (grant === undefined) return;
    if (input.event.type === 'tool-decision') this.grantsWithAllow.delete(input.event.approvalId);
    this.savingGrants.delete(grant.grantId);
    this.registry.restoreGrant(grant);
    this.publish({ type: 'grant', sessionId: grant.sessionId, grantId: grant.grantId, revoked: false });
  }

  /**
   * After a person's decision failed to be written — on its own, or (an allow) in one write with its call's start,
   * before the tool ran — on a single instance: forgets the write, so the run goes on, and answers what to tell the
   * loop, which puts the call back to waiting. Undefined when the run cannot go on (with a cluster the decision was
   * claimed in the store first; a write of more than the decision and its call's start lost more).
   */
  private takeBackDecision(run: Run, error: unknown): DecisionNotStoredError | undefined {
    const burst = run.unwritten;
    if (this.options.cluster !== undefined || run.writeFailure !== error || burst === undefined || burst.length > 2 || run.queued.length > 0) return undefined;
    const [decided, start] = burst;
    const event = decided?.event;
    if (event?.type !== 'tool-decision' || event.approvalId === '' || burst.some((queued) => queued.input.messages !== undefined)) return undefined;
    // Only a person's allow or deny is put back to waiting (see ApprovalRegistry.reopen). A cancel (a stop) or a
    // timeout not stored stops the run as the failed write does: paused on a single instance, then taken up from the
    // store and stopped or timed out again, where ending it here would leave the call waiting in the store.
    if (event.source !== 'user' || (event.decision !== 'allow' && event.decision !== 'deny')) return undefined;
    if (start !== undefined && !(start.event.type === 'status' && start.event.toolCallId === event.toolCallId && event.decision === 'allow')) return undefined;
    if (burst.at(-1)!.input.seq !== run.nextSeq - 1) return undefined;
    run.nextSeq = decided!.input.seq;
    run.writeFailure = undefined;
    run.unwritten = undefined;
    return new DecisionNotStoredError(event.approvalId, messageOf(error));
  }

  /**
   * With a shared store, what the write of a call let through unasked must find still holding there: set at its
   * decision, checked with that write and with its running status (the tool starts only once that is written).
   */
  private unaskedCheck(run: Run, event: LoopEvent): UnaskedAllow | undefined {
    if (this.options.cluster === undefined || this.store.policyVersion === undefined) return undefined;
    if (event.type === 'tool-decision' && event.approvalId === '' && event.decision === 'allow') {
      run.unasked = {
        toolCallId: event.toolCallId,
        policyVersion: this.knownPolicyVersion,
        ...(event.source === 'grant' && event.grantId !== undefined ? { grantId: event.grantId } : {}),
        ...(event.source === 'confirmation-off' ? { confirmationOff: true } : {}),
      };
      return run.unasked;
    }
    if (event.type !== 'status' || event.toolCallId === undefined || run.unasked?.toolCallId !== event.toolCallId) return undefined;
    const unasked = run.unasked;
    if (event.waitingForPlace !== true) run.unasked = undefined;
    return unasked;
  }

  /**
   * After the write of a call let through unasked was refused because what let it through changed in the store
   * (PolicyChangedError): forgets the write — the call's start, its decision and its status, nothing of which was
   * stored or shown — and answers true, so the loop judges the call again. False when the write held more than that
   * call's own start onwards (its start was written earlier: it waited for a place), which cannot be taken back.
   */
  private takeBackUnasked(run: Run, error: PolicyChangedError): boolean {
    const burst = run.unwritten;
    if (run.writeFailure !== error || burst === undefined || run.queued.length > 0) return false;
    const start = burst[0]!.event;
    if (start.type !== 'tool-start' || start.toolCallId !== error.toolCallId || burst.at(-1)!.input.seq !== run.nextSeq - 1) return false;
    run.unsaved.unshift(...burst.flatMap((queued) => queued.input.messages ?? []));
    run.nextSeq = burst[0]!.input.seq;
    run.writeFailure = undefined;
    run.unwritten = undefined;
    run.unasked = undefined;
    return true;
  }

  /**
   * After the write that marks a call running was refused because the run's Stop is stored (RunStoppedError): forgets
   * that status, neither stored nor shown, and puts back what was written with it (the call's start and decision) to
   * go with the next write, the call's end, and answers true. What let a call through unasked is not checked again
   * then: the call does not run. False when the refused write was not that one.
   */
  private takeBackRunning(run: Run, error: RunStoppedError): boolean {
    const burst = run.unwritten;
    if (run.writeFailure !== error || burst === undefined || run.queued.length > 0) return false;
    const status = burst.at(-1)!.input;
    if (status.ledger?.kind !== 'running' || status.ledger.toolCallId !== error.toolCallId || status.seq !== run.nextSeq - 1) return false;
    run.unsaved.unshift(...(status.messages ?? []));
    run.queued.push(...burst.slice(0, -1).map(({ input: { unasked: _checked, ...input }, ...queued }) => ({ ...queued, input })));
    run.nextSeq = status.seq;
    run.writeFailure = undefined;
    run.unwritten = undefined;
    run.unasked = undefined;
    return true;
  }

  /**
   * Reads again, from the shared store, what lets calls run unasked here: the rules (with the store's policy version
   * they are read at), the grants, and the chat's settings.
   */
  private async readPolicyAgain(sessionId: string): Promise<void> {
    const version = await this.store.policyVersion!();
    await this.options.rules?.reload?.();
    await this.resyncGrants();
    await this.refreshSession(sessionId, true);
    this.knownPolicyVersion = version;
  }

  private startFlush(run: Run): void {
    if (run.flushing !== undefined) return;
    const flushing: Promise<void> = this.flush(run).finally(() => {
      if (run.flushing === flushing) run.flushing = undefined;
    });
    run.flushing = flushing;
  }

  /** Writes what is queued, burst by burst, until nothing is. Never rejects: a failure is kept on the run. */
  private async flush(run: Run): Promise<void> {
    try {
      while (run.queued.length > 0 && run.writeFailure === undefined) {
        const burst = run.queued.splice(0);
        for (const queued of burst) joinPieces(queued);
        if (run.suspended) continue;
        try {
          if (burst.length === 1) await this.store.appendEvent(burst[0]!.input);
          else await this.store.appendEvents(burst.map((queued) => queued.input));
        } catch (error) {
          run.unwritten = burst;
          for (const queued of burst) if (queued.input.grant !== undefined) this.savingGrants.delete(queued.input.grant.grantId);
          // Refused for a stored Stop, a decision goes with the call's end (see takeBackRunning): reported then.
          if (!(error instanceof RunStoppedError)) for (const queued of burst) this.reportStored(queued.event, error);
          throw error;
        }
        if (run.afterPause) {
          run.afterPause = false;
          run.pausedBecause = undefined;
          this.storeRetryMs.delete(run.runId);
          this.log(`Run ${run.runId} is taken up again: its data can be stored again`);
          const session = this.sessions.get(run.sessionId);
          if (session?.activeRun === run) this.notify({ type: 'session-changed', session: summary(session) });
        }
        for (const queued of burst) {
          this.grantStored(queued.input);
          this.reportStored(queued.event);
          if (queued.show) run.log.append(queued.event);
          this.storeHoldSinceQueued(run, queued.input.ledger);
        }
      }
    } catch (error) {
      run.writeFailure = error;
    }
  }

  /**
   * A call held to exact grants while its start was being written (the rules changed, or could not be read, as it was
   * put up): the start went in without the hold, which found no row to mark then. It is marked now, at once, so no
   * restart or other instance reads the call as one any grant of its tool releases; should this write fail, the
   * judge's own, tried again until the store keeps it, follows.
   */
  private storeHoldSinceQueued(run: Run, ledger: LedgerChange | undefined): void {
    if (ledger?.kind !== 'start' || ledger.exactGrantsOnly === true || ledger.approvalId === '') return;
    const held = this.options.registry.listPending(run.sessionId).find((call) => call.approvalId === ledger.approvalId && call.exactGrantsOnly === true);
    if (held === undefined) return;
    this.store.requireExactGrants(run.runId, ledger.toolCallId, held.askedBecause).catch(() => undefined);
  }

  /** Waits until every queued event is stored; throws what stopped a write. */
  private async flushed(run: Run): Promise<void> {
    while (run.writeFailure === undefined && (run.flushing !== undefined || run.queued.length > 0)) {
      this.startFlush(run);
      await run.flushing;
    }
    if (run.writeFailure !== undefined) throw run.writeFailure;
  }

  private ledgerChange(run: Run, event: LoopEvent, at: number): LedgerChange | undefined {
    switch (event.type) {
      case 'tool-start': {
        const tool = run.tools.find((candidate) => candidate.name === event.toolName);
        return {
          kind: 'start',
          toolCallId: event.toolCallId,
          toolName: event.toolName,
          arguments: event.arguments,
          approvalId: event.approvalId,
          requestedAt: at,
          expiresAt: event.expiresAt ?? null,
          executesCode: tool === undefined ? true : grantsNeedExactArguments(tool),
          toolVersion: tool === undefined ? '' : toolVersion(tool),
          ...(event.tool === undefined ? {} : { tool: event.tool }),
          ...(event.exactGrantsOnly === true ? { exactGrantsOnly: true } : {}),
          ...(event.exactGrantsOnly === true && event.askedBecause !== undefined ? { askedBecause: event.askedBecause } : {}),
        };
      }
      case 'tool-decision': {
        const by = event.approvalId === '' ? undefined : this.deciders.get(event.approvalId);
        this.deciders.delete(event.approvalId);
        return {
          kind: 'decision',
          toolCallId: event.toolCallId,
          decision: event.decision,
          source: event.source,
          ...(event.reason === undefined ? {} : { reason: event.reason }),
          ...(event.grantId === undefined ? {} : { decidedByGrant: event.grantId }),
          ...(event.ruleId === undefined ? {} : { decidedByRule: event.ruleId }),
          ...(event.rule === undefined ? {} : { decidedByRuleText: event.rule }),
          decidedAt: at,
          ...(by === undefined ? {} : { by }),
          ...(event.editedArguments === undefined ? {} : { editedArguments: event.editedArguments }),
        };
      }
      case 'tool-end':
        return {
          kind: 'end',
          toolCallId: event.toolCallId,
          outcome: event.outcome,
          result: event.result,
          ...(event.cut === undefined ? {} : { cut: event.cut }),
          endedAt: at,
          // When it began to run; none for a call that never did (a place taken, then the last checks refused it),
          // and the start already recorded kept for one interrupted by a restart.
          ...(event.outcome === 'interrupted' && event.startedAt === undefined ? {} : { startedAt: event.startedAt ?? null }),
        };
      case 'status':
        // A call that waited for a place has it now and starts: said in the ledger before it runs.
        return event.toolCallId === undefined || event.waitingForPlace ? undefined : { kind: 'running', toolCallId: event.toolCallId, startedAt: at };
      case 'run-start':
      case 'text-delta':
      case 'reasoning-delta':
      case 'run-end':
        return undefined;
    }
  }

  /** A finished run stays in memory for `finishedRunTtlMs` at most, and while the events and bytes kept over all runs allow. */
  private forgetLater(runId: string): void {
    const run = this.runs.get(runId);
    if (run !== undefined) this.uncount(run);
    if (run?.log.isClosed) this.keepFinished(run);
    const timer = setTimeout(() => this.forgetFinished(runId), this.finishedRunTtlMs);
    timer.unref?.();
  }

  /**
   * Counts a finished run among those kept (again, as the most recently used), then lets go of the least recently used
   * until the events kept fit `maxKeptFinishedEvents` and their bytes `maxKeptFinishedBytes`: one larger than either
   * is not kept at all, and the others stay. Whoever follows a run let go of goes on with its log; a later attach
   * reads it from the store a page at a time.
   */
  private keepFinished(run: Run): void {
    this.forgetKept(run.runId);
    const kept = { events: run.log.size, bytes: run.log.bytes };
    if (kept.events > this.maxKeptFinishedEvents || kept.bytes > this.maxKeptFinishedBytes) {
      this.forgetFinished(run.runId);
      return;
    }
    this.keptFinished.set(run.runId, kept);
    this.keptFinishedEvents += kept.events;
    this.keptFinishedBytes += kept.bytes;
    for (const oldest of this.keptFinished.keys()) {
      if (this.keptFinishedEvents <= this.maxKeptFinishedEvents && this.keptFinishedBytes <= this.maxKeptFinishedBytes) break;
      this.forgetFinished(oldest);
    }
  }

  private forgetKept(runId: string): void {
    const kept = this.keptFinished.get(runId);
    if (kept === undefined) return;
    this.keptFinished.delete(runId);
    this.keptFinishedEvents -= kept.events;
    this.keptFinishedBytes -= kept.bytes;
  }

  private forgetFinished(runId: string): void {
    this.forgetKept(runId);
    const run = this.runs.get(runId);
    if (run && run.log.isClosed) this.runs.delete(runId);
  }

  /**
   * A turn that puts several calls up at once (or a cancel that ends them) is one change, not one per call: told at
   * the end of this turn of the event loop, or before any other change, so the order of changes holds.
   */
  private announceWaitingChange(sessionId: string): void {
    if (this.waitingChanges.size === 0) setImmediate(() => this.tellWaitingChanges());
    this.waitingChanges.add(sessionId);
  }

  /**
   * A call started or stopped waiting (a decision claimed, a stop stored) in a run this instance does not hold, as a
   * message sent once the write committed says (so a read of the list then shows it): its watchers are told whether
   * or not the run is followed here, and even while its owner is dead. The owner tells its own from its events.
   */
  private announceWaitingElsewhere(sessionId: string, run: Run | undefined): void {
    if (run === undefined || run.remote) this.announceWaitingChange(sessionId);
  }

  /**
   * As announceWaitingElsewhere, for a message that may not name the session: one from an instance of an older
   * version (a rolling upgrade). Its session is then the run's, read from the store when the run is not known here.
   */
  private announceWaitingOfRun(runId: string, sessionId: string | undefined, run: Run | undefined): void {
    if (run !== undefined && !run.remote) return;
    const known = sessionId ?? run?.sessionId;
    if (known !== undefined) {
      this.announceWaitingChange(known);
      return;
    }
    this.store.getRun(runId).then(
      (stored) => {
        if (stored !== undefined) this.announceWaitingChange(stored.sessionId);
      },
      (error: unknown) => this.log(`Could not read the chat of run ${runId} to tell its watchers: ${messageOf(error)}`),
    );
  }

  private tellWaitingChanges(): void {
    if (this.waitingChanges.size === 0) return;
    const sessions = [...this.waitingChanges];
    this.waitingChanges.clear();
    for (const sessionId of sessions) this.notify({ type: 'waiting-changed', sessionId });
  }

  private notify(change: SessionChange): void {
    if (change.type !== 'waiting-changed') this.tellWaitingChanges();
    for (const watcher of this.watchers) {
      try {
        watcher(change);
      } catch {
        this.watchers.delete(watcher);
      }
    }
  }
}

/**
 * What a person is told of a stop that an instance of a cluster made in memory but could not store, the database out of
 * reach: it holds while this instance holds the run, and the run's lease (renewed through that same database) bounds
 * how long that is.
 */
function stopHeldHereText(head: string, leaseMs: number): string {
  const lease = `${Number((leaseMs / 1000).toFixed(1))} s`;
  return (
    `${head}: it holds while this instance holds the run, and for good once stored. This instance stores it as soon as it reaches the database again; ` +
    'stored while this instance still holds the run, whichever instance takes the run over then ends it, running nothing more. ' +
    `If the database stays out of reach until this instance's lease on the run runs out (within ${lease}), another instance may take the run over without the stop: ` +
    'its calls wait for a decision again, and one allowed there runs (stop it again there), until the stop is stored and stops the run wherever it goes on. ' +
    'If this instance stops before it reaches the database, the stop is lost.'
  );
}

function newSummary(sessionId: string, firstMessage: string, now: number): StoredSessionSummary {
  return { sessionId, title: titleFrom(firstMessage), createdAt: now, updatedAt: now, confirmToolCalls: true, lastRunId: null };
}

/** The first line of the first message, trimmed; Markdown code marks dropped. */
function titleFrom(message: string): string {
  const firstLine = message.trim().split('\n', 1)[0] ?? '';
  const plain = firstLine.replace(/`+/g, '').replace(/\s+/g, ' ').trim();
  return plain.length > 60 ? `${plain.slice(0, 59)}…` : plain || 'Untitled chat';
}

/**
 * Appends a page's events to `log`, in order only: the log of a run followed here may have grown while the page was
 * read.
 */
/** An event of the run's loop as it is stored and shown. */
function shownEvent(run: Run, event: LoopEvent): LoopEvent {
  if (run.afterPause && event.type === 'status' && event.resumed === true) return { ...event, text: 'Taken up again: its data can be stored again' };
  // Stopped for the output it made (see keepsOutput): its end says so, not that it was cancelled.
  if (event.type === 'run-end' && run.outputLimit !== undefined) return { type: 'run-end', runId: event.runId, reason: 'error', error: run.outputLimit };
  return event;
}

/**
 * Joins a text or reasoning delta to the one queued last, when it is of the same kind, not yet being written and
 * short enough (MAX_JOINED_DELTA_CHARS): one event, one row, shown when it would have been. Answers whether it did.
 */
function joinDelta(run: Run, event: LoopEventOf<'text-delta' | 'reasoning-delta'>): boolean {
  const last = run.queued.at(-1);
  const queued = last?.event;
  if (last === undefined || !last.show || (queued?.type !== 'text-delta' && queued?.type !== 'reasoning-delta') || queued.type !== event.type || last.input.messages !== undefined) return false;
  const chars = (last.chars ?? queued.text.length) + event.text.length;
  if (chars > MAX_JOINED_DELTA_CHARS) return false;
  (last.pieces ??= [queued.text]).push(event.text);
  last.chars = chars;
  run.bytes += event.text.length;
  return true;
}

/** Makes a joined delta (see joinDelta) the one event it stands for, its text one flat string. */
function joinPieces(queued: Queued): void {
  const { pieces, event } = queued;
  if (pieces === undefined || (event.type !== 'text-delta' && event.type !== 'reasoning-delta')) return;
  const joined: LoopEvent = { type: event.type, text: pieces.join('') };
  queued.event = joined;
  queued.input = { ...queued.input, event: joined };
  queued.pieces = undefined;
  queued.chars = undefined;
}

/** What a run stopped for its output is told, `limit` naming what it reached. */
export function outputLimitError(limit: string): string {
  return `This run was stopped: it produced more output than the server keeps for one run (${limit}). What it produced until then is kept; send a message to go on.`;
}

/** Whether the last event of a followed run's log is a status in place of a stored event left out as damaged. */
function endsLeftOut(run: Run): boolean {
  return run.leftOutAt > 0 && run.leftOutAt === run.log.size;
}

/** The run-end error of the run stopped as the largest of the connection holding the most once the running runs together reached `limit`. */
export function sharedOutputLimitError(limit: string): string {
  return `This run was stopped: the runs going on the server together produced more output than it keeps for all of them (${limit}), and this run was the largest of the connection whose runs held the most. What it produced until then is kept; send a message to go on.`;
}

function mebibytes(bytes: number): string {
  const mib = 1024 * 1024;
  return bytes % mib === 0 ? `${bytes / mib} MiB` : `${bytes.toLocaleString('en-US')} bytes`;
}

function appendInOrder(log: EventLog, { from, events }: StoredPage): void {
  events.forEach((event, index) => {
    if (from + index === log.size) log.append(event);
  });
}

/** A call started waiting for a decision, or stopped. */
function changesWaiting(event: LoopEvent): boolean {
  return (event.type === 'tool-start' && event.awaitingConfirmation) || (event.type === 'tool-decision' && event.approvalId !== '');
}

/**
 * The answer a run's log shows the model writing when it stopped: the text and reasoning after the last event of a
 * call (or the run's start). Undefined when there is none.
 */
function partialTurn(log: EventLog): ChatMessage | undefined {
  let from = log.size + 1;
  while (from > 1 && !['run-start', 'tool-start', 'tool-decision', 'tool-end'].includes(log.eventAt(from - 1)!.type)) from--;
  let content = '';
  let reasoning = '';
  for (let seq = from; seq <= log.size; seq++) {
    const event = log.eventAt(seq)!;
    if (event.type === 'text-delta') content += event.text;
    if (event.type === 'reasoning-delta') reasoning += event.text;
  }
  if (content === '' && reasoning === '') return undefined;
  return reasoning === '' ? { role: 'assistant', content } : { role: 'assistant', content, reasoning };
}

/** Closes the log of a run whose chat was deleted, ending it for whoever follows it unless its own end is there. */
function endDeleted(run: Run): void {
  if (run.log.eventAt(run.log.size)?.type !== 'run-end') run.log.append({ type: 'run-end', runId: run.runId, reason: 'cancelled', error: 'The chat was deleted.' });
  run.log.close();
}

function summary(session: Session): SessionSummary {
  const shown = { ...session.summary, activeRunId: session.activeRun?.runId ?? session.remoteRunId };
  const paused = session.activeRun?.pausedBecause;
  return paused === undefined ? shown : { ...shown, paused };
}

function loopOptions(options: RunOptions) {
  return {
    ...(options.enabledTools === undefined ? {} : { enabledTools: options.enabledTools }),
    ...(options.maxToolCalls === undefined ? {} : { maxToolCalls: options.maxToolCalls }),
    ...(options.toolCallTimeoutMs === undefined ? {} : { toolCallTimeoutMs: options.toolCallTimeoutMs }),
    ...(options.decisionTimeoutMs === undefined ? {} : { decisionTimeoutMs: options.decisionTimeoutMs }),
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The calls of the conversation's last assistant turn that have no result yet. */
function unfinishedCalls(messages: readonly ChatMessage[]): ToolCall[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === 'user') return [];
    if (message.role !== 'assistant') continue;
    const answered = new Set<string>();
    for (let j = i + 1; j < messages.length; j++) {
      const later = messages[j]!;
      if (later.role === 'tool') answered.add(later.toolCallId);
    }
    return (message.toolCalls ?? []).filter((call) => !answered.has(call.id));
  }
  return [];
}

function toolMessagesSinceLastUser(messages: readonly ChatMessage[]): number {
  let count = 0;
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role !== 'user'; i--) if (messages[i]!.role === 'tool') count++;
  return count;
}

function normaliseReason(reason: string | undefined): string | undefined {
  if (typeof reason !== 'string') return undefined;
  const trimmed = reason.trim().slice(0, MAX_REASON_LENGTH);
  return trimmed === '' ? undefined : trimmed;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The outcome a ledger row records, for a call decided while no process held it. */
/** A call as it was put up to the person, from its ledger row: to put its slot back after a restart. */
function approvalOf(record: ToolCallRecord): RestoredApproval {
  return {
    approvalId: record.approvalId,
    sessionId: record.sessionId,
    runId: record.runId,
    toolCallId: record.toolCallId,
    toolName: record.toolName,
    arguments: record.arguments,
    executesCode: record.executesCode,
    toolVersion: record.toolVersion,
    ...(record.tool === null ? {} : { tool: record.tool }),
    requestedAt: record.requestedAt,
    expiresAt: record.expiresAt,
    exactGrantsOnly: record.exactGrantsOnly,
    ...(record.askedBecause === null ? {} : { askedBecause: record.askedBecause }),
  };
}

function recordedOutcome(record: ToolCallRecord): DecisionOutcome {
  return {
    decision: record.decision as Decision,
    source: record.source ?? 'user',
    ...(record.reason === null ? {} : { reason: record.reason }),
    ...(record.decidedByGrant === null ? {} : { grantId: record.decidedByGrant }),
    ...(record.editedArguments === null ? {} : { editedArguments: record.editedArguments }),
    ...(recordedRuleDeny(record) ?? {}),
  };
}

/**
 * A rule's deny as its row keeps it: its verdict rebuilt from the rule, how it read and whether it came from the
 * workspace's rules file, so the run tells it as the rule's, as where the rule denied it. Undefined for another
 * decision, or a row that kept no rule.
 */
function recordedRuleDeny(record: ToolCallRecord): { verdict: PolicyVerdict } | undefined {
  if (record.decision !== 'deny' || record.source !== 'rule' || record.decidedByRule === null) return undefined;
  // Without the rule's text (a row written before it was kept), the rule's own message, someone else's words: quoted.
  const description = record.decidedByRuleText !== null ? reasonParts(record.decidedByRuleText) : record.reason === null ? [] : [quote(record.reason)];
  return {
    verdict: {
      effect: 'deny',
      ruleId: record.decidedByRule,
      description,
      ...(record.reason === null ? {} : { message: record.reason }),
      ...(ruleFromWorkspaceFile(record) ? { fromWorkspaceFile: true } : {}),
    },
  };
}

/**
 * What an owner's claim on a call of its run (a timeout, a Stop, a grant's release, a rule's deny) found decided. A
 * Stop stored for the run, whose message may never have come (the owner's connection to the database did not drop,
 * so no resync reads it), stops the run here first, as that message would: the call then ends cancelled, an allow
 * found with the Stop included (the loop runs nothing of a stopped run), and the run ends stopped.
 */
function foundOnClaim(run: Run, claim: Extract<ClaimDecisionResult, { status: 'already-decided' }>): DecisionOutcome {
  if (claim.runStopped === true) run.cancellation.cancel();
  return claimedOutcome(claim);
}

function claimedOutcome(claim: Extract<ClaimDecisionResult, { status: 'already-decided' }>): DecisionOutcome {
  return {
    decision: claim.decision,
    source: claim.source as DecisionSource,
    ...(claim.reason === null ? {} : { reason: claim.reason }),
    ...(claim.grantId === null ? {} : { grantId: claim.grantId }),
    ...(claim.editedArguments === undefined ? {} : { editedArguments: claim.editedArguments }),
  };
}

export { parseEventId };

/**
 * A person's edit of a waiting call must pass the tool's schema. Where the tool is not here (gone while the call
 * waited, or served only by another instance), an edit that changes anything cannot be checked, so it is refused: the
 * call keeps waiting, to be allowed as proposed, denied, or edited where the tool is.
 */
function checkEditAgainst(tools: readonly AnyTool[], waiting: Pick<PendingApproval, 'toolName' | 'arguments'>, edit: ToolArguments): void {
  const tool = tools.find((candidate) => candidate.name === waiting.toolName);
  if (tool === undefined) {
    if (canonicalJson(edit) === canonicalJson(waiting.arguments)) return;
    throw new InvalidArgumentsError(waiting.toolName, [{ path: '(arguments)', message: 'the tool is not available on this server now, so an edit cannot be checked; allow the call as proposed or deny it' }]);
  }
  const issues = argumentIssues(tool, edit);
  if (issues.length > 0) throw new InvalidArgumentsError(tool.name, issues);
}

/** Resolves on the event loop's next turn, once the I/O of this one (frames corked for the tick) has gone out. */
function nextTurnOfEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** What a start of a run gave: a start naming a run that exists is its retry only when both are the same. */
interface RunStart {
  message: string;
  options?: RunOptions;
}

/** Whether two runs' options say the same, whatever the order of their fields. */
function sameOptions(a: RunOptions, b: RunOptions): boolean {
  const fields = (options: RunOptions) => JSON.stringify(Object.entries(options).filter(([, value]) => value !== undefined).sort(([x], [y]) => (x < y ? -1 : 1)));
  return fields(a) === fields(b);
}
