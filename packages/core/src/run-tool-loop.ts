import { DecisionNotStoredError, DEFAULT_DECISION_TIMEOUT_MS, PolicyChangedError, type ApprovalRegistry, type ApprovalTicket, type DecisionOutcome, type DecisionTimeout } from './approval-registry';
import { Cancellation, linkedController, type CancelSignal } from './cancellation';
import type { ChatModel, ChatRequest, ToolSpec } from './chat-model';
import { errorMessage } from './errors';
import type { Decision, LoopEvent, ResultCut, RunEndReason, ShownTool, ToolArguments, ToolOutcome } from './events';
import { randomId } from './ids';
import { canonicalJson, deepFreeze } from './json';
import { parseToolArguments } from './json-repair';
import type { AssistantMessage, ChatMessage, ToolCall } from './messages';
import { reasonText, type Reason } from './reason';
import { TextToolCallExtractor, type TextPart, type TextToolCall } from './text-tool-calls';
import { BLANK_EDGED_ARGUMENT, blankEdgedArguments, grantsNeedExactArguments, shownTool, toolJsonSchema, toolVersion, toolDefaults, UNKNOWN_ARGUMENT, unknownArguments, type AnyTool, type OpenedPath, type ToolContext } from './tool';
import { toolResultText } from './tool-results';

export const DEFAULT_MAX_TOOL_CALLS = 25;
/**
 * The most tool calls one model turn may make; those past it are not run, and one error result says so. A reply of
 * 1 MB made 43,000 calls written in its text, each with its events, stored rows and a message in the next request.
 */
export const MAX_TOOL_CALLS_PER_TURN = 64;
export const DEFAULT_TOOL_CALL_TIMEOUT_MS = 5 * 60 * 1000;
export const DEFAULT_MAX_TOOL_RESULT_CHARS = 100_000;
/** How long a stopped call's end waits for its tool to stop: longer than a process tool's SIGTERM-then-SIGKILL. */
export const DEFAULT_TOOL_STOP_WAIT_MS = 10_000;

/** Ends any wait it is passed to as cancel. */
const CANCELLED = new Cancellation();
CANCELLED.cancel();

/**
 * The reason a turn's model request is aborted with once the turn is over. One object for every turn: an abort
 * without a reason makes a new DOMException each time, whose captured stack keeps the turn's controllers and frames
 * alive for as long as the signal is, which a waiting run holds.
 */
const TURN_OVER = new DOMException('The model turn is over.', 'AbortError');

export interface RunToolLoopOptions {
  model: ChatModel;
  /** The conversation so far, ending with the new user message. Not mutated. */
  messages: readonly ChatMessage[];
  /** Every tool the loop knows; `enabledTools` narrows what the model is offered. */
  tools: readonly AnyTool[];
  registry: ApprovalRegistry;
  sessionId: string;
  /** Default: a fresh random id. */
  runId?: string;
  /**
   * Cancels the run: pending decisions end as cancel, the model stream stops, running tools are aborted.
   * An AbortSignal or a (lighter) Cancellation.
   */
  signal?: CancelSignal;
  /**
   * Ask the person before each call. Default true. A function is asked again at each call, so a setting changed while
   * the run goes on (the person turning confirmation back on) holds from the next call.
   */
  confirmToolCalls?: boolean | (() => boolean);
  /** Names of the tools the model may use. Default: all of `tools`. */
  enabledTools?: readonly string[];
  /**
   * The names of the tools turned off now (a person's settings), asked before each model turn: they are left out of
   * what is offered, whatever `enabledTools` says, so a setting changed while the run goes on holds from the next
   * turn, and a run resumed with a tool that has come back since does not offer it. The calls of a turn are checked
   * against what that turn offered; of a resumed run's calls, those put up before the restart against every enabled
   * tool (their turn offered them), so a call allowed on its card runs whether or not the server restarted, and those
   * never put up against what is offered now. Default none.
   */
  turnedOff?: () => Promise<ReadonlySet<string>>;
  /** Tool calls allowed per message. Default 25. */
  maxToolCalls?: number;
  /** Per-call execution timeout. Default 5 minutes. */
  toolCallTimeoutMs?: number;
  /**
   * How long the end of a call that was stopped (cancelled or timed out) waits for its tool to stop, so that no card
   * says a call stopped while it still runs. A tool still going after this is reported as such. Default 10 seconds.
   */
  toolStopWaitMs?: number;
  /** How long a call waits for a decision. Default one hour. */
  decisionTimeoutMs?: DecisionTimeout;
  /** Longer tool results are cut, with a marker, before the model sees them. Default 100,000 characters. */
  maxToolResultChars?: number;
  /**
   * The tool as it is at this moment, looked up by name. A tool can change while a run goes on (an MCP server
   * rewrites it); an allow or a grant covers only the version it was given for, checked right before the call runs.
   * Default: the tool in `tools`.
   */
  currentTool?: (name: string) => AnyTool | undefined;
  /**
   * Lasting rules, asked before grants and before the person: a deny wins over every allow and grant; an allow lets
   * the call run unasked; an ask puts the call up to the person even with confirmation off (a grant for it still
   * counts), unless it is `onlyWhenConfirming`. Undefined means no rule applies. Asked again at each call's turn (what a rule matches, a
   * path's real target say, can change while earlier calls of the turn run), and once more on what a file tool has
   * opened (see `PolicyOptions`). Default none.
   */
  policy?: (call: ToolCall, tool: AnyTool, options?: PolicyOptions) => Promise<PolicyVerdict | undefined>;
  /**
   * A number that changes whenever what `policy` answers may have changed (a rule added, edited or removed). An allow
   * of a waiting call is checked against the rules again only when it changed since the call was put up, or when the
   * person edited the call. Default none: every allow is checked again.
   */
  policyVersion?: () => number;
  /** Called with every message the loop adds to the conversation, in order, as it adds it (to store it as it happens). */
  onMessage?: (message: ChatMessage) => void;
  /**
   * Reads the conversation back, for a loop that goes on without holding it. With it, a parked run keeps none of the
   * conversation (a run waiting in a long chat would hold all of it for as long as the person takes), nor does a run
   * resumed after a restart: the loop that goes on reads it here once the calls have ended, right before its next
   * model turn. It must answer the whole conversation as the loop would hold it — `messages`, then every message
   * reported through `onMessage` since, in order — as a host that stores each message as it is reported and reads
   * its store back does; the messages added since the loop let go of the conversation are taken as the loop holds
   * them. Default none: a parked run keeps the conversation.
   */
  history?: () => Promise<readonly ChatMessage[]>;
  /**
   * Goes on with a run that stopped while its last turn's calls were being decided or run (a server restart):
   * `messages` ends with that turn; no run-start is emitted again. With `history`, `messages` need only be the run's
   * own (from the person's message that started it): the rest is read before the next model turn. Or with a run the loop let go of while its calls
   * waited (`park`): then `messages` is ignored (the parked run has its own) and nothing is emitted for going on.
   */
  resume?: ResumeState | ParkedRun;
  /**
   * Let go of the run whenever it would wait on the person with nothing else to do: the loop then returns, with
   * `parked` in its result in place of an end, instead of holding its frames for as long as the person takes. The
   * caller awaits `parked.wake(signal)` and goes on with a new loop given `resume: parked` and the same options.
   * What is emitted is the same as without parking. Default false.
   */
  park?: boolean;
  /**
   * Awaited before each model turn that follows tool calls. A host whose transport writes what it was handed once
   * the current tick's jobs are done (frames coalesced per tick) passes a wait for its event loop's next turn, so
   * that the calls' ends leave before the turn is set up rather than behind it. Default none.
   */
  beforeNextTurn?: () => Promise<void>;
  /**
   * Places for the calls running at once, shared by every run of a host: an allowed call takes one before its last
   * checks and gives it back once its tool has stopped, so a burst of allows (many sessions at once) cannot take
   * more processes or descriptors than the host sets aside. A call in line has not started: it says so (a status
   * event), its time limit runs from when it has a place, and a cancel meanwhile ends it unrun. Default: no limit.
   */
  toolSlots?: ToolSlots;
  /**
   * Whom the run's model turns are for (a server's connection that started it), given to the model with each turn's
   * request (see ChatRequest.requester). Default none.
   */
  requester?: string;
  /** Said as statuses right after a new run's run-start (what the host left out of the conversation). Default none. */
  notes?: readonly string[];
}

/** How `RunToolLoopOptions.policy` is asked. */
export interface PolicyOptions {
  /** The early look made when a turn's calls are announced, which decides nothing and counts no hit. Default false. */
  preview?: boolean;
  /**
   * What the call's tool holds open to act on (see `ToolContext.judgeOpened`): the call is judged by it, not by what
   * its path leads to now. Default: judged by its path.
   */
  opened?: OpenedPath;
}

/** A limit on the calls running at once (see `RunToolLoopOptions.toolSlots`). */
export interface ToolSlots {
  /** Places there are. */
  readonly max: number;
  /** Places taken now. */
  readonly size: number;
  /** A place if one is free now (and nobody waits for one); answers what gives it back, else undefined. */
  tryAcquire(): (() => void) | undefined;
  /** Waits for a place; answers what gives it back, or undefined when `signal` aborted first. */
  acquire(signal: AbortSignal): Promise<(() => void) | undefined>;
}

/**
 * What a rule decided about a call. `ask`: a rule concerns the call and cannot decide it (a deny rule that cannot
 * tell whether it catches a command line it cannot read whole, an allow rule that does not cover what the call would
 * do): the person decides, even with confirmation off, and the call's card says why in either setting.
 */
export interface PolicyVerdict {
  effect: 'allow' | 'deny' | 'ask';
  ruleId: string;
  /** How the rule reads, for the card and the ledger; with `ask`, why the person is asked (in words true in either setting). */
  description: Reason;
  /** With a deny: what the model is told (the rule's reason, or how it reads). */
  message?: string;
  /** The rule was written into the workspace (its rules file), not made by the person: the model is told so. */
  fromWorkspaceFile?: boolean;
  /**
   * With `ask`: only why an allow rule did not cover the call (it works outside the workspace the rule names, or is
   * given what the rule does not take), for the card; the call is asked about as any other, so with confirmation off it runs as one no rule decides (an allow
   * rule never makes confirmation off stricter). Default false: put up in either setting.
   */
  onlyWhenConfirming?: boolean;
}

/** Where a resumed run picks up: the unfinished calls of its last turn, each in the state it was left in. */
export interface ResumeState {
  calls: readonly ResumedCall[];
  /** Calls of this run that were already used (counted against maxToolCalls). */
  toolCallsUsed: number;
  /** Ids of this run's calls that executed successfully (kept out of duplicates no more). */
  executedCallIds: readonly string[];
  /**
   * Of those, the ones the person edited before allowing them: the arguments each ran with, by call id. A call is a
   * duplicate of what ran, not of the proposal the person changed. Default none.
   */
  executedEdits?: ReadonlyMap<string, ToolArguments>;
}

export type ResumedCall =
  /** Never announced: checked and gated now like any call. */
  | { call: ToolCall; state: 'new' }
  /** Announced and waiting: the restored ticket, with its own approval id and deadline. */
  | { call: ToolCall; state: 'waiting'; ticket: ApprovalTicket }
  /**
   * Decided, its decision reported, and not started: a call of the turn before it had not ended (calls run in the
   * model's order). It runs at its turn, with no second decision.
   */
  | { call: ToolCall; state: 'decided'; ticket: ApprovalTicket; outcome: DecisionOutcome }
  /** Its end is already known (interrupted while it ran, or decided against): only its tool-end is left to emit. */
  | { call: ToolCall; state: 'ended'; outcome: ToolOutcome; result: string; cut?: ResultCut };

export interface RunResult {
  runId: string;
  /** How the run ended, or `parked`: it has not, see `parked`. */
  reason: RunEndReason | 'parked';
  error?: string;
  /**
   * The whole conversation after the run: the input plus assistant turns and tool results. With `history`, a run
   * that parks or ends before it read the conversation back has only the messages it added since it let go of it.
   */
  messages: ChatMessage[];
  /** With `park`: the run let go of while its calls wait, to go on with (no run-end was emitted). */
  parked?: ParkedRun;
}

/**
 * A run waiting on the person, as data: the calls of its turn still to decide or run, what it had counted, and the
 * conversation unless the loop can read it back (`history`). It holds the calls' tickets, not their waits: nothing
 * of the loop is suspended meanwhile.
 */
export class ParkedRun {
  /**
   * @param messages The conversation, or undefined when it is read back (`history`) before the next model turn.
   * @param runMessages How many messages at the conversation's end are the run's own.
   * @param toolCallsUsed Calls of this run counted before the first of `calls`.
   */
  constructor(
    readonly messages: readonly ChatMessage[] | undefined,
    readonly runMessages: number,
    readonly toolCallsUsed: number,
    readonly succeeded: ReadonlySet<string> | undefined,
    readonly calls: readonly PlannedCall[],
    /** The tools the turn of `calls` offered, when fewer than the loop's enabled tools (some were turned off). */
    readonly offered?: readonly AnyTool[],
  ) {}

  /**
   * Resolves once one of the calls it waits on is settled (decided, timed out, or cancelled by `signal`): the run
   * can go on. Never rejects.
   */
  wake(signal: CancelSignal): Promise<unknown> {
    const waits: Promise<DecisionOutcome>[] = [];
    for (const { resumed } of this.calls) {
      if (resumed !== undefined && 'ticket' in resumed && resumed.reported === undefined) waits.push(resumed.ticket.wait(signal));
    }
    if (waits.length === 0) return Promise.resolve();
    // The usual case, one call waiting: its own wait, with no promise made for it.
    return waits.length === 1 ? waits[0]! : Promise.race(waits);
  }

  /** Ends the waits of a parked run that will not go on, as a loop stopped while its calls wait does: as cancelled. */
  abandon(): void {
    for (const { resumed } of this.calls) if (resumed !== undefined && 'ticket' in resumed) void resumed.ticket.wait(CANCELLED);
  }
}

interface PlannedCall {
  call: ToolCall;
  /** Set when the call cannot run whatever the person decides. */
  invalid?: string;
  /**
   * For a resumed run: the ticket it was announced with (and, for a parked run, the decision already reported on
   * it), or the end it already has.
   */
  resumed?: { ticket: ApprovalTicket; reported?: Reported } | { end: CallResult };
}

interface CallResult {
  outcome: ToolOutcome;
  result: string;
  /** What the tool left out of `result`, by its own count. */
  cut?: ResultCut;
  /** When the tool was started (ms since the epoch), whatever came of it; absent when it never was. */
  startedAt?: number;
  /** With a tool that was started: settles once the tool itself has (stopped), which may be after the call's end. */
  settled?: Promise<unknown>;
}

/** A decision as the loop reports it: an edited allow that a deny rule refuses carries that rule's verdict. */
type Reported = DecisionOutcome & { verdict?: PolicyVerdict };

/**
 * The agent loop: stream a model turn, gate and run its tool calls, feed the results back,
 * until the model answers without tools, the budget is spent, the run is cancelled or fails.
 * Every tool-start is followed by exactly one tool-end, whatever happens.
 */
export async function* runToolLoop(options: RunToolLoopOptions): AsyncGenerator<LoopEvent, RunResult, undefined> {
  const runId = options.runId ?? randomId('run', 12);
  const signal = options.signal ?? new Cancellation();
  const confirmSetting = options.confirmToolCalls ?? true;
  const confirm = typeof confirmSetting === 'function' ? confirmSetting : () => confirmSetting;
  const maxToolCalls = options.maxToolCalls ?? DEFAULT_MAX_TOOL_CALLS;
  const enabled = offeredTools(options.tools, options.enabledTools);
  const resume = options.resume;
  const parkedRun = resume instanceof ParkedRun ? resume : undefined;
  const turnedOff = options.turnedOff;
  /** The tools offered now, without those turned off at this moment. */
  const offeredNow = async (): Promise<readonly AnyTool[]> => {
    if (turnedOff === undefined) return enabled;
    const off = await turnedOff();
    return off.size === 0 ? enabled : enabled.filter((tool) => !off.has(tool.name));
  };
  /** What the current turn offered the model: its calls are checked against it. */
  let offered = parkedRun?.offered ?? enabled;
  const history = options.history;
  /** The conversation; while it is let go of (`history`), only the messages added since. */
  let messages: ChatMessage[] = parkedRun === undefined ? [...options.messages] : [...(parkedRun.messages ?? [])];
  /** Index of the run's first message in `messages`: call ids given since then are taken. */
  let runStart = parkedRun === undefined ? messages.length : messages.length - parkedRun.runMessages;
  /** While the conversation is let go of: how many messages of the run it ended with then. */
  let letGo = parkedRun !== undefined && parkedRun.messages === undefined ? parkedRun.runMessages : undefined;
  /** The run's messages at the conversation's end, held or not. */
  const runMessages = (): number => (letGo === undefined ? messages.length - runStart : letGo + messages.length);
  /**
   * Reads the conversation back before a model turn. The messages added since it was let go of were stored as they
   * were reported; they are taken as held here, so the model reads them exactly as they were made.
   */
  const readBack = async (): Promise<void> => {
    if (letGo === undefined) return;
    const added = messages;
    const read = await history!();
    const kept = read.length - added.length;
    // A host that did not store what the loop reported (or stored more) would have the model read another conversation.
    if (kept < letGo || added.some((message, i) => !sameTurn(message, read[kept + i]!))) {
      throw new Error(`The conversation read back (${read.length} messages) does not end with the ${added.length} this run added since it let go of it.`);
    }
    messages = read.slice(0, kept);
    for (const message of added) messages.push(message);
    runStart = kept - letGo;
    letGo = undefined;
  };
  const onMessage = options.onMessage;
  const append = (message: ChatMessage): void => {
    messages.push(message);
    onMessage?.(message);
  };
  // Created on first use: most runs execute few calls, and a run waiting on a decision should hold little.
  let succeeded: Set<string> | undefined;
  let toolCallsUsed = 0;

  if (resume instanceof ParkedRun) {
    toolCallsUsed = resume.toolCallsUsed;
    if (resume.succeeded !== undefined) succeeded = new Set(resume.succeeded);
    const parked = yield* runCalls(resume.calls, true);
    if (parked) return { runId, reason: 'parked', messages, parked };
    if (signal.aborted) {
      const done = runEnd(runId, messages, 'cancelled');
      yield done.event;
      return done.result;
    }
  } else if (resume) {
    toolCallsUsed = resume.toolCallsUsed;
    // The run's own messages are those after the person's message that started it: the call ids they gave are taken,
    // and its executed calls are found among them (another run's call may have had the same id).
    runStart = messages.findLastIndex((message) => message.role === 'user') + 1;
    if (resume.executedCallIds.length > 0) succeeded = executedKeys(messages, runStart, resume.executedCallIds, resume.executedEdits);
    if (history !== undefined) {
      // Read again before the next model turn: the calls of the last turn wait and run without it.
      letGo = messages.length - runStart;
      messages = [];
    }
    yield { type: 'status', text: 'Resumed after a server restart', resumed: true };
    // A call of that turn never put up is judged against what is offered now: a tool turned off meanwhile is not run.
    // One put up before the restart runs once allowed on its card, as in a run that did not restart (decideAndRun).
    offered = await offeredNow();
    const parked = yield* runCalls(resume.calls.map(resumedPlan));
    if (parked) return { runId, reason: 'parked', messages, parked };
    if (signal.aborted) {
      const done = runEnd(runId, messages, 'cancelled');
      yield done.event;
      return done.result;
    }
  } else {
    yield { type: 'run-start', runId, sessionId: options.sessionId };
    for (const text of options.notes ?? []) yield { type: 'status', text };
  }

  // Every turn but a new run's first follows tool calls (a resumed run's first, too: its calls just ended).
  let afterCalls = resume !== undefined;
  for (;;) {
    if (afterCalls && options.beforeNextTurn) await options.beforeNextTurn();
    afterCalls = true;
    await readBack();
    offered = await offeredNow();
    const budgetSpent = toolCallsUsed >= maxToolCalls;
    // A helper generator, let go of once it ends: its locals (request, extractor, raw parts, the model's stream)
    // are freed before the calls wait for decisions.
    const { turn, planned, failure } = yield* released(streamTurn({ model: options.model, messages, runStart, offered, budgetSpent, maxToolCalls, runId, signal, requester: options.requester }));
    const reasoning = turn.reasoning ?? '';

    if (signal.aborted || failure !== undefined) {
      if (turn.content !== '' || reasoning !== '') append(turn);
      const done = signal.aborted ? runEnd(runId, messages, 'cancelled') : runEnd(runId, messages, 'error', failure);
      yield done.event;
      return done.result;
    }

    for (const plan of planned) if (plan.invalid === undefined) plan.call = callWithDefaults(plan.call, offered);
    if (planned.length > 0) turn.toolCalls = planned.map((p) => p.call);
    append(turn);

    if (budgetSpent) {
      const done = runEnd(runId, messages, 'tool-budget');
      yield done.event;
      return done.result;
    }
    if (planned.length === 0) {
      const done = runEnd(runId, messages, 'done');
      yield done.event;
      return done.result;
    }

    const parked = yield* runCalls(planned);
    if (parked) return { runId, reason: 'parked', messages, parked };

    if (signal.aborted) {
      const done = runEnd(runId, messages, 'cancelled');
      yield done.event;
      return done.result;
    }
  }

  /**
   * Gates and runs the calls of one turn, in the model's order, appending each result to the conversation. With
   * `park`, answers a ParkedRun, having emitted nothing more, when it would wait on the person with nothing else to
   * do. `announcedAlready`: the calls of a parked run, whose turn was announced before it was parked.
   */
  async function* runCalls(planned: readonly PlannedCall[], announcedAlready = false): AsyncGenerator<LoopEvent, ParkedRun | undefined, undefined> {
    // Every gated call of the turn is put up for decision at once, so the person sees the whole batch and can
    // decide the calls in any order (or grant one and release its siblings); they still run in the model's order.
    // Sized to the turn: an array grown one index at a time reserves 17 places, and this one lives while calls wait.
    const announced = new Array<ApprovalTicket | undefined>(planned.length);
    const reported: (Reported | undefined)[] = [];
    /** Set when parking: the tickets go with the parked run, not to cancel. */
    let parking = false;
    /** Lets go of the run at call `at` (counted already), which waits, as do the calls after it that were announced. */
    const park = (at: number): ParkedRun => {
      parking = true;
      const calls = planned.slice(at).map((plan, offset): PlannedCall => {
        const ticket = announced[at + offset];
        if (ticket === undefined) return plan;
        const outcome = reported[at + offset];
        const resumed = outcome === undefined ? { ticket } : { ticket, reported: outcome };
        // Written out rather than spread: a spread object gets a hidden class of its own, kept as long as it waits.
        return plan.invalid === undefined ? { call: plan.call, resumed } : { call: plan.call, invalid: plan.invalid, resumed };
      });
      const count = runMessages();
      // Without `history`, a copy sized to the conversation: the loop's own array has room to grow, unused while the
      // run is parked. With it, the conversation is let go of: it is read back before the next model turn.
      const turnOffered = offered === enabled ? undefined : offered;
      if (history === undefined) return new ParkedRun(messages.slice(), count, toolCallsUsed - 1, succeeded, calls, turnOffered);
      messages = [];
      letGo = count;
      return new ParkedRun(undefined, count, toolCallsUsed - 1, succeeded, calls, turnOffered);
    };
    /** Whether to park at call `at`: it waits, and no announced call has a decision to report now, a cancel included. */
    const parkable = (at: number): boolean => options.park === true && !signal.aborted && announced[at] !== undefined && nothingToReport(announced, reported);

    /**
     * Waits for the decision on call `at`, put up to the person, reporting every decision among the announced calls
     * as it is made (a person may decide a later call first; the calls still run in the model's order), then acts on
     * it: the call as it ran and its result, or undefined to park at it. An allow the host could not store (it
     * throws DecisionNotStoredError in at the call's start, which it may write in one commit with the allow) has run
     * nothing: the call waits again, to be decided again.
     */
    async function* decideAndRun(at: number): AsyncGenerator<LoopEvent, { result: CallResult; ran: ToolCall } | undefined, undefined> {
      const { call } = planned[at]!;
      const ticket = announced[at]!;
      for (;;) {
        let outcome = reported[at];
        if (!outcome && soleUndecided(announced, reported) === at) {
          if (parkable(at)) return undefined;
          // The usual case, one call left to decide: waited on right here, no helper generator held meanwhile.
          const decided = (reported[at] = await reviewAllow(call, ticket, await ticket.wait(signal), enabled, options));
          if (yield* reportDecision(followedAtOnce(decisionEvent(call, ticket.approvalId, decided)), ticket, options)) outcome = decided;
          else reported[at] = undefined;
        }
        if (!outcome && parkable(at)) return undefined;
        outcome ??= yield* reportDecisionsUntil(at, planned, announced, reported, signal, enabled, options, parkable);
        if (!outcome) return undefined;
        if (outcome.decision !== 'allow') return { result: refusal(call, { ...outcome, decision: outcome.decision }), ran: call };
        const ran = outcome.editedArguments === undefined ? call : { ...call, arguments: outcome.editedArguments };
        // Put up, so its turn offered its tool: a setting changed since holds from the next turn, whether the run was
        // parked, or resumed after a restart, meanwhile (what the turn offered is not kept across those).
        const tool = enabled.find((candidate) => candidate.name === call.name);
        if (tool === undefined) return { result: { outcome: 'disabled', result: toolResultText.disabled(call.name, enabled.map((t) => t.name)) }, ran };
        // Put up before a restart or on another instance, when the tool was another: the allow was not for this one.
        if (toolVersion(tool) !== ticket.toolVersion) return { result: { outcome: 'error', result: toolResultText.toolChanged(call.name) }, ran };
        try {
          return { result: yield* runPlaced(tool, call, outcome, options, signal, { planned, announced, reported, offered }), ran };
        } catch (error) {
          if (!(error instanceof DecisionNotStoredError) || error.approvalId !== ticket.approvalId || !options.registry.reopen(ticket)) throw error;
          reported[at] = undefined;
        }
      }
    }
    try {
      for (let i = 0; i < planned.length; i++) {
        const resumed = planned[i]!.resumed;
        if (resumed && 'ticket' in resumed) {
          announced[i] = resumed.ticket;
          if (resumed.reported !== undefined) reported[i] = resumed.reported;
        }
      }
      const repeats = repeatsInTurn(planned);
      for (let i = 0; !announcedAlready && i < planned.length && !signal.aborted && toolCallsUsed + i < maxToolCalls; i++) {
        const { call, invalid, resumed } = planned[i]!;
        if (resumed) continue;
        // A repeat of an earlier call in this turn waits for its turn: whether it is a duplicate depends on how that one ends.
        if (repeats[i]) continue;
        const check = checkCall(call, invalid, offered, succeeded);
        // Only what waits on the person is settled here; a rule, a grant or confirmation off is asked again at the
        // call's turn, when what it looks at is as the call will find it.
        const confirming = confirm();
        const gate = check.ok && (await openGate(call, check.tool, confirming, options, runId, true));
        if (gate && gate.kind === 'ask') {
          announced[i] = gate.ticket;
          yield callingStatus(check.tool, gate, confirming);
          yield awaitingToolStart(call, gate, check.tool);
        }
      }

      for (let i = 0; i < planned.length; i++) {
        const { call, invalid, resumed } = planned[i]!;
        const ticket = announced[i];
        let result: CallResult;
        // The call as it ran: the model's, or the person's edit of it.
        let ran = call;
        if (resumed && 'end' in resumed) {
          toolCallsUsed++;
          result = resumed.end;
          // Ended before a restart, as the person edited it: what ran is the edit.
          const edited = resume instanceof ParkedRun ? undefined : resume?.executedEdits?.get(call.id);
          if (edited !== undefined) ran = { ...call, arguments: edited };
        } else if (ticket) {
          toolCallsUsed++;
          const settled = yield* decideAndRun(i);
          if (!settled) return park(i);
          ({ result, ran } = settled);
        } else if (signal.aborted) {
          yield toolStart(call, '', false);
          result = { outcome: 'cancelled', result: toolResultText.cancelled(call.name) };
        } else if (toolCallsUsed >= maxToolCalls) {
          yield toolStart(call, '', false);
          result = { outcome: 'disabled', result: toolResultText.overBudget(maxToolCalls) };
        } else {
          toolCallsUsed++;
          const check = checkCall(call, invalid, offered, succeeded);
          if (!check.ok) {
            yield toolStart(call, '', false);
            result = check.result;
          } else {
            // Only a name one of the offered tools has: the model's own words for a call that is refused stay on its card.
            yield { type: 'status', text: callingText(check.tool) };
            const batch = { planned, announced, reported, offered };
            /** The place among the running calls taken for a call let through unasked, before it is judged again. */
            let place: (() => void) | undefined;
            try {
              for (;;) {
                const confirming = confirm();
                const gate = await openGate(call, check.tool, confirming, options, runId);
                const letThrough = gate.kind === 'run' || gate.kind === 'granted' || (gate.kind === 'rule' && gate.verdict.effect === 'allow');
                if (!letThrough) {
                  place?.();
                  place = undefined;
                }
                const slots = options.toolSlots;
                if (letThrough && place === undefined && slots !== undefined) {
                  // Let through, but with no place free: it waits in line before anything of it is decided or stored,
                  // and is judged again once it has its place (confirmation turned back on, a rule or a grant gone
                  // meanwhile, here or on another instance, has it asked), as a call is judged at its turn.
                  place = slots.tryAcquire();
                  if (place === undefined) {
                    place = yield* waitInLine(slots, call, options, signal, batch);
                    if (place === undefined || signal.aborted) {
                      yield toolStart(call, '', false);
                      result = { outcome: 'cancelled', result: toolResultText.cancelled(call.name) };
                      break;
                    }
                    continue;
                  }
                }
                if (gate.kind === 'ask') {
                  announced[i] = gate.ticket;
                  if (gate.asked !== undefined && !confirming) yield callingStatus(check.tool, gate, confirming);
                  yield awaitingToolStart(call, gate, check.tool);
                  const settled = yield* decideAndRun(i);
                  if (!settled) return park(i);
                  ({ result, ran } = settled);
                  break;
                }
                // The start, the decision and the status that follows are one write for a host: one it takes back whole
                // when what let the call through changed meanwhile (PolicyChangedError), before anything ran.
                yield followedAtOnce(toolStart(call, '', false, check.tool));
                let outcome: Reported;
                if (gate.kind === 'rule') {
                  const { verdict } = gate;
                  yield followedAtOnce(ruleDecisionEvent(call, verdict));
                  outcome = verdict.effect === 'deny' ? { decision: 'deny', source: 'rule', reason: verdict.message ?? reasonText(verdict.description), verdict } : { decision: 'allow', source: 'rule' };
                } else {
                  outcome = gate.kind === 'granted' ? { decision: 'allow', source: 'grant', grantId: gate.grantId } : { decision: 'allow', source: 'confirmation-off' };
                  // Recorded before the call runs: a run without a person's decision says who let it through.
                  yield followedAtOnce(decisionEvent(call, '', outcome));
                }
                try {
                  // The place, if taken, is runPlaced's to give back from here on.
                  const placed = place;
                  place = undefined;
                  result =
                    outcome.decision === 'allow'
                      ? yield* runPlaced(check.tool, call, outcome, options, signal, batch, placed)
                      : refusal(call, { ...outcome, decision: outcome.decision });
                  break;
                } catch (error) {
                  // Nothing of the call was stored or run: it is judged again, with what the host read again.
                  if (!(error instanceof PolicyChangedError) || error.toolCallId !== call.id) throw error;
                }
              }
            } finally {
              // Let go of while the call held a place it never ran in (its consumer stopped the loop).
              place?.();
            }
          }
        }
        if (result.outcome === 'executed') (succeeded ??= new Set()).add(callKey(ran));
        const { content, cut } = capResult(result, options.maxToolResultChars ?? DEFAULT_MAX_TOOL_RESULT_CHARS);
        append({ role: 'tool', toolCallId: call.id, toolName: call.name, content });
        yield {
          type: 'tool-end',
          toolCallId: call.id,
          toolName: call.name,
          outcome: result.outcome,
          result: content,
          ...(cut === undefined ? {} : { cut }),
          ...(result.startedAt === undefined ? {} : { startedAt: result.startedAt }),
        };
      }
    } finally {
      // Also reached when the consumer stops iterating while calls wait: no slot may outlive the run (a parked run
      // takes its slots with it).
      if (!parking) for (const ticket of announced) void ticket?.wait(CANCELLED);
    }
    return undefined;
  }
}

function resumedPlan(resumed: ResumedCall): PlannedCall {
  switch (resumed.state) {
    case 'new':
      // Refused as it was before the restart: its arguments, empty as stored, are not what the model wrote.
      return resumed.call.unreadable === undefined ? { call: resumed.call } : { call: resumed.call, invalid: resumed.call.unreadable };
    case 'waiting':
      return { call: resumed.call, resumed: { ticket: resumed.ticket } };
    case 'decided':
      return { call: resumed.call, resumed: { ticket: resumed.ticket, reported: resumed.outcome } };
    case 'ended': {
      const { outcome, result, cut } = resumed;
      return { call: resumed.call, resumed: { end: cut === undefined ? { outcome, result } : { outcome, result, cut } } };
    }
  }
}

/** Whether a message read back is the one the loop added: the same role, and for a tool's result the same call. */
function sameTurn(added: ChatMessage, read: ChatMessage): boolean {
  return added.role === read.role && (added.role !== 'tool' || (read.role === 'tool' && added.toolCallId === read.toolCallId));
}

/**
 * The duplicate-check keys of the calls with these ids, found in the assistant turns from `start` on: each as it ran,
 * with the arguments the person edited it to (`edits`) where they did.
 */
function executedKeys(messages: readonly ChatMessage[], start: number, ids: readonly string[], edits: ReadonlyMap<string, ToolArguments> | undefined): Set<string> {
  const wanted = new Set(ids);
  const keys = new Set<string>();
  for (let i = start; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    for (const call of message.toolCalls ?? []) {
      if (!wanted.has(call.id)) continue;
      const edited = edits?.get(call.id);
      keys.add(callKey(edited === undefined ? call : { ...call, arguments: edited }));
    }
  }
  return keys;
}

/**
 * Waits until call `index` is decided, reporting every decision among the announced calls as it is made
 * (a person may decide a later call first). Answers the decision of call `index`.
 */
async function* reportDecisionsUntil(
  index: number,
  planned: readonly PlannedCall[],
  announced: readonly (ApprovalTicket | undefined)[],
  reported: (Reported | undefined)[],
  signal: CancelSignal,
  offered: readonly AnyTool[],
  rules: Rules & Pick<RunToolLoopOptions, 'registry' | 'sessionId'>,
  /** Whether to stop waiting, answering undefined, so the run can be parked at call `index`. */
  parkable: (at: number) => boolean = () => false,
): AsyncGenerator<LoopEvent, Reported | undefined, undefined> {
  for (;;) {
    if (parkable(index)) return undefined;
    // With one call left to decide (the usual case) its wait is awaited as is: no race, no wrapper promises.
    const only = soleUndecided(announced, reported);
    const next = only >= 0 ? { at: only, outcome: await announced[only]!.wait(signal) } : await Promise.race(decisionWaits(announced, reported, signal));
    const { call } = planned[next.at]!;
    const ticket = announced[next.at]!;
    const outcome = (reported[next.at] = await reviewAllow(call, ticket, next.outcome, offered, rules));
    const event = decisionEvent(call, ticket.approvalId, outcome);
    if (!(yield* reportDecision(next.at === index ? followedAtOnce(event) : event, ticket, rules))) reported[next.at] = undefined;
    else if (next.at === index) return outcome;
  }
}

/** Waits for `execution` (a call's run, or its place) while still reporting every decision made meanwhile on the calls after it. */
async function* runReportingDecisions<T>(
  execution: Promise<T>,
  planned: readonly PlannedCall[],
  announced: readonly (ApprovalTicket | undefined)[],
  reported: (Reported | undefined)[],
  signal: CancelSignal,
  offered: readonly AnyTool[],
  rules: Rules & Pick<RunToolLoopOptions, 'registry' | 'sessionId'>,
): AsyncGenerator<LoopEvent, T, undefined> {
  const finished = execution.then((result) => ({ result }));
  for (;;) {
    const waits = decisionWaits(announced, reported, signal);
    if (waits.length === 0) return await execution;
    const next = await Promise.race([finished, ...waits]);
    if ('result' in next) return next.result;
    const { call } = planned[next.at]!;
    const ticket = announced[next.at]!;
    const outcome = (reported[next.at] = await reviewAllow(call, ticket, next.outcome, offered, rules));
    if (!(yield* reportDecision(decisionEvent(call, ticket.approvalId, outcome), ticket, rules))) reported[next.at] = undefined;
  }
}

/**
 * Reports a decision on a call put up to the person. True once the host has taken it; false when the host could not
 * store a person's decision (it throws DecisionNotStoredError in at this event): the call is put back to waiting,
 * to be decided again, and nothing is done on the decision that was not stored.
 */
async function* reportDecision(event: LoopEvent, ticket: ApprovalTicket, options: Pick<RunToolLoopOptions, 'registry'>): AsyncGenerator<LoopEvent, boolean, undefined> {
  try {
    yield event;
    return true;
  } catch (error) {
    if (error instanceof DecisionNotStoredError && options.registry.reopen(ticket)) return false;
    throw error;
  }
}

/** Whether no announced call has an outcome that is not reported yet. */
function nothingToReport(announced: readonly (ApprovalTicket | undefined)[], reported: readonly (Reported | undefined)[]): boolean {
  for (let at = 0; at < announced.length; at++) if (announced[at]?.settled === true && !reported[at]) return false;
  return true;
}

/** The one announced call whose decision is not reported yet, or -1 when there are several (or none). */
function soleUndecided(announced: readonly (ApprovalTicket | undefined)[], reported: readonly (Reported | undefined)[]): number {
  let only = -1;
  for (let at = 0; at < announced.length; at++) {
    if (!announced[at] || reported[at]) continue;
    if (only >= 0) return -1;
    only = at;
  }
  return only;
}

/** One wait per announced call whose decision has not been reported yet. */
function decisionWaits(
  announced: readonly (ApprovalTicket | undefined)[],
  reported: readonly (Reported | undefined)[],
  signal: CancelSignal,
): Promise<{ at: number; outcome: DecisionOutcome }>[] {
  const waits: Promise<{ at: number; outcome: DecisionOutcome }>[] = [];
  announced.forEach((ticket, at) => {
    if (ticket && !reported[at]) waits.push(ticket.wait(signal).then((outcome) => ({ at, outcome })));
  });
  return waits;
}

function runEnd(runId: string, messages: ChatMessage[], reason: RunEndReason, error?: string): { event: LoopEvent; result: RunResult } {
  return {
    event: error === undefined ? { type: 'run-end', runId, reason } : { type: 'run-end', runId, reason, error },
    result: error === undefined ? { runId, reason, messages } : { runId, reason, error, messages },
  };
}

function offeredTools(tools: readonly AnyTool[], enabled: readonly string[] | undefined): readonly AnyTool[] {
  return enabled === undefined ? tools : tools.filter((tool) => enabled.includes(tool.name));
}

type CallCheck = { ok: true; tool: AnyTool } | { ok: false; result: CallResult };

/**
 * The call with the defaults its tool's schema declares for the arguments it leaves out (`toolDefaults`), so that
 * the card, the stored turn and the tool all hold the values the tool acts on. When some may not be among them, the
 * call's tool as its card shows it says so and why (`callTool`).
 */
function callWithDefaults(call: ToolCall, offered: readonly AnyTool[]): ToolCall {
  const tool = offered.find((candidate) => candidate.name === call.name);
  if (tool === undefined) return call;
  const { arguments: args, unshown } = toolDefaults(tool, call.arguments);
  const filled = args === call.arguments ? call : { ...call, arguments: deepFreeze(args) };
  if (unshown.length > 0) unshownDefaultsOf.set(filled, { tool, shown: { ...shownTool(tool), unshownDefaults: unshown } });
  return filled;
}

/** For a call whose tool may act on defaults its arguments do not show: the tool it was filled for, and what its card shows of it. */
const unshownDefaultsOf = new WeakMap<ToolCall, { tool: AnyTool; shown: ShownTool }>();

/** What a call's tool-start and ticket say of its tool: `shownTool`, and the defaults it may act on unshown (`callWithDefaults`). */
function callTool(call: ToolCall, tool: AnyTool): ShownTool {
  const unshown = unshownDefaultsOf.get(call);
  return unshown !== undefined && unshown.tool === tool ? unshown.shown : shownTool(tool);
}

/** The reasons a call is refused before anyone is asked: unreadable, unknown or disabled tool, repeated, invalid arguments. */
function checkCall(call: ToolCall, invalid: string | undefined, offered: readonly AnyTool[], succeeded: ReadonlySet<string> | undefined): CallCheck {
  if (invalid !== undefined) return { ok: false, result: { outcome: 'error', result: invalid } };
  const tool = offered.find((candidate) => candidate.name === call.name);
  if (!tool) return { ok: false, result: { outcome: 'disabled', result: toolResultText.disabled(call.name, offered.map((t) => t.name)) } };
  if (succeeded?.has(callKey(call))) return { ok: false, result: { outcome: 'duplicate', result: toolResultText.duplicate(call.name) } };
  const checked = checkArguments(tool, call.arguments);
  if (!checked.success) return { ok: false, result: { outcome: 'error', result: invalidArguments(call.name, checked.error) } };
  const unknown = unknownArguments(call.arguments, checked.data);
  if (unknown.length > 0) return { ok: false, result: { outcome: 'error', result: invalidArguments(call.name, unknownIssues(unknown)) } };
  const edged = blankEdgedArguments(tool, call.arguments);
  if (edged.length > 0) return { ok: false, result: { outcome: 'error', result: invalidArguments(call.name, { issues: edged.map((name) => ({ path: [JSON.stringify(name)], message: BLANK_EDGED_ARGUMENT })) }) } };
  return { ok: true, tool };
}

/** For each planned call, whether an identical call comes before it in the same turn. */
function repeatsInTurn(planned: readonly PlannedCall[]): boolean[] {
  const seen = new Set<string>();
  return planned.map(({ call }) => {
    const key = callKey(call);
    const repeat = seen.has(key);
    seen.add(key);
    return repeat;
  });
}

/** What makes two calls the same call, for the duplicate check. */
function callKey(call: ToolCall): string {
  return `${call.name}\u0000${canonicalJson(call.arguments)}`;
}

interface TurnInput {
  model: ChatModel;
  /** The conversation so far; the request gets a copy. */
  messages: readonly ChatMessage[];
  /** Index of the run's first message in `messages`: call ids given since then are taken. */
  runStart: number;
  offered: readonly AnyTool[];
  /** The model is then told so and offered no tools, and its calls are not planned. */
  budgetSpent: boolean;
  maxToolCalls: number;
  runId: string;
  signal: CancelSignal;
  requester: string | undefined;
}

interface StreamedTurn {
  turn: AssistantMessage;
  /** The turn's tool calls with their final ids; empty when the budget is spent, on failure or abort. */
  planned: PlannedCall[];
  failure: string | undefined;
}

function turnRequest(input: TurnInput): ChatRequest {
  const { messages, offered } = input;
  const requester = input.requester === undefined ? {} : { requester: input.requester };
  if (input.budgetSpent) return { messages: [...messages, { role: 'user', content: toolResultText.budgetNudge(input.maxToolCalls) }], tools: [], ...requester };
  const tools: ToolSpec[] = offered.map((tool) => ({ name: tool.name, description: tool.description, parameters: toolJsonSchema(tool) }));
  return { messages: [...messages], tools, ...requester };
}

/**
 * `yield* generator`, except that the generator is let go of as soon as it ends. `yield*` keeps it in the
 * delegating frame, and a finished generator still holds whatever its locals last held, for as long as that frame
 * lives: for a run waiting on a decision, as long as the wait. Ending early (return) ends the generator too.
 */
async function* released<T, R>(running: AsyncGenerator<T, R, undefined> | undefined): AsyncGenerator<T, R, undefined> {
  try {
    for (;;) {
      const step: IteratorResult<T, R> = await running!.next();
      if (step.done === true) {
        running = undefined;
        return step.value;
      }
      yield step.value;
    }
  } finally {
    await running?.return(undefined as R);
  }
}

/**
 * Streams one model turn: emits text and reasoning deltas, collects native and text-format tool calls
 * and plans them, so the request and the raw parts are gone before the calls wait for decisions.
 */
async function* streamTurn(input: TurnInput): AsyncGenerator<LoopEvent, StreamedTurn, undefined> {
  const { model, signal } = input;
  const request = turnRequest(input);
  const turn: AssistantMessage = { role: 'assistant', content: '' };
  const rawCalls: RawCall[] = [];
  // planCalls takes no more calls from the text than it runs: the rest it only needs to count.
  const extractor = new TextToolCallExtractor({ readCalls: MAX_TOOL_CALLS_PER_TURN });
  let failure: string | undefined;
  // A real AbortSignal for the model's client, only for as long as the turn streams.
  const link = linkedController(signal);
  try {
    for await (const part of abortable(model.stream(request, link.controller.signal), link.controller.signal)) {
      switch (part.type) {
        case 'text-delta':
          yield* shownEvents(extractor.push(part.text));
          break;
        case 'reasoning-delta':
          if (part.text !== '') yield* shownEvents(extractor.pushReasoning(part.text));
          break;
        case 'tool-call':
          rawCalls.push({ id: part.id, name: part.name, arguments: part.arguments });
          break;
        case 'waiting':
          // Said, or the run looks stuck: a turn may wait long behind other chats' turns.
          yield { type: 'status', text: `Waiting for a place at the model server: all ${part.places} requests it takes at once are in use, ${part.ahead} ${part.ahead === 1 ? 'turn' : 'turns'} ahead of this one` };
          break;
        case 'admitted':
          yield { type: 'status', text: 'Asking the model' };
          break;
        case 'finish':
          break;
      }
    }
  } catch (error) {
    failure = signal.aborted ? undefined : errorMessage(error);
  } finally {
    link.release();
    // Whatever the model's client still holds for this turn (a connection, a reader) is let go, also after a stream
    // that ended: the HTTP client keeps its fetch's state on the signal until then, about 2 KB that a run waiting on a
    // decision would hold (profile-server heap 1000: 12.6 KB of heap per waiting session with the abort, 14.5 without).
    // The abort costs the client an error of its own at each turn, which is the cheaper of the two.
    link.controller.abort(TURN_OVER);
  }
  const plan = !input.budgetSpent && failure === undefined && !signal.aborted;
  // Calls that will not run stay in the text, shown and kept: what the model wrote is not lost.
  const reply = extractor.finish({ callsRun: plan });
  yield* shownEvents(reply.parts);
  // Kept as the extractor tells it, not as it was streamed: text that turned out to be thinking (a lone `</think>`)
  // is kept as reasoning, so it is neither shown as the answer again nor sent back to the model as one.
  turn.content = reply.content;
  if (reply.reasoning !== '') turn.reasoning = reply.reasoning;
  const planned = plan ? planCalls(rawCalls, reply, input.runId, callIdsSince(input.messages, input.runStart)) : [];
  return { turn, planned, failure };
}

/** The events that show what the text tool-call extractor gave out. */
function* shownEvents(parts: readonly TextPart[]): Generator<LoopEvent, void, undefined> {
  for (const part of parts) yield { type: part.type === 'text' ? 'text-delta' : 'reasoning-delta', text: part.text };
}

/** A verdict that decides the call by itself. */
type DecidingVerdict = PolicyVerdict & { effect: 'allow' | 'deny' };

/** `ask`'s `asked`: the rules' ask verdict that put the call up (with confirmation off, it alone does). */
type Gate = { kind: 'run' } | { kind: 'granted'; grantId: string } | { kind: 'rule'; verdict: DecidingVerdict } | { kind: 'ask'; ticket: ApprovalTicket; asked?: PolicyVerdict };

/**
 * Whether the call is decided by a rule, runs without asking, is covered by a grant, or waits on a decision
 * (registered here, before its tool-start). A deny rule holds even with confirmation off, and so does an ask: a deny
 * rule that cannot tell whether it catches the call leaves it to the person, not to confirmation being off.
 */
async function openGate(call: ToolCall, tool: AnyTool, confirm: boolean, options: RunToolLoopOptions, runId: string, preview = false): Promise<Gate> {
  // Read before the rules are asked: a change that lands while they are asked counts as a change.
  const rulesVersion = options.policyVersion?.();
  const verdict = await options.policy?.(call, tool, preview ? { preview } : undefined);
  if (verdict !== undefined && isDeciding(verdict) && (verdict.effect === 'deny' || confirm)) return { kind: 'rule', verdict };
  const asked = verdict?.effect === 'ask' ? verdict : undefined;
  if (!confirm && (asked === undefined || asked.onlyWhenConfirming === true)) return { kind: 'run' };
  const executesCode = grantsNeedExactArguments(tool);
  const version = toolVersion(tool);
  // A grant for any call of the tool was not given for one a deny rule could not tell from a call it denies: only a
  // grant for its exact arguments (or the person) lets it run.
  const exactGrantsOnly = asked !== undefined && asked.onlyWhenConfirming !== true;
  const grant = options.registry.findGrant(options.sessionId, { toolName: call.name, arguments: call.arguments, executesCode, toolVersion: version, exactGrantsOnly });
  if (grant) return { kind: 'granted', grantId: grant.grantId };
  // Registered before tool-start is emitted: a decision sent the moment a client sees the event must find its slot.
  const ticket = options.registry.register({
    sessionId: options.sessionId,
    runId,
    toolCallId: call.id,
    toolName: call.name,
    arguments: call.arguments,
    executesCode,
    toolVersion: version,
    tool: callTool(call, tool),
    exactGrantsOnly,
    ...(exactGrantsOnly && asked !== undefined ? { askedBecause: { ruleId: asked.ruleId, reason: asked.description } } : {}),
    timeoutMs: options.decisionTimeoutMs ?? DEFAULT_DECISION_TIMEOUT_MS,
  });
  if (rulesVersion !== undefined) rulesVersionAt.set(ticket, rulesVersion);
  return asked === undefined ? { kind: 'ask', ticket } : { kind: 'ask', ticket, asked };
}

function isDeciding(verdict: PolicyVerdict): verdict is DecidingVerdict {
  return verdict.effect !== 'ask';
}

/** What the run says as it puts a call up: with confirmation off, why a rule had it asked (the card says it in either setting). */
function callingStatus(tool: AnyTool, gate: Extract<Gate, { kind: 'ask' }>, confirm: boolean): LoopEvent {
  if (gate.asked === undefined || confirm) return { type: 'status', text: callingText(tool) };
  return { type: 'status', text: `${callingText(tool)}. ${reasonText(gate.asked.description)}: asked, though confirmation is off` };
}

/**
 * "Calling: <name>" of an offered tool (the call's name is that tool's, see checkCall), made once per tool: the status
 * every run waiting on a call of it keeps in its log shares the one string rather than holding a copy (40 B or so).
 */
const callingTexts = new WeakMap<AnyTool, string>();
function callingText(tool: AnyTool): string {
  let text = callingTexts.get(tool);
  if (text === undefined) callingTexts.set(tool, (text = `Calling: ${tool.name}`));
  return text;
}

/** For each call put up to the person: the rules' version when it was (see `policyVersion`). */
const rulesVersionAt = new WeakMap<ApprovalTicket, number>();

/** What an allow's second look at the rules needs. */
type Rules = Pick<RunToolLoopOptions, 'policy' | 'policyVersion'>;

/** The decisions the loop follows at once with their call's start or end (see `endsAtOnce`). */
const followedAtOnceEvents = new WeakSet<LoopEvent>();

function followedAtOnce(event: LoopEvent): LoopEvent {
  followedAtOnceEvents.add(event);
  return event;
}

/**
 * Whether `event`, as this loop emitted it, is the decision on the call whose turn it is: then the loop's next event is
 * that call's start (an allow: the status saying it runs, or that it waits for a place) or its tool-end (a refusal, or
 * an allow the last checks refused), with nothing run or awaited between them, and a host may store the two in one
 * write. Also the tool-start of a call decided without asking (a rule, a grant, confirmation off): its decision
 * follows at once. False for every other event, and for a decision on a later call of the batch, reported while
 * another call waits or runs.
 */
export function endsAtOnce(event: LoopEvent): boolean {
  return followedAtOnceEvents.has(event);
}

function ruleDecisionEvent(call: ToolCall, verdict: DecidingVerdict): LoopEvent {
  return {
    type: 'tool-decision',
    toolCallId: call.id,
    approvalId: '',
    decision: verdict.effect,
    source: 'rule',
    ...(verdict.effect === 'deny' ? { reason: verdict.message ?? reasonText(verdict.description) } : {}),
    ruleId: verdict.ruleId,
    rule: verdict.description,
  };
}

function decisionEvent(call: ToolCall, approvalId: string, outcome: Reported): LoopEvent {
  const { verdict } = outcome;
  return {
    type: 'tool-decision',
    toolCallId: call.id,
    approvalId,
    decision: outcome.decision,
    source: outcome.source,
    ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
    ...(outcome.grantId === undefined ? {} : { grantId: outcome.grantId }),
    ...(verdict === undefined ? {} : { ruleId: verdict.ruleId, rule: verdict.description }),
    ...(outcome.editedArguments === undefined ? {} : { editedArguments: outcome.editedArguments }),
  };
}

/**
 * An allow of a waiting call is checked once more against the rules, with the call as it will run: a deny rule the
 * person added while it waited, or one that matches the arguments they edited it to (a call no rule has seen),
 * refuses it, as it would have refused the call when it was put up. No allow gets round a deny rule.
 */
async function reviewAllow(call: ToolCall, ticket: ApprovalTicket, outcome: DecisionOutcome, offered: readonly AnyTool[], rules: Rules & Pick<RunToolLoopOptions, 'registry' | 'sessionId'>): Promise<Reported> {
  const { policy } = rules;
  if (outcome.decision !== 'allow' || !policy) return outcome;
  const edited = outcome.editedArguments;
  // The call as put up was asked about then; unless the rules changed since, they would answer the same.
  const putUpWith = rulesVersionAt.get(ticket);
  if (edited === undefined && putUpWith !== undefined && rules.policyVersion?.() === putUpWith) return outcome;
  const tool = offered.find((candidate) => candidate.name === call.name);
  if (!tool) return outcome;
  const asRun = edited === undefined ? call : { ...call, arguments: edited };
  const preview = await policy(asRun, tool, { preview: true });
  // A grant for any call of the tool released a call a deny rule, changed since it was put up, cannot tell from one it
  // denies: such a call is released only by a grant for its exact arguments (see openGate). The judgement of the
  // waiting calls that marks it may not have come before the grant did (a rule added as the grant was made): it is
  // not run, and the model is told to call again, to be asked.
  if (preview?.effect === 'ask' && preview.onlyWhenConfirming !== true && outcome.source === 'grant' && !grantedExactly(outcome, rules)) {
    const reason = `${preview.message ?? reasonText(preview.description)} (it cannot tell this call from one it denies, and only a grant for these exact arguments, not one for any call of the tool, releases such a call; call it again to have the person asked)`;
    return { decision: 'deny', source: 'rule', reason, verdict: { ...preview, effect: 'deny', message: reason } };
  }
  // Only a deny acts here otherwise (the person's allow stands, an ask included: the person is who was to decide),
  // so only a deny is asked for as a decision that counts.
  if (preview?.effect !== 'deny') return outcome;
  const verdict = await policy(asRun, tool);
  if (verdict?.effect !== 'deny') return outcome;
  const reason = verdict.message ?? reasonText(verdict.description);
  return edited === undefined ? { decision: 'deny', source: 'rule', reason, verdict } : { decision: 'deny', source: 'rule', reason, editedArguments: edited, verdict };
}

/** Whether the grant that released a call covers its exact arguments (one revoked since counts as not). */
function grantedExactly(outcome: DecisionOutcome, rules: Pick<RunToolLoopOptions, 'registry' | 'sessionId'>): boolean {
  const grant = outcome.grantId === undefined ? undefined : rules.registry.listGrants(rules.sessionId).find((candidate) => candidate.grantId === outcome.grantId);
  return grant?.arguments !== undefined && grant.arguments !== null;
}

/** The result the model sees for a call that was not allowed; an edit the person made is told too. */
function refusal(call: ToolCall, outcome: Reported & { decision: Exclude<Decision, 'allow'> }): CallResult {
  const refused = refusalOf(call.name, outcome.decision, outcome.source, outcome.reason, outcome.verdict?.fromWorkspaceFile === true);
  const edited = outcome.editedArguments;
  return edited === undefined ? refused : { ...refused, result: toolResultText.edited(edited, refused.result, false) };
}

function refusalOf(toolName: string, decision: Exclude<Decision, 'allow'>, source: DecisionOutcome['source'], reason: string | undefined, fromWorkspaceFile = false): CallResult {
  switch (decision) {
    case 'deny':
      return source === 'rule'
        ? { outcome: 'denied', result: toolResultText.deniedByRule(toolName, reason ?? '', fromWorkspaceFile) }
        : { outcome: 'denied', result: toolResultText.denied(toolName, reason) };
    case 'timeout':
      return { outcome: 'timed-out', result: toolResultText.timedOut(toolName) };
    case 'cancel':
      return { outcome: 'cancelled', result: toolResultText.cancelled(toolName) };
  }
}

/** The announced calls of a turn and what was reported of them, for decisions made while a call waits or runs. */
interface Batch {
  planned: readonly PlannedCall[];
  announced: readonly (ApprovalTicket | undefined)[];
  reported: (Reported | undefined)[];
  offered: readonly AnyTool[];
}

/**
 * Runs an allowed call once it has a place among the calls running at once (`toolSlots`), reporting decisions on
 * the calls after it meanwhile. One that must wait for a place says so (see `waitInLine`), and one whose run is
 * cancelled before it has one ends unrun.
 */
async function* runPlaced(
  tool: AnyTool,
  call: ToolCall,
  /** What let the call through. */
  outcome: DecisionOutcome,
  options: RunToolLoopOptions,
  signal: CancelSignal,
  batch: Batch,
  /** A place taken already, which this gives back. Default: one is taken here. */
  placed?: () => void,
): AsyncGenerator<LoopEvent, CallResult, undefined> {
  const slots = options.toolSlots;
  const release = placed ?? (slots === undefined ? noRelease : (slots.tryAcquire() ?? (yield* waitInLine(slots, call, options, signal, batch))));
  if (release === undefined) return { outcome: 'cancelled', result: toolResultText.cancelled(call.name) };
  if (signal.aborted) {
    // Allowed as the run was cancelled (a server shutting down): it starts nothing, so it says nothing of starting,
    // which a host stores as the call begun.
    release();
    return { outcome: 'cancelled', result: toolResultText.cancelled(call.name) };
  }
  // Said before the tool starts, and stored by the host first: a call interrupted by a restart is known to have begun.
  let told = false;
  try {
    yield { type: 'status', text: `Running: ${call.name}`, toolCallId: call.id };
    told = true;
  } finally {
    // Let go of right there: the place goes back, the tool never started.
    if (!told) release();
  }
  const running = runAllowed(tool, call, outcome, options, signal);
  try {
    return yield* runReportingDecisions(running, batch.planned, batch.announced, batch.reported, signal, batch.offered, options);
  } finally {
    // The place is the tool's until the tool has stopped, even past its call's end (a tool slow to stop) or past
    // this loop (its consumer let go of it).
    void running.then((result) => result.settled).then(release, release);
  }
}

/**
 * Waits in line for a place, saying so (a status about the call), and reporting decisions on the batch meanwhile.
 * Answers what gives the place back, or undefined when the run was cancelled first.
 */
async function* waitInLine(slots: ToolSlots, call: ToolCall, options: RunToolLoopOptions, signal: CancelSignal, batch: Batch): AsyncGenerator<LoopEvent, (() => void) | undefined, undefined> {
  if (signal.aborted) return undefined;
  yield { type: 'status', text: `Waiting for a place to run: ${slots.size} of ${slots.max} tool calls are running`, toolCallId: call.id, waitingForPlace: true };
  const link = linkedController(signal);
  const waiting = slots.acquire(link.controller.signal);
  let release: (() => void) | undefined;
  let placed = false;
  try {
    release = yield* runReportingDecisions(waiting, batch.planned, batch.announced, batch.reported, signal, batch.offered, options);
    placed = true;
  } finally {
    if (!placed) {
      // Let go of while in line (its consumer stopped the loop): it leaves the line, or gives back a place handed
      // to it meanwhile.
      link.controller.abort();
      void waiting.then((late) => late?.());
    }
    link.release();
  }
  return release;
}

const noRelease = () => {};

/** Runs an allowed call: with the person's edited arguments when they changed them, and the model is told so. */
async function runAllowed(tool: AnyTool, call: ToolCall, outcome: DecisionOutcome, options: RunToolLoopOptions, signal: CancelSignal): Promise<CallResult> {
  const edited = outcome.editedArguments;
  if (edited === undefined) return runTool(tool, call, openedJudge(call, tool, outcome, options), options, signal);
  const asRun = { ...call, arguments: edited };
  const result = await runTool(tool, asRun, openedJudge(asRun, tool, outcome, options), options, signal);
  return { ...result, result: toolResultText.edited(edited, result.result, result.startedAt !== undefined) };
}

/**
 * The rules' look at what the tool of a call let through by `outcome` has opened (`ToolContext.judgeOpened`), held to
 * what let it through: a deny rule refuses it whoever did; a rule's allow stands only while a rule allows what was
 * opened; a call no rule decided (confirmation off, a grant for any call of the tool) only while no rule would have
 * it asked. The person's allow, and a grant for the exact arguments, stand but for a deny, as in `reviewAllow`: the
 * person may have allowed the very file a rule asked about. Undefined without rules.
 */
function openedJudge(call: ToolCall, tool: AnyTool, outcome: DecisionOutcome, options: RunToolLoopOptions): ToolContext['judgeOpened'] {
  const { policy } = options;
  if (policy === undefined) return undefined;
  const unasked = outcome.source === 'confirmation-off' || (outcome.source === 'grant' && !grantedExactly(outcome, options));
  return async (opened) => {
    // A look that decides no more than the call's own did: no hit is counted again.
    const verdict = await policy(call, tool, { preview: true, opened });
    if (verdict?.effect === 'deny') return { kind: 'denied', reason: verdict.message ?? reasonText(verdict.description), fromWorkspaceFile: verdict.fromWorkspaceFile === true };
    if (outcome.source === 'rule' && verdict?.effect !== 'allow') return verdict === undefined ? { kind: 'changed', allowedBy: 'rule' } : { kind: 'changed', allowedBy: 'rule', reason: reasonText(verdict.description) };
    if (unasked && verdict?.effect === 'ask' && verdict.onlyWhenConfirming !== true) return { kind: 'changed', allowedBy: 'unasked', reason: reasonText(verdict.description) };
    return undefined;
  };
}

async function runTool(tool: AnyTool, call: ToolCall, judgeOpened: ToolContext['judgeOpened'], options: RunToolLoopOptions, runSignal: CancelSignal): Promise<CallResult> {
  const args = call.arguments;
  // An allow that lands as the run is cancelled must not start anything.
  if (runSignal.aborted) return { outcome: 'cancelled', result: toolResultText.cancelled(tool.name) };
  if (options.currentTool) {
    // Checked at the moment of the call: an allow or a grant covers the tool as it was, not as it is now.
    const live = options.currentTool(tool.name);
    if (live === undefined) return { outcome: 'error', result: toolResultText.toolGone(tool.name) };
    if (live !== tool && toolVersion(live) !== toolVersion(tool)) return { outcome: 'error', result: toolResultText.toolChanged(tool.name) };
  }
  // Re-validated right before running: what runs is exactly what the schema accepts now.
  const given = structuredClone(args);
  const checked = checkArguments(tool, given);
  if (!checked.success) return { outcome: 'error', result: invalidArguments(tool.name, checked.error) };
  const unknown = unknownArguments(args, checked.data);
  if (unknown.length > 0) return { outcome: 'error', result: invalidArguments(tool.name, unknownIssues(unknown)) };
  const timeoutMs = options.toolCallTimeoutMs ?? DEFAULT_TOOL_CALL_TIMEOUT_MS;
  const link = linkedController(runSignal);
  const { controller } = link;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  let execution: ReturnType<AnyTool['execute']> | undefined;
  const startedAt = Date.now();
  try {
    // Run with the arguments as shown, which the schema accepted, not with what parsing made of them: a schema's
    // defaults (an MCP server's JSON Schema) would add values the person never saw.
    execution = tool.execute(given, { signal: controller.signal, timeoutMs, sessionId: options.sessionId, ...(judgeOpened === undefined ? {} : { judgeOpened }) });
    const settled = execution;
    const output = await raceAbort(execution, controller.signal);
    if (typeof output === 'string') return { outcome: 'executed', result: toolResultText.toolOutput(output), startedAt, settled };
    const outcome = output.isError ? 'error' : 'executed';
    const result = toolResultText.toolOutput(output.content);
    return output.cut === undefined ? { outcome, result, startedAt, settled } : { outcome, result, cut: output.cut, startedAt, settled };
  } catch (error) {
    const settled = execution;
    if (!runSignal.aborted && !timedOut) return { outcome: 'error', result: `Error: the tool "${tool.name}" failed: ${errorMessage(error)}`, startedAt, settled };
    // Told to stop: its end is reported once it has stopped (a process tool: once its processes are gone), not the
    // moment it was told, and says so when it had not stopped in time.
    const stopped = await settlesWithin(execution, options.toolStopWaitMs ?? DEFAULT_TOOL_STOP_WAIT_MS);
    if (runSignal.aborted) {
      return { outcome: 'cancelled', result: stopped ? toolResultText.cancelledWhileRunning(tool.name) : toolResultText.cancelledNotStopped(tool.name), startedAt, settled };
    }
    const still = stopped ? 'was stopped' : 'was told to stop, and had not stopped when this was written';
    return { outcome: 'error', result: `Error: the tool "${tool.name}" timed out after ${timeoutMs} ms and ${still}.`, startedAt, settled };
  } finally {
    clearTimeout(timer);
    link.release();
  }
}

/** The tool call ids of the assistant turns from `start` on; rebuilt per turn rather than kept while calls wait. */
function callIdsSince(messages: readonly ChatMessage[], start: number): Set<string> {
  const ids = new Set<string>();
  for (let i = start; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) ids.add(call.id);
  }
  return ids;
}

interface RawCall {
  id: string;
  name: string;
  arguments: unknown;
}

/**
 * The turn's calls with their ids, native ones first, at most MAX_TOOL_CALLS_PER_TURN of them and a note for the rest.
 * `text`: the calls read from the text, and how many more it held.
 */
function planCalls(
  native: readonly RawCall[],
  text: { calls: readonly TextToolCall[]; moreCalls: number },
  runId: string,
  usedIds: Set<string>,
): PlannedCall[] {
  const nextId = (preferred: string): string => {
    let id = preferred;
    for (let n = usedIds.size; id === '' || usedIds.has(id); n++) id = `call_${runId.slice(-8)}_${n}`;
    usedIds.add(id);
    return id;
  };
  let fromText = text.calls;
  const total = native.length + fromText.length + text.moreCalls;
  if (total > MAX_TOOL_CALLS_PER_TURN) {
    native = native.slice(0, MAX_TOOL_CALLS_PER_TURN);
    fromText = fromText.slice(0, MAX_TOOL_CALLS_PER_TURN - native.length);
  }
  const fromNative = native.map((raw): PlannedCall => {
    const parsed = parseToolArguments(raw.arguments);
    if (parsed.ok) return { call: { id: nextId(raw.id), name: raw.name, arguments: deepFreeze(parsed.value) } };
    return unreadable({ id: nextId(raw.id), name: raw.name, arguments: {} }, `Error: could not read the arguments of "${raw.name}": ${parsed.error}.`);
  });
  const fromTextFormat = fromText.map((text): PlannedCall =>
    text.ok
      ? { call: { id: nextId(''), name: text.name, arguments: deepFreeze(text.arguments) } }
      : unreadable({ id: nextId(''), name: text.name === '' ? 'unknown' : text.name, arguments: {} }, `Error: ${text.error}`),
  );
  // concat sizes the array exactly; it lives while the calls wait for decisions.
  const planned = fromNative.concat(fromTextFormat);
  if (total > MAX_TOOL_CALLS_PER_TURN) planned.push(leftOut(total - MAX_TOOL_CALLS_PER_TURN, nextId('')));
  return planned;
}

/** The one call that stands for the calls of a turn past its limit: its error result tells the model they did not run. */
function leftOut(count: number, id: string): PlannedCall {
  return unreadable(
    { id, name: 'unknown', arguments: {} },
    `Error: a turn may make at most ${MAX_TOOL_CALLS_PER_TURN} tool calls; the ${count} after the first ${MAX_TOOL_CALLS_PER_TURN} were not run. Make the ones still needed in your next turn.`,
  );
}

/** A call that cannot run, with why: kept on the call too (`unreadable`), which the turn stores. */
function unreadable(call: Omit<ToolCall, 'unreadable'>, why: string): PlannedCall {
  return { call: { ...call, unreadable: why }, invalid: why };
}

/** A call that asks nobody; `tool`, when one of the offered tools has its name, is what its card shows of it. */
function toolStart(call: ToolCall, approvalId: string, awaitingConfirmation: boolean, tool?: AnyTool): Extract<LoopEvent, { type: 'tool-start' }> {
  if (tool === undefined) return { type: 'tool-start', toolCallId: call.id, toolName: call.name, arguments: call.arguments, approvalId, awaitingConfirmation };
  return { type: 'tool-start', toolCallId: call.id, toolName: call.name, arguments: call.arguments, approvalId, awaitingConfirmation, tool: callTool(call, tool) };
}

/**
 * A call put up to the person, with the tool as it is now: the one the ticket's version names, so the card shows the
 * hints of the tool an allow runs. Built whole rather than spread from toolStart: a spread-then-extended object gets a
 * hidden class of its own.
 */
function awaitingToolStart(call: ToolCall, gate: Extract<Gate, { kind: 'ask' }>, tool: AnyTool): Extract<LoopEvent, { type: 'tool-start' }> {
  const { approvalId, expiresAt } = gate.ticket;
  const { asked } = gate;
  if (asked === undefined) return { type: 'tool-start', toolCallId: call.id, toolName: call.name, arguments: call.arguments, approvalId, awaitingConfirmation: true, expiresAt, tool: callTool(call, tool) };
  const askedBecause = { ruleId: asked.ruleId, reason: asked.description };
  if (asked.onlyWhenConfirming === true) return { type: 'tool-start', toolCallId: call.id, toolName: call.name, arguments: call.arguments, approvalId, awaitingConfirmation: true, expiresAt, tool: callTool(call, tool), askedBecause };
  return { type: 'tool-start', toolCallId: call.id, toolName: call.name, arguments: call.arguments, approvalId, awaitingConfirmation: true, expiresAt, tool: callTool(call, tool), askedBecause, exactGrantsOnly: true };
}

type ArgumentIssues = { issues: readonly { path: readonly PropertyKey[]; message: string }[] };

/**
 * The tool's schema's check of `value`. A check that runs out of the thread's stack (a schema from an MCP server whose
 * every level costs many frames, on arguments within the depth a call may have) refuses the call rather than end the run.
 */
function checkArguments(tool: AnyTool, value: unknown): { success: true; data: unknown } | { success: false; error: ArgumentIssues } {
  try {
    const checked = tool.parameters.safeParse(value);
    return checked.success ? { success: true, data: checked.data } : { success: false, error: checked.error };
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return { success: false, error: { issues: [{ path: [], message: "too deep to be checked against this tool's schema" }] } };
  }
}

function unknownIssues(paths: readonly string[]): { issues: { path: string[]; message: string }[] } {
  return { issues: paths.map((path) => ({ path: path.split('.'), message: UNKNOWN_ARGUMENT })) };
}

function invalidArguments(toolName: string, error: ArgumentIssues): string {
  const details = error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join('.') : '(arguments)'}: ${issue.message}`);
  return `Error: invalid arguments for "${toolName}": ${details.join('; ')}. Fix them and call again.`;
}

/**
 * The result as the model gets it: a text longer than `max` loses its middle. What was left out, by the tool and here,
 * is counted as it is cut; the marker in the text is for the model only (a tool's output can contain one too).
 */
function capResult({ result: text, cut }: CallResult, max: number): { content: string; cut: ResultCut | undefined } {
  if (text.length <= max) return { content: text, cut };
  const head = Math.floor(max * 0.7);
  const tailLength = max - head;
  const dropped = text.length - head - tailLength;
  return {
    content: `${text.slice(0, head)}\n[… ${dropped} characters cut …]\n${text.slice(text.length - tailLength)}`,
    cut: { ...cut, characters: (cut?.characters ?? 0) + dropped },
  };
}

/** Whether `promise` (if any) settles, either way, within `ms`; never rejects. */
async function settlesWithin(promise: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  if (promise === undefined) return true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const settled = promise.then(
    () => true,
    () => true,
  );
  const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Rejects as soon as `signal` aborts, whether or not the promise ever settles. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(toError(signal.reason));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(toError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(toError(error));
      },
    );
  });
}

/** Iterates `source`, stopping at once when `signal` aborts even if the source ignores it. */
async function* abortable<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T, void, undefined> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await raceAbort(iterator.next(), signal);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    void Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
