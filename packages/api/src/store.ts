import type { AskedBecause, ChatMessage, Decision, DecisionSource, LoopEvent, ResultCut, ShownReason, ShownTool, ToolArguments, ToolOutcome } from '@airlock/core';
import type { RunOptions } from './chat-service';
import type { Rule } from './rules';

/**
 * Where everything that must outlive the process is kept: sessions, their messages, runs and their events, every
 * tool call with its decision (the ledger), and grants. One interface, several implementations (in memory for tests
 * and for a server without a data folder; SQLite by default; PostgreSQL for several instances). SQL lives only in
 * an implementation's own module.
 *
 * Writes are append-only or single-row updates: the cost of a write never depends on how long a chat is. Every
 * method may be synchronous underneath, but callers always await it, so an implementation over the network fits.
 * A write that fails rejects: the caller decides whether the run can go on (a run never executes a tool whose
 * allow could not be recorded).
 */
export interface AirlockStore {
  /**
   * Whether an error this store threw means it could not be reached (a refused or dropped connection, a database
   * shutting down), so the same write may succeed later. Default: never.
   */
  isUnavailable?(error: unknown): boolean;
  /**
   * The stored record an error this store threw found damaged (its text does not read, or holds what no record can),
   * named, and why; undefined for any other error. A run one of whose records is damaged is set aside
   * at the start, never resumed. Default: never.
   */
  damagedRecord?(error: unknown): string | undefined;
  /**
   * A store shared by several instances: the version of the lasting rules and settings, raised by every change to
   * them from any instance (see `AppendEventInput.unasked`). Absent where one instance is the only writer.
   */
  policyVersion?(): Promise<number>;

  /** Every session's summary, newest first (no messages: those are read when a session is opened). */
  listSessions(): Promise<StoredSessionSummary[]>;
  /**
   * One page of sessions, most recently active first: by `updatedAt`, then by `sessionId`, both descending. Those
   * after `query.after` in that order, at most `query.limit`. Read through an index: the cost is the page's, however
   * many sessions there are (a search's, with `query.titleContains`, that of the sessions it passes over).
   */
  listSessionPage(query: SessionPageQuery): Promise<StoredSessionSummary[]>;
  /** A session's summary, or undefined. */
  getSession(sessionId: string): Promise<StoredSessionSummary | undefined>;
  createSession(session: StoredSessionSummary): Promise<void>;
  /** Changes some fields of a session; the others stay. */
  updateSession(sessionId: string, changes: SessionChanges): Promise<void>;
  /** Deletes a session with its messages, runs, events and grants; its rows in the ledger of tool calls stay, for audit. */
  deleteSession(sessionId: string): Promise<void>;

  /** Appends one message to a session's conversation, as a message of `run` when it is one of a run's. */
  appendMessage(sessionId: string, message: ChatMessage, at: number, run?: MessageRun): Promise<void>;
  /**
   * A session's whole conversation, in order: what a run sends its model. A message whose record is damaged fails the
   * read, or with `leftOut` is left out and named to it (the record and why), the others read as they are.
   */
  loadMessages(sessionId: string, leftOut?: (record: string) => void): Promise<ChatMessage[]>;
  /**
   * One page of a session's conversation, with the ledger rows of its calls: the newest messages before the
   * `before`-th, as many as fit `limit` and `maxChars`. Reads little more than it answers, however long the chat.
   */
  loadMessagePage(sessionId: string, query: MessagePageQuery): Promise<MessagePage>;
  /**
   * The first message written as one of the run's (the person's message that started it), or undefined when none was
   * (a run from before messages kept their run). Reads the chat's messages up to it: for a rare check, not a hot path.
   */
  loadFirstRunMessage(sessionId: string, runId: string): Promise<ChatMessage | undefined>;

  /**
   * Records a new run. A store shared by several instances also makes it owned by `owner` (fencing token 1) and
   * refuses a second unfinished run in the same session with a ConflictError "session-busy".
   */
  createRun(run: StoredRun, owner?: string): Promise<void>;
  /**
   * Starts a run in one transaction: its row (as createRun, owned by `owner`), the person's message that starts it,
   * and the chat's change. All or nothing: a crash or a refused write at any point leaves no run without its message
   * or its chat's change, so the same start sent again starts it anew.
   */
  beginRun(beginning: RunBeginning): Promise<void>;
  /** Marks a run as ended; its events stay replayable. `fence` is checked as for appendEvent. */
  endRun(runId: string, reason: string, endedAt: number, fence?: number): Promise<void>;
  /** Whether a run of this id was ever started, ended or not: a run id is never used twice. */
  hasRun(runId: string): Promise<boolean>;
  getRun(runId: string): Promise<StoredRun | undefined>;
  /** Runs that were going when the process stopped (not ended), oldest first. */
  listUnfinishedRuns(): Promise<StoredRun[]>;
  /**
   * Records that a person stopped an unfinished run its process cannot stop now (paused: its writes are not taken
   * for now), so whoever takes it up, this process or the next start, ends it first (its `cancelRequested`). Answers
   * whether the run was still going. Absent: such a stop is kept in memory only.
   */
  requestCancel?(runId: string): Promise<boolean>;

  /**
   * Appends one event of a run (seq from 1, no gaps) and applies the ledger change it carries, atomically: an
   * event and its effect on the ledger are kept together or not at all. A caller waits for one write of a run to
   * resolve before it makes the next of that run or of its calls: a store may make a write later than it is asked
   * for (the SQLite store makes the allows asked for in one turn of the event loop together at its end), so writes
   * not waited for may land in another order than they were asked.
   */
  appendEvent(input: AppendEventInput): Promise<void>;
  /**
   * Appends consecutive events of one run in order, all or none (one transaction): how a run stores a burst of text
   * deltas with one write. Each input is checked and applied as by appendEvent.
   */
  appendEvents(inputs: readonly AppendEventInput[]): Promise<void>;
  /**
   * The run's events after `afterSeq`, in order. With `page`, only the first of them that fit it: at most
   * `page.events`, and no more than `page.chars` characters of stored JSON (the first event always, so paging goes on).
   */
  loadEvents(runId: string, afterSeq: number, page?: EventPage): Promise<LoopEvent[]>;
  /** The seq of the run's last stored event (0 when it has none), without reading any event. */
  lastEventSeq(runId: string): Promise<number>;
  /** The run's last event stored (its `run-end` once it has ended), without reading the others. */
  loadLastEvent(runId: string): Promise<LoopEvent | undefined>;

  /** The ledger rows of one run, in the order their calls started. */
  listRunToolCalls(runId: string): Promise<ToolCallRecord[]>;
  /** The ledger rows of one session, in the order their calls started. */
  listSessionToolCalls(sessionId: string): Promise<ToolCallRecord[]>;
  /**
   * The decision recorded for the call put up with this approval id in this session, or undefined (no such call, or
   * still undecided): a decision repeated after a restart is answered with it, not as unknown.
   */
  findDecision(sessionId: string, approvalId: string): Promise<Decision | undefined>;
  /**
   * Has the call's ledger row say, while it is undecided, that only a grant for its exact arguments may release it (a
   * deny rule added while it waited cannot tell it from one it denies): as its start would have, put up under it.
   * Answers whether the row is there and undecided (held now, or already): false when the call's start is not
   * stored yet (it was held while that write was under way) or it was decided meanwhile.
   */
  requireExactGrants(runId: string, toolCallId: string, askedBecause?: AskedBecause): Promise<boolean>;
  /** The ledger, newest first, filtered and paged. */
  listAudit(query: AuditQuery): Promise<AuditPage>;

  /**
   * Adds or replaces a grant, only while its chat is there (NotFoundError when it is not): a grant names its chat by id
   * alone, so one kept past its chat's deletion would let calls of a chat made later under that name through unasked.
   */
  saveGrant(grant: StoredGrant): Promise<void>;
  deleteGrant(grantId: string): Promise<void>;
  /** Every grant still in force. */
  listGrants(): Promise<StoredGrant[]>;

  /** Adds a rule, or replaces the one with its id (its hit count stays). */
  saveRule(rule: Rule): Promise<void>;
  deleteRule(ruleId: string): Promise<void>;
  /** Every rule the person made (a workspace's own file is read from the workspace, not kept here), oldest first. */
  listRules(): Promise<StoredRule[]>;
  /** Counts one call decided by the rule. */
  recordRuleHit(ruleId: string, at: number): Promise<void>;

  /** A small setting kept across restarts (e.g. which workspaces' rule files are trusted), or undefined. */
  getSetting(key: string): Promise<string | undefined>;
  setSetting(key: string, value: string | undefined): Promise<void>;

  close(): Promise<void>;
}

export interface StoredSessionSummary {
  sessionId: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  /** Whether calls stop for a person's decision in this session. Default true. */
  confirmToolCalls: boolean;
  /** The session's latest run, going or not. */
  lastRunId: string | null;
}

/** Where a page of sessions starts: right after the session at this place in the order (see listSessionPage). */
export interface SessionPosition {
  updatedAt: number;
  sessionId: string;
}

export interface SessionPageQuery {
  /** Sessions at most. */
  limit: number;
  /** Absent: from the most recently active. */
  after?: SessionPosition;
  /**
   * Only the sessions whose title contains this text, whatever the case (see `titleMatches`), in the same order;
   * absent: every session. Read a batch at a time with `searchSessionPage`, so the cost is linear in the sessions
   * passed over.
   */
  titleContains?: string;
}

export type SessionChanges = Partial<Pick<StoredSessionSummary, 'title' | 'updatedAt' | 'confirmToolCalls' | 'lastRunId'>>;

/** Bounds one read of a run's events (see `AirlockStore.loadEvents`). */
export interface EventPage {
  events: number;
  chars: number;
}

export interface StoredRun {
  runId: string;
  sessionId: string;
  /** The options the run was started with (what is needed to resume it after a restart). */
  options: RunOptions;
  startedAt: number;
  /** Null while the run goes on. */
  endedAt: number | null;
  endReason: string | null;
  /**
   * A person stopped it while its owner could not hear it (several instances) or while it was paused (one instance):
   * whoever resumes it ends it, running nothing more.
   */
  cancelRequested?: boolean;
  /**
   * Its options did not read (a damaged record): why, as getRun and listUnfinishedRuns say it; `options` is then
   * empty. An unfinished one is set aside, never resumed; a finished one still replays.
   */
  unreadable?: string;
}

/** A run as it starts (see AirlockStore.beginRun). */
export interface RunBeginning {
  run: StoredRun;
  /** With several instances: the instance that owns it, with fencing token 1 (see createRun). */
  owner?: string;
  /** The person's message that starts it, written as the run's first at its `startedAt`. */
  message: ChatMessage;
  /** The chat's change: its last activity and last run, and its confirmation when the message sets it. */
  session: SessionChanges;
}

/** Who made a decision: the connection it came through and the label its client sent (both absent for automatic ones). */
export interface DecidedBy {
  connectionId?: string;
  clientLabel?: string;
}

/** How an event changes the ledger; none for events that are not about a tool call. */
export type LedgerChange =
  | {
      kind: 'start';
      toolCallId: string;
      toolName: string;
      /** Exactly as shown to the person and as they will run. */
      arguments: ToolArguments;
      /** "" when the call was not put up for a decision. */
      approvalId: string;
      requestedAt: number;
      expiresAt: number | null;
      /** Exact-argument grant semantics and tool fingerprint, kept so a waiting call can be restored after a restart. */
      executesCode: boolean;
      toolVersion: string;
      /** The tool as the call was put up, as its tool-start showed it (source and hints); absent when no offered tool had the call's name. */
      tool?: ShownTool;
      /** Only a grant for its exact arguments may release it (its tool-start's `exactGrantsOnly`). Default false. */
      exactGrantsOnly?: boolean;
      /** With exactGrantsOnly: the deny rule that asked, and why (its tool-start's `askedBecause`). */
      askedBecause?: AskedBecause;
    }
  | {
      kind: 'decision';
      toolCallId: string;
      decision: Decision;
      source: DecisionSource;
      reason?: string;
      /** The grant or rule that decided, for automatic decisions. */
      decidedByGrant?: string;
      decidedByRule?: string;
      /** How that rule read when it decided: it may be edited or removed later, and the ledger keeps what decided. */
      decidedByRuleText?: ShownReason;
      decidedAt: number;
      by?: DecidedBy;
      /** With a person's allow: the arguments they edited the call to (the start's `arguments` stay as proposed). */
      editedArguments?: ToolArguments;
    }
  /**
   * The call starts: the last write before its tool runs. Refused with a RunStoppedError, in the same write, once the
   * run's Stop is stored (its `cancelRequested`): no tool of a stopped run starts, even on an instance that did not
   * hear of the Stop yet.
   */
  | { kind: 'running'; toolCallId: string; startedAt: number }
  | {
      kind: 'end';
      toolCallId: string;
      outcome: ToolOutcome;
      result: string;
      cut?: ResultCut;
      endedAt: number;
      /** When it began to run; null: it never did (a start recorded before is cleared); absent: the start is left as recorded. */
      startedAt?: number | null;
    };

export interface AppendEventInput {
  runId: string;
  sessionId: string;
  seq: number;
  event: LoopEvent;
  at: number;
  ledger?: LedgerChange;
  /**
   * Messages of the session's conversation that came before the event, written in the same transaction (before
   * it), so a tool's answer to the model and its tool-end are one write.
   */
  messages?: readonly ChatMessage[];
  /**
   * The writer's fencing token for the run (see Cluster). A store shared by several instances refuses the write with
   * a FencedError when the run's token is another; a store of one instance ignores it.
   */
  fence?: number;
  /**
   * With a call let through without asking: what let it through, as this instance knows it. A store shared by
   * several instances writes the event only while all of it still holds there, checked in the same write (the
   * rules' version unchanged, the grant still kept, the chat's confirmation still off), and otherwise refuses it with
   * a PolicyChangedError: another instance changed it, and this one may not have heard yet. Others ignore it.
   */
  unasked?: UnaskedAllow;
  /**
   * A chat's grant the person asked for with the allow this event carries ("Always allow"), written in the same
   * transaction: after a crash at any moment, the grant and the allow are both kept, or neither.
   */
  grant?: StoredGrant;
}

/** What let a call run without asking, to be checked with the write of its start (see AppendEventInput.unasked). */
export interface UnaskedAllow {
  toolCallId: string;
  /** The store's `policyVersion` the rules held here were read at. */
  policyVersion: number;
  /** The grant that allowed it. */
  grantId?: string;
  /** It ran unasked because the chat's "Confirm tool calls" was off. */
  confirmationOff?: boolean;
}

/** The run a message is written by. */
export interface MessageRun {
  runId: string;
  /** With several instances: the writer's fencing token for the run, checked as for appendEvent. */
  fence?: number;
}

export interface MessagePageQuery {
  /** The page ends before the message with this many messages before it; absent: at the newest. */
  before?: number;
  /** Messages at most. */
  limit: number;
  /** Characters of messages (each as JSON) at most; the page's newest message always fits. */
  maxChars: number;
  /**
   * Given, a message or a call's ledger row whose record is damaged is left out of the page and named to it (the
   * record and why), as AirlockStore.loadMessages does, a call's row with the call it is of; absent, it fails the read.
   */
  leftOut?: (record: string, call?: LeftOutCall) => void;
}

/** A call of a page whose ledger row was left out as damaged: by its run and its id, as a row is found. */
export interface LeftOutCall {
  runId: string;
  toolCallId: string;
}

export interface MessagePage {
  /** In order, oldest first. */
  messages: ChatMessage[];
  /** The run that wrote each of `messages`, at the same place; null for a message no run wrote. */
  runIds: (string | null)[];
  /** How many messages of the conversation come before the page's first. */
  start: number;
  /**
   * The ledger rows of the page's calls, in the order they started: a call's row is found through its message's run,
   * since a call id is unique only within a run.
   */
  toolCalls: ToolCallRecord[];
}

/** One tool call, from its start to its end: the ledger's row. */
export interface ToolCallRecord {
  runId: string;
  sessionId: string;
  toolCallId: string;
  toolName: string;
  /** As the model proposed them, with the defaults the tool's schema declares for those it left out (as shown). */
  arguments: ToolArguments;
  /** What the person edited them to before allowing, which is what ran (or was refused by a rule); null when not edited. */
  editedArguments: ToolArguments | null;
  approvalId: string;
  executesCode: boolean;
  toolVersion: string;
  /**
   * The tool as the call was put up (its source and hints), as its tool-start showed it: what a card rebuilt from this
   * row shows, whatever the tool says of itself now. Null when no offered tool had the call's name, and in rows
   * written before the ledger kept it.
   */
  tool: ShownTool | null;
  /** Only a grant for its exact arguments may release it, as its tool-start said (false in rows written before it was kept). */
  exactGrantsOnly: boolean;
  /** With exactGrantsOnly: the deny rule that asked, and why; null otherwise, and in rows written before it was kept. */
  askedBecause: AskedBecause | null;
  requestedAt: number;
  expiresAt: number | null;
  decision: Decision | null;
  source: DecisionSource | null;
  reason: string | null;
  decidedByGrant: string | null;
  decidedByRule: string | null;
  /**
   * How the rule read when it decided; null without a rule, and in rows recorded before the ledger kept it; a string
   * in rows recorded before reasons were typed.
   */
  decidedByRuleText: ShownReason | null;
  /**
   * With a rule's deny claimed on the row (several instances: a rule changed while the call waited): the rule came from
   * the workspace's rules file, not the person's own rules. Absent otherwise; a rule's decision written from the run's
   * events (one instance's ledger) says where its rule came from in `decidedByRuleText` alone.
   */
  decidedByRuleFromWorkspaceFile?: true;
  decidedAt: number | null;
  connectionId: string | null;
  clientLabel: string | null;
  /** When it began to execute; null if it never did. */
  startedAt: number | null;
  outcome: ToolOutcome | null;
  /** The result as sent to the model. */
  result: string | null;
  /** What was left out of `result` before the model saw it, as the tool-end reported it; null when nothing was (or not known: a row written before this was kept). */
  cut: ResultCut | null;
  endedAt: number | null;
}

export interface AuditQuery {
  sessionId?: string;
  toolName?: string;
  decision?: Decision | 'none';
  /** Epoch ms, inclusive. */
  from?: number;
  /** Epoch ms, exclusive. */
  to?: number;
  /** Rows at most, default 100, at most 1,000; a page also ends before `MAX_AUDIT_PAGE_CHARS`. */
  limit?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
}

/**
 * Characters of ledger rows (each as JSON) one audit page holds at most: a page ends before the row that would take
 * it past this, and its first row always fits, so paging goes on. Rows are as large as the calls' arguments and
 * results: 100 rows of 900 KiB arguments made one 92 MB answer.
 */
export const MAX_AUDIT_PAGE_CHARS = 4 * 1024 * 1024;

export interface AuditPage {
  entries: ToolCallRecord[];
  /** Pass as `cursor` for the next (older) page, which starts right after this page's last row; null on the last page. */
  nextCursor: string | null;
  /** The page's ledger rows whose record is damaged, left out of `entries` (each the record and why). Absent when none. */
  leftOut?: string[];
}

export interface StoredRule {
  rule: Rule;
  /** Calls it decided. */
  hits: number;
  lastUsedAt: number | null;
}

export interface StoredGrant {
  grantId: string;
  /** For now always a session; the scope fields fit workspace and global rules later. */
  scope: 'session';
  sessionId: string;
  toolName: string;
  /** The exact arguments covered, or null for the whole tool. */
  arguments: ToolArguments | null;
  toolVersion: string;
  createdAt: number;
}
