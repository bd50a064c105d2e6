export {
  createAirlockClient,
  DEFAULT_MAX_UNREAD_EVENTS,
  UnreadEventsError,
  type AirlockClient,
  type AirlockClientOptions,
  type AttachRunInput,
  type ConfirmResult,
  type DecideInput,
  type PendingCall,
  type RunOptions,
  type RunStream,
  type SessionPage,
  type SessionSummary,
  type SessionWatchEvent,
  type StartRunInput,
  type StopResult,
  type ToolInfo,
} from './create-airlock-client';
export { airlockLink, DEFAULT_DECISION_TIMEOUT_MS } from './airlock-link';
export { AirlockSocket, AnswerUnknownError, DEFAULT_KEEP_ALIVE, isAnswerUnknown, isConnectionLost, isExpired, SocketError, UNPROVEN_SERVER_MESSAGE, type AirlockSocketOptions, type KeepAlive, type RejectionReason, type SocketState } from './airlock-socket';
export { DEFAULT_MAX_MESSAGE_BYTES } from './request-size';
export { connectionRejection } from './connection-rejection';
export { decisionRefusal, serverCode, type DecisionRefusal, type RefusedWhy } from './decision-refusal';
export { leftOutNotice } from './left-out-notice';
export { isServerError, type ServerError, type ServerErrorCode } from './server-error';
export { exchangeLinkCode, LinkCodeError, type ExchangeLinkCodeOptions, type LinkCodeProblem, type NoNewLinkReason } from './link-code';
export { parseStartupLink, resolveStartupLink, shownAddress, socketUrl, type ServerAddress, type StartupLink } from './startup-link';
export type { WebSocketConstructor, WebSocketLike } from './web-socket-like';
export type { AppRouter } from '@airlock/api';
export type { LoopEvent, LoopEventOf } from '@airlock/core';
/** A reason the server gives for a decision, in parts a client draws as they are (never parses); see `reasonParts`. */
export { reasonParts, type Reason, type ReasonPart, type ShownReason } from '@airlock/core';
/** The most characters of a deny's reason the server takes; a longer one is refused (`BAD_REQUEST`). */
export { MAX_REASON_LENGTH } from '@airlock/core';
/** The most characters of a message the server takes to start a run; a longer one is refused (`BAD_REQUEST`). */
export { MAX_MESSAGE_LENGTH } from '@airlock/core';
/** How every client shows what a model or a tool wrote: hidden, reordering and look-alike characters as `\u{…}` escapes. */
export { toVisibleText, visibleTextString, visibleArguments, type VisibleText } from '@airlock/core';
/** What every card says of a call whose tool may run with defaults its arguments do not show (a tool-start's `tool.unshownDefaults`). */
export { unshownDefaultsNote } from '@airlock/core';
/** What every card says of a call holding names its tool does not declare, or that could not be checked (`visibleArguments`' marks). */
export { UNCHECKED_ARGUMENT_NOTE, UNCHECKED_INNER_NOTE, uncheckedArgumentsNote, UNDECLARED_ARGUMENT_NOTE, UNDECLARED_INNER_NOTE, undeclaredArgumentsNote } from '@airlock/core';
