import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

/** How to start `annotated-mcp-server.ts` over stdio: node with tsx, so a test can name it in an MCP config file. */
export function annotatedMcpServerCommand(): { command: string; args: string[] } {
  const tsx = pathToFileURL(require.resolve('tsx')).href;
  const script = fileURLToPath(new URL('./annotated-mcp-server.ts', import.meta.url));
  return { command: process.execPath, args: ['--import', tsx, script] };
}
