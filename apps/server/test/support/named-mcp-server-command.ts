import { hostileServer } from '../../src/mcp/fixtures/test-servers';

/** How to start a stdio MCP server offering one tool named `toolName` (`hostile-server.ts`, scenario `named`), for an MCP config file. */
export function namedMcpServerCommand(toolName: string): { command: string; args: string[]; env: Record<string, string> } {
  const { command, args, env } = hostileServer('named', { TOOL_NAME: toolName });
  return { command, args, env };
}
