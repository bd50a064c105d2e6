import { toolResultText, type ChatMessage, type Decision, type LoopEvent, type ToolCall, type ToolOutcome } from '@airlock/core';
import type { AirlockStore, AppendEventInput, ToolCallRecord } from './store';

/** How a call ends: its outcome and what the model is told. */
export interface CallEnd {
  outcome: ToolOutcome;
  result: string;
}

/**
 * A call refused, timed out or cancelled before it ran, as its ledger row's decision says. A rule's deny is told as
 * the loop tells it, the rule's (and from the workspace's rules file, see ruleFromWorkspaceFile): its reason, perhaps
 * written into the workspace, is no word of the person's; and the arguments the person edited the call to first.
 */
export function refusalOf(
  toolName: string,
  decision: Exclude<Decision, 'allow'>,
  record: Pick<ToolCallRecord, 'source' | 'reason' | 'decidedByRule' | 'decidedByRuleFromWorkspaceFile' | 'editedArguments'>,
): CallEnd {
  const refused = refusalOfDecision(toolName, decision, record);
  return record.editedArguments === null ? refused : { ...refused, result: toolResultText.edited(record.editedArguments, refused.result, false) };
}

/**
 * Whether the rule that decided a call came from the workspace's rules file: where its row says so, or by its id,
 * which for such a rule begins "workspace-file:" (made by the server's workspace rules file). A rule's deny of a call
 * allowed first (the person's edit, a grant) is written from its tool-decision event, which does not carry the origin.
 */
export function ruleFromWorkspaceFile(record: Pick<ToolCallRecord, 'decidedByRule' | 'decidedByRuleFromWorkspaceFile'>): boolean {
  return record.decidedByRuleFromWorkspaceFile === true || record.decidedByRule?.startsWith('workspace-file:') === true;
}

function refusalOfDecision(toolName: string, decision: Exclude<Decision, 'allow'>, record: Pick<ToolCallRecord, 'source' | 'reason' | 'decidedByRule' | 'decidedByRuleFromWorkspaceFile'>): CallEnd {
  switch (decision) {
    case 'deny':
      return record.source === 'rule'
        ? { outcome: 'denied', result: toolResultText.deniedByRule(toolName, record.reason ?? '', ruleFromWorkspaceFile(record)) }
        : { outcome: 'denied', result: toolResultText.denied(toolName, record.reason ?? undefined) };
    case 'timeout':
      return { outcome: 'timed-out', result: toolResultText.timedOut(toolName) };
    case 'cancel':
      return { outcome: 'cancelled', result: toolResultText.cancelled(toolName) };
  }
}

/**
 * How a call whose ledger row has no end came to end, once its run is known to be over: interrupted when it had
 * started (it may have done part or all of its work), cancelled when it never did, refused as decided otherwise.
 */
export function endOfUnended(record: ToolCallRecord): CallEnd {
  if (record.decision === 'allow' || record.decision === null) {
    if (record.startedAt !== null) return { outcome: 'interrupted', result: toolResultText.endNotStored(record.toolName) };
    return { outcome: 'cancelled', result: toolResultText.notStartedBeforeRunStopped(record.toolName) };
  }
  return refusalOf(record.toolName, record.decision, record);
}

export interface CloseUnendedInput {
  runId: string;
  sessionId: string;
  /** Calls the conversation holds no result for at its end: their results are written as their tool messages. */
  answer: ReadonlySet<string>;
  /** Why the run stopped, for its stored run-end. */
  error: string;
  at: number;
  /** With a cluster: the writer's fencing token for the run. */
  fence?: number;
  /**
   * The run is set aside for a damaged record: a last event or call rows that do not read count as none (a run-end is
   * written; no call gets an end), rather than failing the write. Default false.
   */
  damaged?: boolean;
}

/** What closeUnendedCalls wrote. */
export interface ClosedRun {
  /** The calls it ended, and how. */
  calls: { toolCallId: string; toolName: string; outcome: ToolOutcome }[];
  /** The results it added to the conversation (see CloseUnendedInput.answer). */
  messages: ChatMessage[];
}

/**
 * Writes the end of a run that is over while its store says otherwise (its calls' ends, or its own, could not be
 * stored): a tool-end for each of its ledger rows with no end (see endOfUnended), then its run-end, in one write. A
 * run whose run-end is stored has every call's end before it: nothing is written (undefined), after one read.
 */
export async function closeUnendedCalls(store: AirlockStore, input: CloseUnendedInput): Promise<ClosedRun | undefined> {
  const readable = <T>(read: Promise<T>, otherwise: T): Promise<T> => (input.damaged === true ? read.catch(() => otherwise) : read);
  const last = await readable(store.loadLastEvent(input.runId), undefined);
  if (last?.type === 'run-end') return undefined;
  const unended = (await readable(store.listRunToolCalls(input.runId), [])).filter((record) => record.outcome === null);
  const closed: ClosedRun = { calls: [], messages: [] };
  let seq = await store.lastEventSeq(input.runId);
  const write = (event: LoopEvent, extra: Partial<AppendEventInput> = {}): AppendEventInput => ({
    runId: input.runId,
    sessionId: input.sessionId,
    seq: ++seq,
    event,
    at: input.at,
    ...(input.fence === undefined ? {} : { fence: input.fence }),
    ...extra,
  });
  const inputs = unended.map((record) => {
    const { outcome, result } = endOfUnended(record);
    const event: LoopEvent = { type: 'tool-end', toolCallId: record.toolCallId, toolName: record.toolName, outcome, result, ...(outcome === 'interrupted' && record.startedAt !== null ? { startedAt: record.startedAt } : {}) };
    const message: ChatMessage = { role: 'tool', toolCallId: record.toolCallId, toolName: record.toolName, content: result };
    const answered = input.answer.has(record.toolCallId);
    closed.calls.push({ toolCallId: record.toolCallId, toolName: record.toolName, outcome });
    if (answered) closed.messages.push(message);
    return write(event, { ledger: { kind: 'end', toolCallId: record.toolCallId, outcome, result, endedAt: input.at }, ...(answered ? { messages: [message] } : {}) });
  });
  inputs.push(write({ type: 'run-end', runId: input.runId, reason: 'error', error: input.error }));
  await store.appendEvents(inputs);
  return closed;
}

/** For the log: the calls a closed run's end recorded, and how each ended. */
export function closedCallsLine(runId: string, closed: ClosedRun): string {
  const calls = closed.calls.map((call) => `${call.toolName} (${call.toolCallId}) ${call.outcome}`);
  return `Run ${runId} had stopped without its end stored; recorded now${calls.length === 0 ? '' : `, with ${calls.join(', ')}`}`;
}

/** The error a run's end written afterwards says (see closeUnendedCalls). */
export const RUN_END_NOT_STORED = 'The run stopped before its end could be stored.';

/**
 * The conversation with a result for each call of an assistant turn that has none before the next message that is
 * not a tool's (a call of an earlier run whose end was never stored): a model server refuses a conversation with a
 * call left unanswered, and the model should know the call may have run. The last turn's calls are left as they are:
 * they may be going. The same array when nothing is missing.
 */
export function answerUnansweredCalls(messages: ChatMessage[]): ChatMessage[] {
  let answered: ChatMessage[] | undefined;
  let open: ToolCall[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      open = open.filter((call) => call.id !== message.toolCallId);
    } else if (open.length > 0) {
      answered ??= messages.slice(0, index);
      answered.push(...open.map((call): ChatMessage => ({ role: 'tool', toolCallId: call.id, toolName: call.name, content: toolResultText.endNotStored(call.name) })));
      open = [];
    }
    answered?.push(message);
    if (message.role === 'assistant') open = [...(message.toolCalls ?? [])];
  });
  return answered ?? messages;
}
