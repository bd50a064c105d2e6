export { loadMcpConfig, parseMcpConfig, McpConfigError, MAX_MCP_SERVERS, MAX_MCP_SERVER_NAME_LENGTH } from './mcp-config';
export type { McpServerConfig, McpStdioServerConfig, McpHttpServerConfig, McpServersConfig } from './mcp-config';
export { McpManager, DEFAULT_MCP_CALL_TIMEOUT_MS, DEFAULT_MCP_CONNECT_TIMEOUT_MS, DEFAULT_MCP_RESTART_POLICY } from './mcp-manager';
export type { McpManagerOptions } from './mcp-manager';
export type { McpServerStatus, McpServerState, McpRestartPolicy, McpLogger } from './mcp-connection';
export { placeStdioServers } from './place-stdio-servers';
export type { PlaceStdioServersOptions, PlacedStdioServers } from './place-stdio-servers';
export { mcpToolName, flattenToolResult } from './mcp-tool';
