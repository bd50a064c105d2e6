export { appRouter, createCallerFactory, type AppRouter, type SessionWatchEvent } from './router';
export { ChatService, type ChatServiceOptions, type ConfirmInput, type RunOptions, type SessionSummary, type SessionPage, type SessionDetail, type SessionChange, type StopAnswer } from './chat-service';
export { ConnectionState, LeftRuns, type Context, type AirlockServices, type RuleService, type RuleView, type WorkspaceRulesStatus, type WorkspaceTrust, type WorkspaceTrustChoice, type ToolCatalog, type ToolServerStatus, type ModelInfo, type ToolSandboxInfo, type ConnectionLimits, type ConnectionOptions } from './context';
export { ConnectionRates, LeftRates, type LeftRatesOptions, type RateSettings } from './connection-rates';
export { toTRPCError } from './error-mapping';
export { clientClockOffset, DecisionPastDeadlineError, NoClientClockError } from './decision-deadline';
export { EventLog, LogFollower, parseEventId, type SendWindow, type Waker, type FollowerBinding, type SubscriptionPlaces } from './event-log';
export { storedSessionSchema, type StoredSession } from './session-store';
export { MemoryStore } from './memory-store';
export { ToolSettingsService, TOOL_SETTINGS_KEY, type StoredToolSettings, type ToolSettingsServiceOptions } from './tool-settings-service';
export * from './tool-settings';
export { streamInputSchema, confirmInputSchema, runOptionsSchema, sessionUpdateSchema, auditQuerySchema, MAX_EDITED_ARGUMENTS_BYTES } from './schemas';
export type { LoopEvent, ChatMessage, ToolOutcome, Decision, PendingApproval, Grant } from '@airlock/core';
export { MAX_AUDIT_PAGE_CHARS } from './store';
export { DEFAULT_SESSION_PAGE, MAX_SESSION_PAGE } from './session-cursor';
export { MAX_SESSION_SEARCH, searchSessionPage, titleMatches } from './session-search';
export { StoreUnavailableError, type StoreUnavailableReason } from './store-unavailable-error';
export { RunPausedError } from './run-paused-error';
export { RunStoppedError } from './run-stopped-error';
export { DamagedRecordError, damagedRecordIn, type DamagedRow } from './damaged-record-error';
export type {
  AirlockStore,
  StoredSessionSummary,
  SessionChanges,
  SessionPageQuery,
  SessionPosition,
  StoredRun,
  RunBeginning,
  DecidedBy,
  LedgerChange,
  AppendEventInput,
  UnaskedAllow,
  EventPage,
  ToolCallRecord,
  AuditQuery,
  AuditPage,
  StoredGrant,
  StoredRule,
  MessageRun,
  MessagePage,
  MessagePageQuery,
  LeftOutCall,
} from './store';
export * from './rules';
export {
  FencedError,
  encodeClusterMessage,
  decodeClusterMessage,
  eventMessage,
  renewalIntervalMs,
  type Cluster,
  type ClusterMessage,
  type ClaimDecisionInput,
  type ClaimDecisionResult,
  type HoldOff,
  type PendingApprovalRecord,
  type RenewedLeases,
} from './cluster';
