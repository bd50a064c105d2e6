import type { LeftOutCall, LoopEvent, PendingApproval, PersonDecision, RunEndReason, StoredMessage, ToolArguments, ToolCallRecord, TrackedLoopEvent } from '../lib/api-types';
import { stateFromRecord } from './recorded-call-state';
import {
  hasEnded,
  stateAfterAccepted,
  stateAfterDecision,
  stateAfterEnd,
  stateAfterStart,
  stateForTurn,
  type DecisionProblem,
  type ToolCallState,
  type ToolCallView,
} from './tool-call-state';

export type ChatItem =
  | { kind: 'user'; key: string; text: string }
  | { kind: 'assistant'; key: string; runId: string | null; text: string; reasoning: string }
  | { kind: 'tool'; key: string; call: ToolCallView }
  | { kind: 'run-end'; key: string; runId: string; reason: Exclude<RunEndReason, 'done'>; error: string | null };

export interface RunView {
  runId: string;
  /** "following" until run-end arrives. */
  phase: 'following' | 'ended';
  /** The last status line of the run ("Calling: terminal"), null once text flows. */
  status: string | null;
  /** Highest event sequence applied: a replayed or repeated event is ignored. */
  lastSeq: number;
  /**
   * True while the gated calls of a model turn are announced together, before any of them runs;
   * false from the first decision, tool-end or call that starts at its own turn.
   */
  announcing: boolean;
  /**
   * The call that started at its own turn rather than with a batch (no confirmation needed, a grant,
   * a repeat asked about later), until its tool-end: it is the one running, whatever batch calls still wait.
   */
  startedAtTurn: string | null;
}

export interface ChatState {
  items: ChatItem[];
  /** The run this view follows: at most one per session. */
  run: RunView | null;
  /** A problem with the stream itself (the server refused the message, the run vanished). */
  streamError: string | null;
}

/** A chat as read from the server. */
export interface ChatHistory {
  messages: readonly StoredMessage[];
  /** The run that wrote each of `messages`, at the same place (null for none): a call's row is found through it. */
  runIds: readonly (string | null)[];
  /** The ledger rows of the chat's calls, in the order they started. */
  toolCalls: readonly ToolCallRecord[];
  /** The page's records left out as damaged (`sessions.get`'s `leftOut`). Default none. */
  leftOut?: readonly string[];
  /** The page's calls whose ledger row is among them (`leftOutCalls`): each is shown as damaged. Default none. */
  leftOutCalls?: readonly LeftOutCall[];
  /** Calls still waiting for a decision. */
  pending: readonly PendingApproval[];
  /** The run still going, to follow: its turns are left out of the history and replayed from its events. */
  follow: string | null;
  /** Why the chat was read again, kept on show. Default none. */
  streamError?: string | null;
  /** How the last run ended when it did not finish its answer (failed, stopped): shown after the history. */
  lastRunEnd?: { runId: string; reason: Exclude<RunEndReason, 'done'>; error?: string };
}

export type ChatAction =
  | { type: 'history-loaded'; history: ChatHistory }
  | { type: 'run-followed'; runId: string; message?: string }
  | { type: 'event'; runId: string; tracked: TrackedLoopEvent }
  | { type: 'stream-failed'; runId: string; message: string }
  | { type: 'decision-sent'; key: string; decision: PersonDecision }
  /** The server took the decision; `reason` is the deny reason sent with it, `editedArguments` the allow's edit. */
  | { type: 'decision-accepted'; key: string; reason?: string; editedArguments?: ToolArguments; alwaysNotSaved?: string }
  | { type: 'decision-rejected'; key: string; problem: DecisionProblem };

export const initialChatState: ChatState = { items: [], run: null, streamError: null };

/** Folds run events and the person's decisions into what the chat shows. Pure: same input, same state. */
export function chatReducer(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case 'history-loaded':
      return stateFromHistory(action.history);
    case 'run-followed': {
      const items = action.message === undefined ? state.items : [...state.items, { kind: 'user' as const, key: `user:${action.runId}`, text: action.message }];
      return { items, run: followedRun(action.runId), streamError: null };
    }
    case 'event':
      return applyTracked(state, action.runId, action.tracked);
    case 'stream-failed':
      if (state.run?.runId !== action.runId || state.run.phase === 'ended') return state;
      return { ...state, run: { ...state.run, phase: 'ended', status: null }, streamError: action.message };
    case 'decision-sent':
      // The view keeps the approval id once decided: the card tells this tab's decision from another client's by it.
      return updateView(state, action.key, (call) =>
        call.state.status === 'awaiting-decision'
          ? { ...call, approvalId: call.state.approvalId, state: { status: 'deciding', approvalId: call.state.approvalId, expiresAt: call.state.expiresAt, decision: action.decision } }
          : call,
      );
    case 'decision-accepted': {
      const { editedArguments, alwaysNotSaved } = action;
      const accepted = updateView(state, action.key, (call) =>
        call.state.status !== 'deciding'
          ? call
          : {
              ...call,
              state: stateAfterAccepted(call.state.decision, action.reason),
              ...(editedArguments === undefined ? {} : { editedArguments }),
              ...(alwaysNotSaved === undefined ? {} : { alwaysNotSaved }),
            },
      );
      return accepted === state || accepted.run === null ? accepted : settleTurns(accepted, accepted.run);
    }
    case 'decision-rejected':
      return updateCall(state, action.key, (call) =>
        call.state.status === 'deciding' || call.state.status === 'awaiting-decision'
          ? { status: 'awaiting-decision', approvalId: call.state.approvalId, expiresAt: call.state.expiresAt, problem: action.problem }
          : call.state,
      );
  }
}

function applyTracked(state: ChatState, runId: string, tracked: TrackedLoopEvent): ChatState {
  const run = state.run;
  if (run?.runId !== runId) return state;
  const seq = sequenceOf(tracked.id, runId);
  if (seq !== undefined && seq <= run.lastSeq) return state;
  const next = applyEvent(state, run, tracked.data);
  return seq === undefined || next.run === null ? next : { ...next, run: { ...next.run, lastSeq: seq } };
}

function applyEvent(state: ChatState, run: RunView, event: LoopEvent): ChatState {
  const runId = run.runId;
  switch (event.type) {
    case 'run-start':
      return state;
    case 'status':
      return { ...state, run: { ...run, status: event.text } };
    case 'text-delta':
      return { ...state, run: { ...run, status: null }, items: appendToAssistant(state.items, runId, { text: event.text }) };
    case 'reasoning-delta':
      return { ...state, items: appendToAssistant(state.items, runId, { reasoning: event.text }) };
    case 'tool-start': {
      const key = toolKey(runId, event.toolCallId);
      if (state.items.some((item) => item.key === key)) return state;
      // A gated call joins the batch being announced, or opens one when nothing of the run is left to end;
      // any other call starts when its turn has come.
      const joinsBatch = event.awaitingConfirmation && (run.announcing || !hasUnendedCall(state.items, runId));
      const started: ToolCallView = { key, runId, toolCallId: event.toolCallId, toolName: event.toolName, arguments: event.arguments, state: stateAfterStart(event) };
      const { tool, askedBecause } = event;
      const gated = event.approvalId === '' ? {} : { approvalId: event.approvalId };
      const exact = event.exactGrantsOnly === true ? { exactGrantsOnly: true as const } : {};
      const call: ToolCallView = { ...started, ...gated, ...(tool === undefined ? {} : { tool }), ...(askedBecause === undefined ? {} : { askedBecause }), ...exact };
      const next: RunView = { ...run, announcing: joinsBatch, startedAtTurn: joinsBatch ? run.startedAtTurn : key };
      return settleTurns({ ...state, items: [...state.items, { kind: 'tool', key, call }], run: next }, next);
    }
    case 'tool-decision': {
      const next: RunView = { ...run, announcing: false };
      const { editedArguments } = event;
      const decided = updateView(state, toolKey(runId, event.toolCallId), (call) => ({
        ...call,
        state: stateAfterDecision(event),
        ...(editedArguments === undefined ? {} : { editedArguments }),
      }));
      return settleTurns({ ...decided, run: next }, next);
    }
    case 'tool-end': {
      const key = toolKey(runId, event.toolCallId);
      const next: RunView = { ...run, status: null, announcing: false, startedAtTurn: run.startedAtTurn === key ? null : run.startedAtTurn };
      const { cut } = event;
      const ended = updateView(state, key, (call) => ({ ...call, state: stateAfterEnd(call.state, event), ...(cut === undefined ? {} : { cut }) }));
      return settleTurns({ ...ended, run: next }, next);
    }
    case 'run-end': {
      const ended = { ...state, run: { ...run, phase: 'ended' as const, status: null } };
      if (event.reason === 'done') return ended;
      return { ...ended, items: [...state.items, { kind: 'run-end', key: `end:${runId}`, runId, reason: event.reason, error: event.error ?? null }] };
    }
  }
}

function appendToAssistant(items: ChatItem[], runId: string, delta: { text?: string; reasoning?: string }): ChatItem[] {
  const last = items.at(-1);
  if (last?.kind === 'assistant' && last.runId === runId) {
    return [...items.slice(0, -1), { ...last, text: last.text + (delta.text ?? ''), reasoning: last.reasoning + (delta.reasoning ?? '') }];
  }
  return [...items, { kind: 'assistant', key: `assistant:${runId}:${items.length}`, runId, text: delta.text ?? '', reasoning: delta.reasoning ?? '' }];
}

function updateCall(state: ChatState, key: string, next: (call: ToolCallView) => ToolCallState): ChatState {
  return updateView(state, key, (call) => {
    const updated = next(call);
    return updated === call.state ? call : { ...call, state: updated };
  });
}

/** The chat with one call's view replaced; the same state when `next` answers the call unchanged. */
function updateView(state: ChatState, key: string, next: (call: ToolCallView) => ToolCallView): ChatState {
  const index = state.items.findIndex((item) => item.key === key);
  const item = state.items[index];
  if (item?.kind !== 'tool') return state;
  const updated = next(item.call);
  if (updated === item.call) return state;
  const items = [...state.items];
  items[index] = { ...item, call: updated };
  return { ...state, items };
}

function hasUnendedCall(items: readonly ChatItem[], runId: string): boolean {
  return items.some((item) => item.kind === 'tool' && item.call.runId === runId && !hasEnded(item.call.state));
}

/**
 * The call the run is at: the one that started at its own turn, else the first of the run not ended
 * (calls run one at a time, in the order they were announced). None while a batch is being announced.
 */
function currentCallKey(items: readonly ChatItem[], run: RunView): string | null {
  if (run.startedAtTurn !== null) return run.startedAtTurn;
  if (run.announcing) return null;
  const current = items.find((item) => item.kind === 'tool' && item.call.runId === run.runId && !hasEnded(item.call.state));
  return current?.key ?? null;
}

/** Shows the run's allowed calls as running or waiting their turn, from where the run is. */
function settleTurns(state: ChatState, run: RunView): ChatState {
  const current = currentCallKey(state.items, run);
  let items: ChatItem[] | undefined;
  state.items.forEach((item, index) => {
    if (item.kind !== 'tool' || item.call.runId !== run.runId) return;
    const settled = stateForTurn(item.call.state, item.key === current);
    if (settled !== item.call.state) (items ??= [...state.items])[index] = { ...item, call: { ...item.call, state: settled } };
  });
  return items === undefined ? state : { ...state, items };
}

export function toolKey(runId: string, toolCallId: string): string {
  return `tool:${runId}:${toolCallId}`;
}

/** `<runId>:<seq>` → seq, when the id belongs to the run. */
function sequenceOf(eventId: string, runId: string): number | undefined {
  if (!eventId.startsWith(`${runId}:`)) return undefined;
  const seq = Number(eventId.slice(runId.length + 1));
  return Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined;
}

function stateFromHistory(history: ChatHistory): ChatState {
  const streamError = history.streamError ?? null;
  const { follow, messages } = history;
  const runStart = follow === null ? -1 : messages.findLastIndex((message) => message.role === 'user');
  if (follow === null) {
    const items = itemsFromHistory(messages, history);
    const ended = history.lastRunEnd;
    if (ended !== undefined) items.push({ kind: 'run-end', key: `end:${ended.runId}`, runId: ended.runId, reason: ended.reason, error: ended.error ?? null });
    return { items, run: null, streamError };
  }
  // A page with no message of the person's holds only the followed run's turns (its message is on an earlier page,
  // the page being full): the run's events show them, so nothing of the page is shown twice.
  if (runStart === -1) return { items: [], run: followedRun(follow), streamError };
  const userMessage = messages[runStart];
  const items = itemsFromHistory(messages.slice(0, runStart), history);
  if (userMessage?.role === 'user') items.push({ kind: 'user', key: `user:${follow}`, text: userMessage.content });
  return { items, run: followedRun(follow), streamError };
}

function followedRun(runId: string): RunView {
  return { runId, phase: 'following', status: null, lastSeq: 0, announcing: false, startedAtTurn: null };
}

/**
 * Stored turns shown after a reload, each call as its ledger row tells it. Tool call ids are only unique within a
 * run, so a row is found by its message's run and the call's id: matched in order alone, a row left out of the page
 * (damaged) would put the next run's row, its decision and what ran, on the call before.
 */
function itemsFromHistory(messages: readonly StoredMessage[], history: Pick<ChatHistory, 'runIds' | 'toolCalls' | 'pending' | 'leftOutCalls'>): ChatItem[] {
  // A call whose row was left out as damaged is shown so, never as finished; any other call with no row as recorded.
  const unreadable = new Set((history.leftOutCalls ?? []).map((call) => callKey(call.runId, call.toolCallId)));
  const records = new Map<string, ToolCallRecord[]>();
  for (const record of history.toolCalls) {
    const at = callKey(record.runId, record.toolCallId);
    const queue = records.get(at);
    if (queue) queue.push(record);
    else records.set(at, [record]);
  }
  const pending = new Map(history.pending.map((approval) => [approval.approvalId, approval]));
  const items: ChatItem[] = [];
  const calls = new Map<string, { at: number; record: ToolCallRecord | undefined; missing: Missing }>();
  // The calls of the last model turn with no result yet: a message other than a result closes them, and the model was
  // told each left open that it has no recorded result, as the server reads the chat for it.
  let open = new Map<string, number>();
  messages.forEach((message, index) => {
    if (message.role !== 'tool') {
      for (const at of open.values()) {
        const item = items[at];
        if (item?.kind === 'tool') items[at] = { ...item, call: { ...item.call, resultUnknownToModel: true } };
      }
      open = new Map();
    }
    switch (message.role) {
      case 'system':
        return;
      case 'user':
        items.push({ kind: 'user', key: `history:${index}`, text: message.content });
        return;
      case 'assistant':
        if (message.content !== '' || (message.reasoning ?? '') !== '') {
          items.push({ kind: 'assistant', key: `history:${index}`, runId: null, text: message.content, reasoning: message.reasoning ?? '' });
        }
        for (const call of message.toolCalls ?? []) {
          const key = `history:${index}:${call.id}`;
          const runId = history.runIds[index] ?? null;
          const record = runId === null ? undefined : records.get(callKey(runId, call.id))?.shift();
          const missing: Missing = runId !== null && unreadable.has(callKey(runId, call.id)) ? 'unreadable' : 'recorded';
          calls.set(call.id, { at: items.length, record, missing });
          open.set(call.id, items.length);
          const state = record === undefined ? { status: missing, result: null } : stateFromRecord(record, null, pending);
          const edited = record?.editedArguments ?? null;
          // A row written before cuts were recorded has none: its result shows no note, whatever its text says.
          const cut = record?.cut ?? null;
          // The tool as the call was put up; a row written before the ledger kept it has none (the card reads the tool list).
          const tool = record?.tool ?? null;
          const gated = record === undefined || record.approvalId === '' ? {} : { approvalId: record.approvalId };
          const exact = record?.exactGrantsOnly === true ? { exactGrantsOnly: true as const } : {};
          const view: ToolCallView = { key, runId: null, toolCallId: call.id, toolName: call.name, ...gated, ...exact, arguments: call.arguments, state };
          items.push({ kind: 'tool', key, call: { ...view, ...(edited === null ? {} : { editedArguments: edited }), ...(cut === null ? {} : { cut }), ...(tool === null ? {} : { tool }) } });
        }
        return;
      case 'tool': {
        open.delete(message.toolCallId);
        const found = calls.get(message.toolCallId);
        const item = found === undefined ? undefined : items[found.at];
        if (found !== undefined && item?.kind === 'tool') {
          const state = found.record === undefined ? { status: found.missing, result: message.content } : stateFromRecord(found.record, message.content, pending);
          items[found.at] = { ...item, call: { ...item.call, state } };
          calls.delete(message.toolCallId);
        }
        return;
      }
    }
  });
  return items;
}

/** How a stored call with no ledger row is shown: stored before the ledger, or its row left out as damaged. */
type Missing = 'recorded' | 'unreadable';

function callKey(runId: string, toolCallId: string): string {
  return `${runId}\u0000${toolCallId}`;
}

/**
 * An earlier part of a long chat, read on request (`sessions.get` with `before`): shown as it was recorded, above the
 * part the chat was read with. `start` is its first message's place in the chat, which keeps its keys apart from
 * every other part's.
 */
export function earlierItems(start: number, page: Pick<ChatHistory, 'messages' | 'runIds' | 'toolCalls' | 'leftOutCalls'>): ChatItem[] {
  const prefix = `earlier:${start}:`;
  return itemsFromHistory(page.messages, { ...page, pending: [] }).map((item) =>
    item.kind === 'tool' ? { ...item, key: prefix + item.key, call: { ...item.call, key: prefix + item.call.key } } : { ...item, key: prefix + item.key },
  );
}

/** Calls still waiting for the person, in order. */
export function undecidedCalls(state: Pick<ChatState, 'items'>): ToolCallView[] {
  return state.items.flatMap((item) =>
    item.kind === 'tool' && (item.call.state.status === 'awaiting-decision' || item.call.state.status === 'deciding') ? [item.call] : [],
  );
}
