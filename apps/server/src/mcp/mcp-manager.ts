import type { AnyTool } from '@airlock/core';
import { consoleLine, logToConsole } from '../console-line';
import { SYSTEM_CLOCK, type McpClock } from './mcp-clock';
import type { McpServerConfig } from './mcp-config';
import { McpConnection, type McpLogger, type McpRestartPolicy, type McpServerStatus } from './mcp-connection';

export const DEFAULT_MCP_CALL_TIMEOUT_MS = 10 * 60 * 1000;
export const DEFAULT_MCP_CONNECT_TIMEOUT_MS = 30_000;
export const DEFAULT_MCP_RESTART_POLICY: Required<McpRestartPolicy> = {
  maxAttempts: 5,
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  stableAfterMs: 60_000,
};

export interface McpManagerOptions {
  /** The configured servers by name, as `loadMcpConfig` returns them. */
  servers: ReadonlyMap<string, McpServerConfig>;
  /** Upper bound on one tool call, in ms; the loop's own per-call timeout applies when it is shorter. Default 10 minutes. */
  callTimeoutMs?: number;
  /** Time allowed to start and initialize a server, in ms, and again to list its tools (every page). Default 30 s. */
  connectTimeoutMs?: number;
  /** How a server that crashes is restarted; each field has its own default. */
  restart?: McpRestartPolicy;
  /** Where connection problems are reported. Default the console, control characters shown as codes (`consoleLine`). */
  logger?: McpLogger;
  /**
   * The clock the floors between listings of a server's tools and between its event streams, and the rate its stderr
   * is read at, are kept by. Default the system's; a test's own, to count against.
   */
  clock?: McpClock;
}

/**
 * The configured MCP servers as Airlock tools, named `<server>__<tool>`. Annotations on these tools are hints:
 * whether a call may run is decided by the loop's approval gate, never here.
 */
export class McpManager {
  readonly #connections = new Map<string, McpConnection>();
  readonly #listeners = new Set<() => void>();
  readonly #logger: McpLogger;
  #started: Promise<void> | undefined;

  constructor(options: McpManagerOptions) {
    this.#logger = options.logger ?? { info: logToConsole, warn: (message) => console.warn(consoleLine(message)) };
    const restart = { ...DEFAULT_MCP_RESTART_POLICY, ...definedFields(options.restart ?? {}) };
    for (const [name, config] of options.servers) {
      this.#connections.set(
        name,
        new McpConnection({
          name,
          servers: [...options.servers.keys()],
          config,
          connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_MCP_CONNECT_TIMEOUT_MS,
          callTimeoutMs: options.callTimeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS,
          restart,
          logger: this.#logger,
          onChange: () => this.#emit(),
          clock: options.clock ?? SYSTEM_CLOCK,
        }),
      );
    }
  }

  /** Connects every server at once; resolves when each is ready or has failed. One broken server does not stop the others. */
  start(): Promise<void> {
    this.#started ??= Promise.all([...this.#connections.values()].map((connection) => connection.start())).then(() => undefined);
    return this.#started;
  }

  /** The current tools of every ready server. */
  tools(): AnyTool[] {
    const tools = new Map<string, AnyTool>();
    for (const connection of this.#connections.values()) {
      for (const tool of connection.tools) {
        // Names that would read as another server's get a hash (`mcpToolName`); were two still one, the first keeps it.
        if (!tools.has(tool.name)) tools.set(tool.name, tool);
      }
    }
    return [...tools.values()];
  }

  status(): McpServerStatus[] {
    return [...this.#connections.values()].map((connection) => connection.status);
  }

  /** Calls `listener` whenever a server's status or tools change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Closes every client and stops every server process. */
  async close(): Promise<void> {
    await Promise.all([...this.#connections.values()].map((connection) => connection.close()));
  }

  #emit(): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch (error) {
        this.#logger.warn(`an MCP change listener failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}

function definedFields<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}
