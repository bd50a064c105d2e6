import type { AppRouter } from '@airlock/api';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';

/** Every shape the UI uses is inferred from the router: nothing here is redeclared by hand. */
export type RouterInputs = inferRouterInputs<AppRouter>;
export type RouterOutputs = inferRouterOutputs<AppRouter>;

export type StreamInput = RouterInputs['chat']['stream'];
export type RunOptions = NonNullable<StreamInput['options']>;
/** What one `chat.stream` message carries over the wire: the event and its resumable id. */
export type TrackedLoopEvent = RouterOutputs['chat']['stream'] extends AsyncIterable<infer T> ? T : never;
export type LoopEvent = TrackedLoopEvent['data'];
export type LoopEventOf<T extends LoopEvent['type']> = Extract<LoopEvent, { type: T }>;
export type ToolOutcome = LoopEventOf<'tool-end'>['outcome'];
export type Decision = LoopEventOf<'tool-decision'>['decision'];
export type DecisionSource = LoopEventOf<'tool-decision'>['source'];
export type RunEndReason = LoopEventOf<'run-end'>['reason'];
export type ToolArguments = LoopEventOf<'tool-start'>['arguments'];

export type ConfirmInput = RouterInputs['chat']['confirmTool'];
export type ConfirmResult = RouterOutputs['chat']['confirmTool'];
export type PersonDecision = ConfirmInput['decision'];

export type SessionSummary = RouterOutputs['sessions']['list']['sessions'][number];
export type SessionDetail = RouterOutputs['sessions']['get'];
export type StoredMessage = SessionDetail['messages'][number];
export type Grant = RouterOutputs['grants']['list'][number];
export type ToolsList = RouterOutputs['tools']['list'];
export type ToolInfo = ToolsList['tools'][number];
export type ToolAnnotations = ToolInfo['annotations'];
export type ToolServer = ToolsList['servers'][number];
export type ModelInfo = RouterOutputs['model']['info'];
export type ToolCallRecord = SessionDetail['toolCalls'][number];
export type LeftOutCall = NonNullable<SessionDetail['leftOutCalls']>[number];
export type PendingApproval = RouterOutputs['chat']['pending'][number];
export type SessionUpdate = RouterInputs['sessions']['update'];
export type AuditQuery = RouterInputs['audit']['list'];
export type AuditPage = RouterOutputs['audit']['list'];
