import { LimitExceededError, type AnyTool, type PolicyOptions, type PolicyVerdict, type Reason, type ToolCall } from '@airlock/core';
import { AnswerQueue } from './answer-queue';
import { ConnectionRates, type LeftRates } from './connection-rates';
import { NoClientClockError } from './decision-deadline';
import type { ChatService } from './chat-service';
import type { SendWindow, SubscriptionPlaces } from './event-log';
import type { RuleDraft, Rule } from './rules';
import type { ToolCallRecord } from './store';
import type { ToolSettingsService } from './tool-settings-service';

export interface ToolServerStatus {
  name: string;
  state: string;
  error?: string;
  toolCount: number;
}

/** Where the tools come from: built-ins and MCP servers, which can change while the server runs. */
export interface ToolCatalog {
  tools(): readonly AnyTool[];
  servers(): ToolServerStatus[];
}

export interface ModelInfo {
  provider: string;
  baseURL: string | null;
  model: string;
  /** True for the built-in offline demo model. */
  demo: boolean;
  /** Something about the model the person should know, e.g. that its server does not list it; absent when nothing is. */
  modelWarning?: string;
  /** How terminal and python calls are held; absent when the server runs no process tools. */
  sandbox?: ToolSandboxInfo;
  /** The folder the built-in tools act in. */
  workspace?: string;
  /** Why the workspace is a risky place for the tools (it holds the home folder), shown in the header; absent when it is not. */
  workspaceWarning?: string;
}

/** `bubblewrap`: each call in a sandbox of its own; `none`: in a process group only, for `reason`. */
export type ToolSandboxInfo = { kind: 'bubblewrap'; network: boolean } | { kind: 'none'; network: true; reason: string };

/** A rule as clients see it: what it says, how it reads, where it comes from, how often it decided. */
export interface RuleView {
  rule: Rule;
  /** How the rule reads, in parts a client draws as they are. */
  description: Reason;
  hits: number;
  lastUsedAt: number | null;
  /** Rules from the workspace's `.airlock/rules.json` can only be edited there. */
  editable: boolean;
}

/**
 * The person's trust in the workspace's rules file, which names the file's exact content: `trusted`, this content
 * (its allow rules count); `changed`, other content (the file changed since, or the trust was given before it named
 * content), so its allow rules do not count until the person trusts this content; `untrusted`, none.
 */
export type WorkspaceTrust = 'untrusted' | 'trusted' | 'changed';

export interface WorkspaceRulesStatus {
  /** Path of the workspace's rules file. */
  file: string;
  state: 'absent' | 'loaded' | 'invalid';
  error?: string;
  /** SHA-256 of the file's bytes as read, in hex: what trusting it names. Absent when there is no file to read. */
  sha256?: string;
  trust: WorkspaceTrust;
  /**
   * The file's rules that apply now, read with `sha256`: a loaded file's rules (its allows only while `trusted`),
   * or, while it is invalid, the deny rules of the last valid content seen.
   */
  rules: RuleView[];
}

/** Trust this exact content of the workspace's rules file (its `sha256` as shown to the person), or none. */
export type WorkspaceTrustChoice = { trusted: true; sha256: string } | { trusted: false };

/** Lasting rules: kept in the store, and read from the workspace's own file. */
export interface RuleService {
  /**
   * What the rules say about a call, before grants and the person. `preview`: an early look that decides nothing
   * (the call is asked again at its turn), so the deciding rule's hit is not counted. `opened`: what the call's tool
   * has opened, by which its path rules judge it (see `ToolContext.judgeOpened`).
   */
  evaluate(sessionId: string, call: ToolCall, tool: AnyTool, options?: PolicyOptions): Promise<PolicyVerdict | undefined>;
  /** A number that changes whenever `evaluate` may answer differently (a rule added, edited, removed, or read again). */
  version?(): number;
  /**
   * The rules as they are now, read once (the workspace's file included), to judge many calls with as `evaluate` judges
   * each in preview. Good while `version` does not change. Without it, each call is judged by `evaluate`.
   */
  snapshot?(): Promise<(sessionId: string, call: ToolCall, tool: AnyTool) => Promise<PolicyVerdict | undefined>>;
  /** Calls `listener` whenever `version` changes; answers how to stop. */
  onChange?(listener: () => void): () => void;
  /** Reads the rules kept in the store again (another instance may have changed them unheard). */
  reload?(): Promise<void>;
  list(): Promise<RuleView[]>;
  add(draft: RuleDraft): Promise<RuleView>;
  update(ruleId: string, draft: RuleDraft): Promise<RuleView>;
  remove(ruleId: string): Promise<boolean>;
  /** The rule "Always allow" on this call would save at this scope, and how it reads. */
  propose(
    sessionId: string,
    call: { toolName: string; arguments: Record<string, unknown> },
    scope: 'chat' | 'workspace' | 'global',
    /** The tool as it is now: an MCP tool's rule names its server and its own name. */
    tool?: AnyTool,
  ): Promise<{ draft: RuleDraft; description: Reason }>;
  /**
   * Which of these past calls the draft would have decided, each judged as `evaluate` judges it with its tool among
   * `tools` (the tools as listed now): an exact-arguments draft is compared with the tool's declared defaults filled in.
   */
  preview(draft: RuleDraft, calls: readonly ToolCallRecord[], tools?: readonly AnyTool[]): Promise<ToolCallRecord[]>;
  workspaceRules(): Promise<WorkspaceRulesStatus>;
  /** Throws ConflictError when the file no longer holds the content named (it changed since it was shown). */
  trustWorkspace(choice: WorkspaceTrustChoice): Promise<WorkspaceRulesStatus>;
  /** Forgets a chat's rules (the chat was deleted). */
  forgetSession(sessionId: string): void;
}

export interface AirlockServices {
  chat: ChatService;
  catalog: ToolCatalog;
  /** Lasting rules; absent where a server keeps none (tests). */
  rules?: RuleService;
  /** The web app's tool settings; absent where a server keeps none (tests). */
  settings?: ToolSettingsService;
  modelInfo(): ModelInfo;
}

export interface ConnectionLimits {
  /** Runs one connection may have going at once. Default 4. */
  maxConcurrentRuns?: number;
  /** New messages one connection may send per minute, when it takes no budget from `leftRates`. Default 30. */
  messagesPerMinute?: number;
  /** Messages that may be sent back to back before the per-minute rate applies, likewise. Default 10. */
  messageBurst?: number;
  /** Subscriptions (run streams, session watches) one connection may hold open at once. Default 32. */
  maxSubscriptions?: number;
}

/** The watches a connection may open: each change of its kind is sent to every watch of that kind, on every connection. */
export type WatchKind = 'sessions' | 'settings';

/**
 * Watches of each kind one connection may hold open at once, within its subscriptions. A tab needs one of each; a
 * client holding many made every change cost the server work for each of them (about 20 µs a watch).
 */
export const MAX_WATCHES_PER_KIND = 4;

/**
 * The runs of a server's connections that closed before their runs ended. A run goes on without its connection (its
 * client follows it again from a new one), so each is counted against the next connection that starts a run, until it
 * ends: else a client reconnecting after each batch of runs held as many as it liked, and with them every place at
 * the model server (17 reconnects held all 64), while `maxConcurrentRuns` said 4.
 */
export class LeftRuns {
  private readonly runIds = new Set<string>();

  /** Runs a connection had going as it closed. */
  leave(runIds: Iterable<string>): void {
    for (const runId of runIds) this.runIds.add(runId);
  }

  /** Takes out up to `count` of the runs still going, and forgets those that ended. */
  take(count: number, isActive: (runId: string) => boolean): string[] {
    const taken: string[] = [];
    for (const runId of this.runIds) {
      if (!isActive(runId)) this.runIds.delete(runId);
      else if (taken.length < count) {
        this.runIds.delete(runId);
        taken.push(runId);
      }
    }
    return taken;
  }
}

export interface ConnectionOptions extends ConnectionLimits {
  /**
   * Shared by a server's connections: the runs this one has going when it closes are left here, and it takes on
   * those of connections closed before it when it starts a run (see LeftRuns). Default none: a connection's runs stop
   * counting when it closes.
   */
  leftRuns?: LeftRuns;
  /**
   * Shared by a server's connections: this one takes over the most spent budget of new runs and changes a closed
   * connection left, and leaves its own when it closes (see LeftRates). Default a full budget of its own, of
   * `messagesPerMinute` and `messageBurst`, that ends with it.
   */
  leftRates?: LeftRates;
  /** The connection's room to send; run streams wait while it is shut. Default none (no pacing). */
  sendWindow?: SendWindow;
  /** What the client calls itself (its `client` connection parameter), for the ledger of its decisions. Default none. */
  clientLabel?: string;
  /** Clock for its own budget, when it takes none from `leftRates`. Default `Date.now`. */
  now?: () => number;
  /**
   * The client's clock against this process's `performance.now()` (see `clientClockOffset`), by which a decision's
   * `notAfter` is read. Default none: a decision with a deadline is refused.
   */
  clientClockOffset?: number;
}

/** Per-connection state: the runs it started, its budget of new runs and changes, its open subscriptions. */
export class ConnectionState implements SubscriptionPlaces {
  private readonly runIds = new Set<string>();
  /** Those of `runIds` taken on from connections closed before this one; made with the first (most take on none). */
  private takenOn: Set<string> | undefined = undefined;
  private readonly leftRuns: LeftRuns | undefined;
  private closed = false;
  private subscriptions = 0;
  private readonly watches: Record<WatchKind, number> = { sessions: 0, settings: 0 };
  private readonly rates: ConnectionRates;
  private readonly leftRates: LeftRates | undefined;
  private reservedRuns = 0;
  private readonly maxRuns: number;
  private readonly maxSubscriptions: number;
  readonly sendWindow: SendWindow | undefined;
  /** Its queries, answered one at a time while the send window is open. */
  readonly answers: AnswerQueue;
  readonly clientLabel: string | undefined;
  private readonly clientClockOffset: number | undefined;

  constructor(
    readonly connectionId: string,
    options: ConnectionOptions = {},
  ) {
    this.maxRuns = options.maxConcurrentRuns ?? 4;
    this.leftRuns = options.leftRuns;
    this.leftRates = options.leftRates;
    this.rates =
      options.leftRates?.take() ??
      new ConnectionRates({ runsPerMinute: options.messagesPerMinute ?? 30, runBurst: options.messageBurst ?? 10, ...(options.now === undefined ? {} : { now: options.now }) });
    this.maxSubscriptions = options.maxSubscriptions ?? 32;
    this.sendWindow = options.sendWindow;
    this.answers = new AnswerQueue(options.sendWindow);
    this.clientLabel = options.clientLabel;
    this.clientClockOffset = options.clientClockOffset;
  }

  /** A time on the client's clock (a decision's `notAfter`) as this process's `performance.now()`, at or before it. */
  serverTimeOf(clientTime: number): number {
    if (this.clientClockOffset === undefined) throw new NoClientClockError();
    return clientTime + this.clientClockOffset;
  }

  /**
   * Takes a subscription place, or throws LimitExceededError when the connection holds its maximum. Whoever took
   * one gives it back once, with releaseSubscription (a run stream's log follower does it when it ends).
   */
  takeSubscription(): void {
    if (this.subscriptions >= this.maxSubscriptions) throw new LimitExceededError('subscriptions open at once per connection', this.maxSubscriptions);
    this.subscriptions++;
  }

  releaseSubscription(): void {
    if (this.subscriptions > 0) this.subscriptions--;
  }

  get openSubscriptions(): number {
    return this.subscriptions;
  }

  /**
   * Takes a place for a watch of this kind and a subscription place, or throws LimitExceededError (taking neither)
   * when the connection holds MAX_WATCHES_PER_KIND of the kind or its most subscriptions. Given back with releaseWatch.
   */
  takeWatch(kind: WatchKind): void {
    if (this.watches[kind] >= MAX_WATCHES_PER_KIND) throw new LimitExceededError(`watches of the ${kind === 'sessions' ? 'chat list' : 'settings'} open at once per connection`, MAX_WATCHES_PER_KIND);
    this.takeSubscription();
    this.watches[kind]++;
  }

  releaseWatch(kind: WatchKind): void {
    if (this.watches[kind] > 0) this.watches[kind]--;
    this.releaseSubscription();
  }

  /**
   * Spends one of the connection's changes that every watch is told of, or throws LimitExceededError when it has
   * made CHANGE_BURST back to back and more than CHANGES_PER_MINUTE since.
   */
  spendChange(): void {
    this.rates.spendChange();
  }

  /**
   * Reserves a place for a new run, or throws LimitExceededError when this connection may not start another now.
   * The place is held from here, across the wait for the run to start: requests sent back to back each see the
   * others' places. The caller settles the reservation once: `started` with the run's id, or `abandon`.
   */
  admitRun(isActive: (runId: string) => boolean): RunReservation {
    for (const runId of this.runIds) {
      if (isActive(runId)) continue;
      this.runIds.delete(runId);
      this.takenOn?.delete(runId);
    }
    const free = this.maxRuns - this.runIds.size - this.reservedRuns;
    for (const runId of this.leftRuns?.take(free, isActive) ?? []) {
      this.runIds.add(runId);
      (this.takenOn ??= new Set()).add(runId);
    }
    if (this.runIds.size + this.reservedRuns >= this.maxRuns) {
      const closed = this.takenOn?.size ?? 0;
      const those = closed === 0 ? '' : ` (${closed} of them started on connections since closed, counted here until they end)`;
      throw new LimitExceededError(`concurrent runs per connection${those}`, this.maxRuns);
    }
    this.rates.spendRun();
    this.reservedRuns++;
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      this.reservedRuns--;
      return true;
    };
    return {
      started: (runId) => {
        if (!settle()) return;
        if (this.closed) this.leftRuns?.leave([runId]);
        else this.runIds.add(runId);
      },
      abandon: () => void settle(),
    };
  }

  /**
   * The connection closed: the runs it has going, and any it starts after this, count against the next one (see
   * LeftRuns), and so does what it spent of its budget (see LeftRates).
   */
  close(): void {
    if (!this.closed) this.leftRates?.leave(this.rates);
    this.closed = true;
    this.leftRuns?.leave(this.runIds);
    this.runIds.clear();
    this.takenOn = undefined;
  }
}

/** A run's place on its connection, held while the run starts. */
export interface RunReservation {
  /** The run started: its place is now its own, until it ends. */
  started(runId: string): void;
  /** The run did not start: the place is free again (the message budget spent stays spent). */
  abandon(): void;
}

export interface Context {
  services: AirlockServices;
  connection: ConnectionState;
}
