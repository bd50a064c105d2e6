import { z } from 'zod';
import { defineTool, type AnyTool } from '../tool';

/**
 * The MCP tool `read` of the server `files` (`files__read`, with one string argument `path`), as its server describes
 * it: tests make one per description to stand for the tool as a card showed it and as its server rewrote it since.
 * Each call it runs is pushed to `ran` as `<description>: <path>`, so a test sees which version ran, if any.
 */
export function mcpReadTool(description: string, ran: string[]): AnyTool {
  return defineTool({
    name: 'files__read',
    description,
    parameters: z.object({ path: z.string() }),
    source: 'mcp:files',
    remoteName: 'read',
    execute: async ({ path }) => {
      ran.push(`${description}: ${path}`);
      return 'content';
    },
  });
}
