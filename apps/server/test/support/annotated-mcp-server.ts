/**
 * A small stdio MCP server for browser tests: two note tools whose hints a card must show as this server's own
 * claims. One says it only reads and can be repeated; the other says it destroys and reaches beyond the machine.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'annotated-notes', version: '1.0.0' });

server.registerTool(
  'read_note',
  {
    description: 'Reads a note.',
    inputSchema: { name: z.string() },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  async ({ name }) => ({ content: [{ type: 'text', text: `Note "${name}" reads: milk, eggs.` }] }),
);

server.registerTool(
  'publish_note',
  {
    description: 'Publishes a note to the shared board, replacing what was there.',
    inputSchema: { name: z.string() },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  },
  async ({ name }) => ({ content: [{ type: 'text', text: `Note "${name}" published to the board.` }] }),
);

await server.connect(new StdioServerTransport());
