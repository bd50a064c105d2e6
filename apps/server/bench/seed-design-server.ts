// The design Airlock started from, rebuilt in Node for the round-trip comparison, in its own process: a run's
// events go out as server-sent events on the HTTP response of the chat request, and a decision comes back as a
// POST on a second connection, which finds the waiting call in an in-memory map (approval id -> waiter) and wakes
// it. Nothing is stored, nothing is validated but the approval id and the session. The tool is the same
// list_directory on an empty folder the shipped server runs, so both do the same work besides the design.
// The process also serves the floor: a bare WebSocket echo, no tRPC and no Airlock.
// Prints one JSON line {url, echoUrl}; stops when stdin closes.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { createBuiltinTools } from '../src/tools';

const workspace = mkdtempSync(join(tmpdir(), 'airlock-seed-design-'));
const tool = createBuiltinTools({ workspace, sandbox: 'none' }).find((candidate) => candidate.name === 'list_directory')!;

interface Waiter {
  sessionId: string;
  decide(decision: 'allow' | 'deny'): void;
}
const pending = new Map<string, Waiter>();

const server = createServer((req, res) => {
  void readJson(req).then((body) => {
    if (req.url === '/chat') return chat(String(body.session_id), res);
    if (req.url === '/tool-confirm') return confirm(body, res);
    res.writeHead(404).end();
  });
});

async function chat(sessionId: string, res: ServerResponse): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  const send = (event: Record<string, unknown>) => res.write(`data: ${JSON.stringify(event)}\n\n`);
  const approvalId = randomBytes(16).toString('base64url');
  // Registered before the client can see the id, so a fast answer finds its waiter.
  const decided = new Promise<'allow' | 'deny'>((decide) => pending.set(approvalId, { sessionId, decide }));
  send({ type: 'tool_start', tool_name: tool.name, arguments: { path: '.' }, approval_id: approvalId });
  const decision = await decided;
  pending.delete(approvalId);
  const controller = new AbortController();
  const started = performance.now();
  const result = decision === 'allow' ? await tool.execute({ path: '.' }, { signal: controller.signal, timeoutMs: 60_000, sessionId }) : 'denied';
  // How long the tool itself took, for the bench to tell the tool's time from the design's.
  const toolMs = performance.now() - started;
  send({ type: 'tool_end', tool_name: tool.name, result: typeof result === 'string' ? result : result.content, tool_ms: toolMs });
  send({ type: 'done' });
  res.end();
}

function confirm(body: Record<string, unknown>, res: ServerResponse): void {
  const waiter = pending.get(String(body.approval_id));
  const resolved = waiter !== undefined && waiter.sessionId === body.session_id;
  if (resolved) waiter.decide(body.decision === 'allow' ? 'allow' : 'deny');
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ resolved }));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8') || '{}') as Record<string, unknown>;
}

server.on('connection', (socket) => socket.setNoDelay(true));
const echo = new WebSocketServer({ host: '127.0.0.1', port: 0 });
echo.on('connection', (socket) => socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary })));
await new Promise((resolve) => echo.once('listening', resolve));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (where: { address(): unknown }) => (where.address() as AddressInfo).port;
console.log(JSON.stringify({ url: `http://127.0.0.1:${port(server)}`, echoUrl: `ws://127.0.0.1:${port(echo)}` }));
process.stdin.resume();
process.stdin.once('end', () => {
  echo.close();
  server.closeAllConnections();
  server.close();
  rmSync(workspace, { recursive: true, force: true });
});
