import type { ToolContext } from '@airlock/core';
import { describe, expect, test, vi } from 'vitest';
import { httpMcpServer, sizedTool } from './fixtures/http-mcp-server';
import { McpManager } from './mcp-manager';
import { MAX_MESSAGES_PER_JSON_ANSWER } from './size-limited-fetch';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 30_000 });

function context(): ToolContext {
  return { signal: new AbortController().signal, timeoutMs: 20_000, sessionId: 'session-1' };
}

/** A notification whose text holds what a careless count would take for the ends and commas of messages. */
const notification = (n: number) => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `n${n}, ],[{"\\",}` } });

describe('a Streamable HTTP server whose JSON answer holds many messages', () => {
  // Found in review: the SDK parsed and handled every message of a JSON answer at once: 100,000 notifications in 9 MB
  // held Airlock's thread for 1.3 s and took 163 MB.
  test(`fails its call past ${MAX_MESSAGES_PER_JSON_ANSWER} messages saying so, answers one of that many, and the connection goes on`, async () => {
    let notifications = 0;
    await using remote = await httpMcpServer({
      json: true,
      tools: sizedTool,
      route: (_request, response, message) => {
        if (message?.method !== 'tools/call') return false;
        const answer = { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: `after ${notifications}` }] } };
        const batch = [...Array.from({ length: notifications }, (_, n) => notification(n)), answer];
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(batch));
        return true;
      },
    });
    const warnings: string[] = [];
    const mcp = new McpManager({ servers: new Map([['remote', { transport: 'http', url: remote.url, headers: {} }]]), logger: { info: () => undefined, warn: (line) => warnings.push(line) } });
    try {
      await mcp.start();
      const sized = mcp.tools().find((tool) => tool.name === 'remote__sized');
      notifications = 50_000;
      await expect(sized?.execute({ bytes: 1 }, context())).rejects.toThrow(new RegExp(`^the MCP server's answer held more than ${MAX_MESSAGES_PER_JSON_ANSWER} messages$`));
      notifications = MAX_MESSAGES_PER_JSON_ANSWER - 1;
      await expect(sized?.execute({ bytes: 1 }, context())).resolves.toStrictEqual({ content: `after ${MAX_MESSAGES_PER_JSON_ANSWER - 1}` });
      expect(mcp.status()).toStrictEqual([{ name: 'remote', transport: 'http', state: 'ready', toolCount: 1 }]);
      expect(warnings).toStrictEqual([`MCP server "remote": the MCP server's answer held more than ${MAX_MESSAGES_PER_JSON_ANSWER} messages`]);
    } finally {
      await mcp.close();
    }
  });
});
