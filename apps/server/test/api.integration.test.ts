import { describe, expect, it } from 'vitest';
import { startFakeOpenAIServer } from './support/fake-openai-server';
import { recordingTool, startTestAirlock, watchRun } from './support/test-airlock';

type Msg = { role: string; content?: unknown; tool_call_id?: string };
const lastMessage = (body: Record<string, unknown> | undefined) => (body?.messages as Msg[] | undefined)?.at(-1);

async function setup() {
  const fake = await startFakeOpenAIServer();
  const echo = recordingTool('echo');
  const terminal = recordingTool('terminal', { executesCode: true });
  const airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool, terminal.tool] });
  const client = airlock.connect();
  return {
    fake,
    airlock,
    client,
    echo,
    terminal,
    async [Symbol.asyncDispose]() {
      await airlock.close();
      await fake.close();
    },
  };
}

const echoTurn = (text: string) => ({ toolCalls: [{ name: 'echo', arguments: { text } }] });

describe('Airlock over a real tRPC WebSocket client', () => {
  it('allow: the tool runs once and its result reaches the model', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('hello'), { text: ['All ', 'done.'] });
    const run = watchRun(t.client, { sessionId: 's-allow', runId: 'run-allow', message: 'echo hello' });
    const start = await run.next('tool-start');
    expect(start).toMatchObject({ toolName: 'echo', arguments: { text: 'hello' }, awaitingConfirmation: true });
    expect(await t.client.trpc.chat.pending.query({ sessionId: 's-allow' })).toMatchObject([{ approvalId: start.approvalId, toolName: 'echo' }]);
    expect(await t.client.trpc.chat.confirmTool.mutate({ sessionId: 's-allow', approvalId: start.approvalId, decision: 'allow' })).toStrictEqual({
      resolved: true,
      status: 'resolved',
      decision: 'allow',
    });
    expect(await run.ended).toMatchObject({ reason: 'done' });
    expect(t.echo.calls).toStrictEqual(['hello']);
    expect(run.received.filter((r) => r.event.type === 'text-delta').map((r) => (r.event as { text: string }).text).join('')).toBe('All done.');
    expect(lastMessage(t.fake.requests[1])).toMatchObject({ role: 'tool', content: 'echo: hello' });
  });

  it('deny with a reason: nothing runs and the reason reaches the model verbatim', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('secret'), { text: 'Understood.' });
    const run = watchRun(t.client, { sessionId: 's-deny', runId: 'run-deny', message: 'go' });
    const start = await run.next('tool-start');
    const reason = 'Not the secret file — use notes.txt';
    await t.client.trpc.chat.confirmTool.mutate({ sessionId: 's-deny', approvalId: start.approvalId, decision: 'deny', reason });
    expect(await run.next('tool-end')).toMatchObject({ outcome: 'denied' });
    await run.ended;
    expect(t.echo.calls).toStrictEqual([]);
    expect(String(lastMessage(t.fake.requests[1])?.content)).toContain(reason);
    expect(await run.next('tool-decision')).toMatchObject({ decision: 'deny', source: 'user', reason });
  });

  it('always allow: the next identical call in the session runs without asking; another session still asks', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('a'), { text: 'one' }, echoTurn('b'), { text: 'two' }, echoTurn('c'));
    const first = watchRun(t.client, { sessionId: 's-always', runId: 'run-al-1', message: 'first' });
    const start = await first.next('tool-start');
    await t.client.trpc.chat.confirmTool.mutate({ sessionId: 's-always', approvalId: start.approvalId, decision: 'allow', always: true });
    await first.ended;
    const second = watchRun(t.client, { sessionId: 's-always', runId: 'run-al-2', message: 'second' });
    expect(await second.next('tool-start')).toMatchObject({ awaitingConfirmation: false, approvalId: '' });
    expect(await second.next('tool-decision')).toMatchObject({ decision: 'allow', source: 'grant' });
    await second.ended;
    expect(t.echo.calls).toStrictEqual(['a', 'b']);
    expect(await t.client.trpc.grants.list.query({ sessionId: 's-always' })).toMatchObject([{ toolName: 'echo' }]);
    const other = watchRun(t.client, { sessionId: 's-other', runId: 'run-al-3', message: 'third' });
    expect(await other.next('tool-start')).toMatchObject({ awaitingConfirmation: true });
    await t.client.trpc.chat.cancel.mutate({ sessionId: 's-other' });
    await other.ended;
  });

  it('timeout: an undecided call ends as timed-out, distinct from deny, and nothing runs', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('late'), { text: 'ok' });
    const run = watchRun(t.client, { sessionId: 's-to', runId: 'run-to', message: 'go', options: { decisionTimeoutMs: 1000 } });
    const start = await run.next('tool-start');
    expect(start.expiresAt).toBeTypeOf('number');
    expect(await run.next('tool-end')).toMatchObject({ outcome: 'timed-out' });
    expect(await t.client.trpc.chat.confirmTool.mutate({ sessionId: 's-to', approvalId: start.approvalId, decision: 'allow' })).toStrictEqual({
      resolved: false,
      status: 'already-decided',
      decision: 'timeout',
    });
    await run.ended;
    expect(t.echo.calls).toStrictEqual([]);
    expect(String(lastMessage(t.fake.requests[1])?.content)).toContain('No decision was made');
    // Nobody decided it: the event and the ledger name the time limit's owner, Airlock, not the person.
    expect(await run.next('tool-decision')).toMatchObject({ decision: 'timeout', source: 'system' });
    const audit = await t.client.trpc.audit.list.query({ sessionId: 's-to' });
    expect(audit.entries).toMatchObject([{ decision: 'timeout', source: 'system', outcome: 'timed-out' }]);
  });

  it('cancel: a pending call ends as cancelled and the run ends cancelled', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('x'));
    const run = watchRun(t.client, { sessionId: 's-cancel', runId: 'run-cancel', message: 'go' });
    await run.next('tool-start');
    expect(await t.client.trpc.chat.cancel.mutate({ sessionId: 's-cancel' })).toStrictEqual({ cancelled: 1 });
    expect(await run.ended).toMatchObject({ reason: 'cancelled' });
    expect(await run.next('tool-end')).toMatchObject({ outcome: 'cancelled' });
    expect(t.echo.calls).toStrictEqual([]);
    expect(await t.client.trpc.chat.pending.query({ sessionId: 's-cancel' })).toStrictEqual([]);
  });

  it('unknown, wrong-session, duplicate and late decisions are answered, never applied', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('once'), { text: 'ok' });
    const run = watchRun(t.client, { sessionId: 's-odd', runId: 'run-odd', message: 'go' });
    const { approvalId } = await run.next('tool-start');
    const confirm = (input: { sessionId: string; approvalId: string; decision: 'allow' | 'deny' }) => t.client.trpc.chat.confirmTool.mutate(input);
    expect(await confirm({ sessionId: 's-odd', approvalId: 'apv_unknown', decision: 'allow' })).toStrictEqual({ resolved: false, status: 'not-found' });
    expect(await confirm({ sessionId: 's-odd', approvalId: '', decision: 'allow' })).toStrictEqual({ resolved: false, status: 'not-found' });
    expect(await confirm({ sessionId: 'someone-else', approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'not-found' });
    expect(t.echo.calls).toStrictEqual([]);
    expect(await confirm({ sessionId: 's-odd', approvalId, decision: 'allow' })).toMatchObject({ resolved: true });
    expect(await confirm({ sessionId: 's-odd', approvalId, decision: 'allow' })).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'allow' });
    await run.ended;
    expect(await confirm({ sessionId: 's-odd', approvalId, decision: 'deny' })).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'allow' });
    expect(t.echo.calls).toStrictEqual(['once']);
  });

  it('arguments sent with an allow are an edit, never a silent swap: the decision event shows what runs and the ledger keeps both', async () => {
    await using t = await setup();
    t.fake.enqueue({ toolCalls: [{ name: 'terminal', arguments: { text: 'ls' } }] }, { text: 'ok' });
    const run = watchRun(t.client, { sessionId: 's-forge', runId: 'run-forge', message: 'go' });
    const { approvalId } = await run.next('tool-start');
    // Fields that are not part of a decision (toolName) are not taken from it.
    const edited = { sessionId: 's-forge', approvalId, decision: 'allow' as const, arguments: { text: 'pwd' }, toolName: 'echo' };
    await t.client.trpc.chat.confirmTool.mutate(edited);
    expect(await run.next('tool-decision')).toMatchObject({ decision: 'allow', editedArguments: { text: 'pwd' } });
    await run.ended;
    expect(t.terminal.calls).toStrictEqual(['pwd']);
    expect(t.echo.calls).toStrictEqual([]);
    const audit = await t.client.trpc.audit.list.query({ sessionId: 's-forge' });
    expect(audit.entries).toMatchObject([{ toolName: 'terminal', arguments: { text: 'ls' }, editedArguments: { text: 'pwd' }, outcome: 'executed' }]);
  });

  it('reconnect mid-approval: wsLink resumes with lastEventId, no duplicate, no gap, and the decision still works', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('after-reconnect'), { text: 'finished' });
    const run = watchRun(t.client, { sessionId: 's-re', runId: 'run-re', message: 'go' });
    const { approvalId } = await run.next('tool-start');
    const before = t.client.sockets.length;
    t.client.sockets.at(-1)!.terminate();
    // The pending approval survives the drop: decide from a second connection while the first reconnects.
    const other = t.airlock.connect();
    expect(await other.trpc.chat.pending.query({ sessionId: 's-re' })).toMatchObject([{ approvalId }]);
    await expect.poll(() => t.client.sockets.length).toBeGreaterThan(before);
    await other.trpc.chat.confirmTool.mutate({ sessionId: 's-re', approvalId, decision: 'allow' });
    expect(await run.ended).toMatchObject({ reason: 'done' });
    const ids = run.received.map((r) => r.id);
    expect(ids).toStrictEqual(ids.map((_, i) => `run-re:${i + 1}`));
    expect(run.received.filter((r) => r.event.type === 'tool-start')).toHaveLength(1);
    expect(t.echo.calls).toStrictEqual(['after-reconnect']);
    expect(t.fake.requests).toHaveLength(2);
  });

  it('two clients on one session see the same run, and a decision from one shows in the other', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('shared'), { text: 'ok' });
    const tabA = watchRun(t.client, { sessionId: 's-two', runId: 'run-two', message: 'go' });
    const { approvalId } = await tabA.next('tool-start');
    const second = t.airlock.connect();
    const session = await second.trpc.sessions.get.query({ sessionId: 's-two' });
    expect(session.activeRunId).toBe('run-two');
    const tabB = watchRun(second, { sessionId: 's-two', runId: session.activeRunId! });
    expect((await tabB.next('tool-start')).approvalId).toBe(approvalId);
    await second.trpc.chat.confirmTool.mutate({ sessionId: 's-two', approvalId, decision: 'allow' });
    expect(await tabA.next('tool-decision')).toMatchObject({ decision: 'allow', source: 'user' });
    await Promise.all([tabA.ended, tabB.ended]);
    expect(tabB.received.map((r) => r.id)).toStrictEqual(tabA.received.map((r) => r.id));
    expect(t.echo.calls).toStrictEqual(['shared']);
  });

  it('a second message while the run is going is refused with CONFLICT', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('busy'));
    const run = watchRun(t.client, { sessionId: 's-busy', runId: 'run-busy-1', message: 'one' });
    await run.next('tool-start');
    const second = watchRun(t.client, { sessionId: 's-busy', runId: 'run-busy-2', message: 'two' });
    await expect(second.failed).rejects.toMatchObject({ data: { code: 'CONFLICT' } });
    await t.client.trpc.chat.cancel.mutate({ sessionId: 's-busy' });
    await run.ended;
  });

  it('model server errors end the run with a clear message and the session stays usable', async () => {
    await using t = await setup();
    t.fake.enqueue({ status: 500, errorBody: { error: { message: 'model exploded' } } }, { text: 'partial', cutAfterChunks: 1 }, { text: 'recovered' });
    const failed = watchRun(t.client, { sessionId: 's-err', runId: 'run-err-1', message: 'one' });
    const end = await failed.ended;
    expect(end.reason).toBe('error');
    expect(end.error).toContain('500');
    expect(end.error).toContain('model exploded');
    const cut = watchRun(t.client, { sessionId: 's-err', runId: 'run-err-2', message: 'two' });
    expect(await cut.ended).toMatchObject({ reason: 'error' });
    const ok = watchRun(t.client, { sessionId: 's-err', runId: 'run-err-3', message: 'three' });
    expect(await ok.ended).toMatchObject({ reason: 'done' });
    const session = await t.client.trpc.sessions.get.query({ sessionId: 's-err' });
    expect(session.messages.filter((m) => m.role === 'user').map((m) => m.content)).toStrictEqual(['one', 'two', 'three']);
  });

  it('a model server that is down ends the run with a clear error', async () => {
    const fake = await startFakeOpenAIServer();
    const url = fake.url;
    await fake.close();
    await using airlock = await startTestAirlock({ modelUrl: url });
    const run = watchRun(airlock.connect(), { sessionId: 's-down', runId: 'run-down', message: 'hi' });
    const end = await run.ended;
    expect(end.reason).toBe('error');
    expect(end.error).toMatch(/could not reach/i);
  });

  it('malformed input is BAD_REQUEST naming the field', async () => {
    await using t = await setup();
    const error = await t.client.trpc.chat.confirmTool
      .mutate({ sessionId: 's', approvalId: 'x', decision: 'deny', reason: 'r'.repeat(2001) })
      .catch((e: unknown) => e as { data?: { code?: string; zodError?: unknown }; message: string });
    expect(error).toMatchObject({ data: { code: 'BAD_REQUEST' } });
    expect((error as { message: string }).message).toContain('reason');
    expect((error as { data: { zodError: { fieldErrors: Record<string, unknown> } } }).data.zodError.fieldErrors).toHaveProperty('reason');
  });
});
