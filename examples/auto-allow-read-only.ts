// Sends one message to a running Airlock server and decides its tool calls: read-only tools (by the annotations the
// server lists) are allowed at once, anything else is asked on stdin. Every decision is written as one JSON line to
// the ledger (stdout, or --ledger <file>); the answer goes to stderr.
//
//   AIRLOCK_URL='http://127.0.0.1:7700/#token=…' node --import tsx examples/auto-allow-read-only.ts 'list the files'
import { createAirlockClient, parseStartupLink, socketUrl, type DecideInput, type LoopEventOf, type ToolInfo } from '@airlock/client';
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';

interface LedgerEntry {
  at: string;
  sessionId: string;
  runId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  decision: 'allow' | 'deny';
  by: 'read-only rule' | 'person';
  reason?: string;
  /** What the server answered: "resolved", or why it did not take the decision. */
  status: string;
}

const { values, positionals } = parseArgs({ allowPositionals: true, options: { ledger: { type: 'string' }, session: { type: 'string' } } });
const message = positionals.join(' ').trim();
if (message === '' || process.env.AIRLOCK_URL === undefined) {
  console.error('usage: AIRLOCK_URL=<start-up link or URL> [AIRLOCK_TOKEN=…] auto-allow-read-only.ts [--ledger file] [--session id] <message>');
  process.exit(2);
}
const link = parseStartupLink(process.env.AIRLOCK_URL);
const token = process.env.AIRLOCK_TOKEN ?? link.token;
const writeLedger = (entry: LedgerEntry) => {
  const line = `${JSON.stringify(entry)}\n`;
  if (values.ledger === undefined) process.stdout.write(line);
  else appendFileSync(values.ledger, line);
};

/** Read-only and nothing more: a tool that also writes, deletes or runs code is asked about. */
const autoAllowed = (tool: ToolInfo | undefined) => tool !== undefined && tool.annotations.readOnly && !tool.annotations.destructive && !tool.annotations.executesCode;

const answers = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
async function ask(call: LoopEventOf<'tool-start'>): Promise<{ decision: 'allow' } | { decision: 'deny'; reason: string }> {
  console.error(`\n${call.toolName} ${JSON.stringify(call.arguments, null, 2)}\nallow? y = yes, anything else = no (what you type is the reason for the model): `);
  const next = await answers.next();
  const line = next.done === true ? '' : next.value.trim();
  if (line === 'y' || line === 'yes') return { decision: 'allow' };
  return { decision: 'deny', reason: line === '' ? 'no answer on stdin' : line };
}

const airlock = createAirlockClient({ url: socketUrl(link.url), token, WebSocket, clientLabel: 'auto-allow-read-only example' });
try {
  const { tools } = await airlock.trpc.tools.list.query();
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const sessionId = values.session ?? `example_${Date.now()}`;
  const run = airlock.startRun({ sessionId, message });
  for await (const event of run) {
    if (event.type === 'text-delta') process.stderr.write(event.text);
    if (event.type === 'run-end') process.stderr.write(`\n[run ${event.reason}${event.error === undefined ? '' : `: ${event.error}`}]\n`);
    if (event.type !== 'tool-start' || !event.awaitingConfirmation) continue;
    const rule = autoAllowed(byName.get(event.toolName));
    const choice = rule ? ({ decision: 'allow' } as const) : await ask(event);
    const decision: DecideInput = { sessionId, approvalId: event.approvalId, ...choice };
    const result = await airlock.decide(decision);
    writeLedger({
      at: new Date().toISOString(),
      sessionId,
      runId: run.runId,
      toolName: event.toolName,
      arguments: event.arguments,
      decision: choice.decision,
      by: rule ? 'read-only rule' : 'person',
      ...(choice.decision === 'deny' ? { reason: choice.reason } : {}),
      status: result.status,
    });
  }
} finally {
  await airlock.close();
  process.stdin.destroy();
}
