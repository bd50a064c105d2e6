// How long a person's allow waits after a lasting rule is added while many calls wait: the rule has every waiting call
// judged again, and a decision lands after that judgement. In-process, through ChatService with the real RuleBook,
// a workspace with a rules file, and terminal calls, each in its own chat (memory store, no HTTP).
// Run: npx tsx bench/rules-change.bench.ts [waiting calls, default 2000] [rounds, default 3]
import { ChatService, MemoryStore, type RuleService } from '@airlock/api';
import { ApprovalRegistry, defineTool, type ChatModel, type ChatRequest, type ModelPart } from '@airlock/core';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { RuleBook } from '../src/rules';

const WAITING = Number(process.argv[2] ?? 2000);
const ROUNDS = Number(process.argv[3] ?? 3);

/** Calls a terminal command once, then ends its turn once the call's result is in. */
const model: ChatModel = {
  name: 'bench',
  async *stream(request: ChatRequest): AsyncGenerator<ModelPart, void, undefined> {
    await Promise.resolve();
    if (request.messages.some((message) => message.role === 'tool')) {
      yield { type: 'text-delta', text: 'done' };
      yield { type: 'finish', reason: 'stop' };
      return;
    }
    const count = request.messages.length;
    yield { type: 'tool-call', id: 'call_0', name: 'terminal', arguments: { command: `ls -la src/module-${count} && git status` } };
    yield { type: 'finish', reason: 'tool-calls' };
  },
};

const terminal = defineTool({
  name: 'terminal',
  description: 'runs a command',
  parameters: z.object({ command: z.string() }),
  annotations: { executesCode: true },
  execute: () => Promise.resolve('ok'),
});

const workspace = await mkdtemp(join(tmpdir(), 'airlock-rules-change-bench-'));
await mkdir(join(workspace, '.airlock'));
await mkdir(join(workspace, 'src'));
await writeFile(
  join(workspace, '.airlock', 'rules.json'),
  JSON.stringify({
    version: 1,
    rules: [
      { effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['make', 'check'], exact: false } },
      { effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: ['curl'], exact: false }, reason: 'no network' },
      { effect: 'deny', tool: 'web_fetch', match: { kind: 'host', host: '*.tracker.example' }, reason: 'no tracking' },
      { effect: 'allow', tool: 'write_file', match: { kind: 'path-glob', glob: 'src/**' } },
    ],
  }),
);

const store = new MemoryStore();
const book = await RuleBook.open({ store, workspace, log: () => {} });
/** Calls judged in preview (the waiting calls' judgement), counted to time the whole pass. */
let judged = 0;
let judgedAll: (() => void) | undefined;
let expected = 0;
function counted<T>(answer: T): T {
  if (++judged === expected) judgedAll?.();
  return answer;
}
const rules: RuleService = {
  evaluate: async (sessionId, call, tool, options) => {
    const verdict = await book.evaluate(sessionId, call, tool, options);
    return options?.preview === true ? counted(verdict) : verdict;
  },
  snapshot: async () => {
    const evaluate = await book.snapshot();
    return async (sessionId, call, tool) => counted(await evaluate(sessionId, call, tool));
  },
  version: () => book.version(),
  onChange: (listener) => book.onChange(listener),
  reload: () => book.reload(),
  list: () => book.list(),
  add: (draft) => book.add(draft),
  update: (ruleId, draft) => book.update(ruleId, draft),
  remove: (ruleId) => book.remove(ruleId),
  propose: (sessionId, call, scope, tool) => book.propose(sessionId, call, scope, tool),
  preview: (draft, calls, tools) => book.preview(draft, calls, tools),
  workspaceRules: () => book.workspaceRules(),
  trustWorkspace: (choice) => book.trustWorkspace(choice),
  forgetSession: (sessionId) => book.forgetSession(sessionId),
};
const registry = new ApprovalRegistry();
const chat = new ChatService({ registry, model: () => model, tools: () => [terminal], store, rules, log: () => {} });
await chat.open();

const sessions = Array.from({ length: WAITING }, (_, index) => `chat-${index}`);
for (const sessionId of sessions) await chat.startRun({ sessionId, runId: `run-${sessionId}`, message: 'look around' });
while (sessions.some((sessionId) => chat.pending(sessionId).length === 0)) await new Promise((resolve) => setTimeout(resolve, 50));
console.log(`${WAITING} calls waiting, each in its own chat; workspace rules file of 4 rules`);

const figures: number[] = [];
const passes: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const sessionId = sessions[round]!;
  const [waiting] = chat.pending(sessionId);
  judged = 0;
  expected = WAITING - round;
  const whole = new Promise<void>((resolve) => (judgedAll = resolve));
  const started = performance.now();
  // A deny rule for a command none of the waiting calls runs: every call is judged again, none is denied.
  await rules.add({ effect: 'deny', tool: 'terminal', match: { kind: 'command-prefix', tokens: [`rm-${round}`], exact: false }, scope: { kind: 'global' }, source: 'user' });
  const answer = await chat.confirm({ sessionId, approvalId: waiting!.approvalId, decision: 'allow' });
  const ms = performance.now() - started;
  if (!answer.resolved) throw new Error(`round ${round}: the allow did not land (${answer.status})`);
  await whole;
  const pass = performance.now() - started;
  figures.push(ms);
  passes.push(pass);
  console.log(`round ${round + 1}: rule added, then one allow landed after ${ms.toFixed(0)} ms; all ${expected} waiting calls judged after ${pass.toFixed(0)} ms`);
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!.toFixed(0);
console.log(`median over ${ROUNDS} rounds: allow landed ${median(figures)} ms, whole pass ${median(passes)} ms`);

await chat.shutdown();
await rm(workspace, { recursive: true, force: true });
