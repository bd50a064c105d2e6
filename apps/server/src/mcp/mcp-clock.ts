import type { Clock } from '../clock';

/**
 * The time an MCP connection keeps its floors by: the least time between two listings of a server's tools, between an
 * event stream's end and its reopening, and the rate its stderr is read at. The server's one clock (`Clock`).
 */
export type McpClock = Clock;

export { clockDelay, SYSTEM_CLOCK } from '../clock';
