import { LimitExceededError, type AnyTool } from '@airlock/core';
import type { ChatService } from './chat-service';

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
}

export interface AirlockServices {
  chat: ChatService;
  catalog: ToolCatalog;
  modelInfo(): ModelInfo;
}

export interface ConnectionLimits {
  /** Runs one connection may have going at once. Default 4. */
  maxConcurrentRuns?: number;
  /** New messages one connection may send per minute. Default 30. */
  messagesPerMinute?: number;
  /** Messages that may be sent back to back before the per-minute rate applies. Default 10. */
  messageBurst?: number;
}

/** Per-connection state: the runs it started and its message budget. */
export class ConnectionState {
  private readonly runIds = new Set<string>();
  private tokens: number;
  private refilledAt: number;
  private readonly maxRuns: number;
  private readonly perMinute: number;
  private readonly burst: number;

  constructor(
    readonly connectionId: string,
    limits: ConnectionLimits = {},
    private readonly now: () => number = Date.now,
  ) {
    this.maxRuns = limits.maxConcurrentRuns ?? 4;
    this.perMinute = limits.messagesPerMinute ?? 30;
    this.burst = limits.messageBurst ?? 10;
    this.tokens = this.burst;
    this.refilledAt = now();
  }

  /** Throws LimitExceededError when this connection may not start another run now. */
  admitRun(isActive: (runId: string) => boolean): void {
    for (const runId of this.runIds) if (!isActive(runId)) this.runIds.delete(runId);
    if (this.runIds.size >= this.maxRuns) throw new LimitExceededError('concurrent runs per connection', this.maxRuns);
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) / 60_000) * this.perMinute);
    this.refilledAt = now;
    if (this.tokens < 1) throw new LimitExceededError('messages per minute per connection', this.perMinute);
    this.tokens -= 1;
  }

  trackRun(runId: string): void {
    this.runIds.add(runId);
  }
}

export interface Context {
  services: AirlockServices;
  connection: ConnectionState;
}
