import { MAX_SESSION_PAGE, MemoryStore, type AirlockStore } from '@airlock/api';
import { createAirlockClient, isAnswerUnknown, isConnectionLost, isExpired, parseStartupLink, socketUrl, UNPROVEN_SERVER_MESSAGE, type AirlockClient, type AirlockClientOptions, type LoopEvent, type RunOptions, type SessionSummary } from '@airlock/client';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { startFakeOpenAIServer } from './support/fake-openai-server';
import { startStallingProxy } from './support/stalling-proxy';
import { recordingTool, startTestAirlock } from './support/test-airlock';

type Msg = { role: string; content?: unknown };
const lastMessage = (body: Record<string, unknown> | undefined) => (body?.messages as Msg[] | undefined)?.at(-1);
const echoTurn = (...texts: string[]) => ({ toolCalls: texts.map((text) => ({ name: 'echo', arguments: { text } })) });

async function setup({ allowedOrigins, store }: { allowedOrigins?: string[]; store?: AirlockStore } = {}) {
  const fake = await startFakeOpenAIServer();
  const echo = recordingTool('echo');
  const airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool], ...(allowedOrigins === undefined ? {} : { allowedOrigins }), ...(store === undefined ? {} : { store }) });
  const sockets: WebSocket[] = [];
  class TrackedWebSocket extends WebSocket {
    constructor(url: string) {
      super(url);
      sockets.push(this);
    }
  }
  const clients: AirlockClient[] = [];
  const connect = (options: Partial<AirlockClientOptions> = {}) => {
    const client = createAirlockClient({
      url: airlock.server.wsUrl,
      token: airlock.server.token,
      WebSocket: TrackedWebSocket,
      clientLabel: 'integration test',
      retryDelayMs: () => 10,
      ...options,
    });
    clients.push(client);
    return client;
  };
  return {
    fake,
    airlock,
    echo,
    sockets,
    connect,
    async [Symbol.asyncDispose]() {
      await Promise.all(clients.map((client) => client.close()));
      await airlock.close();
      await fake.close();
    },
  };
}

/** Reads a run's events, answering each gated call with `decide`. */
async function drive(events: AsyncIterable<LoopEvent>, decide: (start: Extract<LoopEvent, { type: 'tool-start' }>) => Promise<unknown>): Promise<LoopEvent[]> {
  const seen: LoopEvent[] = [];
  for await (const event of events) {
    seen.push(event);
    if (event.type === 'tool-start' && event.awaitingConfirmation) await decide(event);
  }
  return seen;
}

describe('@airlock/client against a real server', () => {
  it('streams a run to its end; allow runs the tool, deny sends the reason to the model', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('one'), echoTurn('two'), { text: ['All ', 'done.'] });
    const client = t.connect();
    const run = client.startRun({ sessionId: 's-1', message: 'echo twice' });
    const events = await drive(run, (start) =>
      start.arguments.text === 'one'
        ? client.decide({ sessionId: 's-1', approvalId: start.approvalId, decision: 'allow' })
        : client.decide({ sessionId: 's-1', approvalId: start.approvalId, decision: 'deny', reason: 'not two — stop here' }),
    );
    expect(events[0]).toStrictEqual({ type: 'run-start', runId: run.runId, sessionId: 's-1' });
    expect(events.at(-1)).toStrictEqual({ type: 'run-end', runId: run.runId, reason: 'done' });
    expect(events.filter((event) => event.type === 'tool-end').map((event) => event.outcome)).toStrictEqual(['executed', 'denied']);
    expect(events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : [])).join('')).toBe('All done.');
    expect(t.echo.calls).toStrictEqual(['one']);
    expect(String(lastMessage(t.fake.requests[2])?.content)).toContain('not two — stop here');
    expect(run.lastEventId).toMatch(new RegExp(`^${run.runId}:\\d+$`));
    // The ledger (newest first) names the client by the label it gave for its connection.
    const audit = await client.trpc.audit.list.query({ sessionId: 's-1' });
    expect(audit.entries.map((entry) => [entry.decision, entry.clientLabel])).toStrictEqual([
      ['deny', 'integration test'],
      ['allow', 'integration test'],
    ]);
  });

  it('connects with a client label longer than the server keeps, and the ledger names it by its first 100 characters (found in review)', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('one'), { text: 'done' });
    const label = `${'long label '.repeat(2_000)}end`;
    const client = t.connect({ clientLabel: label, connectAttempts: 2 });
    await drive(client.startRun({ sessionId: 's-label', message: 'go' }), (start) => client.decide({ sessionId: 's-label', approvalId: start.approvalId, decision: 'allow' }));
    const audit = await client.trpc.audit.list.query({ sessionId: 's-label' });
    expect(audit.entries.map((entry) => entry.clientLabel)).toStrictEqual([label.slice(0, 100)]);
  });

  it('always: grants the tool, so the next call of the chat is not asked', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('first'), echoTurn('second'), { text: 'ok' });
    const client = t.connect();
    const asked: string[] = [];
    const events = await drive(client.startRun({ sessionId: 's-always', message: 'go' }), (start) => {
      asked.push(String(start.arguments.text));
      return client.decide({ sessionId: 's-always', approvalId: start.approvalId, decision: 'always' });
    });
    expect(asked).toStrictEqual(['first']);
    expect(events.filter((event) => event.type === 'tool-decision').map((event) => event.source)).toStrictEqual(['user', 'grant']);
    expect(t.echo.calls).toStrictEqual(['first', 'second']);
    expect(await client.trpc.grants.list.query({ sessionId: 's-always' })).toMatchObject([{ toolName: 'echo' }]);
  });

  it('allow with edited arguments runs the edited call, and the model is told what ran', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('proposed'), { text: 'ok' });
    const client = t.connect();
    const events = await drive(client.startRun({ sessionId: 's-edit', message: 'go' }), (start) =>
      client.decide({ sessionId: 's-edit', approvalId: start.approvalId, decision: 'allow', arguments: { text: 'edited' } }),
    );
    expect(t.echo.calls).toStrictEqual(['edited']);
    expect(events.find((event) => event.type === 'tool-decision')).toMatchObject({ decision: 'allow', editedArguments: { text: 'edited' } });
    expect(String(lastMessage(t.fake.requests[1])?.content)).toContain('edited');
  });

  it('lists what is waiting, and a second client attaches to the run and decides it', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('wait'), { text: 'done' });
    const first = t.connect();
    const run = first.startRun({ sessionId: 's-pending', message: 'go' });
    for await (const event of run) if (event.type === 'tool-start') break;
    const [waiting] = await first.pending('s-pending');
    expect(waiting).toMatchObject({ runId: run.runId, toolName: 'echo', arguments: { text: 'wait' } });

    const second = t.connect();
    const attached = second.attachRun({ sessionId: 's-pending', runId: run.runId });
    expect(await second.decide({ sessionId: 's-pending', approvalId: waiting!.approvalId, decision: 'allow' })).toStrictEqual({
      resolved: true,
      status: 'resolved',
      decision: 'allow',
    });
    const replayed: LoopEvent[] = [];
    for await (const event of attached) replayed.push(event);
    expect(replayed.map((event) => event.type).filter((type) => type !== 'status')).toStrictEqual(['run-start', 'tool-start', 'tool-decision', 'tool-end', 'text-delta', 'run-end']);
    expect(await first.pending('s-pending')).toStrictEqual([]);
  });

  it('re-attaches after the connection drops: every event once, in order, and the call still waits for its decision', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('across'), { text: ['after ', 'the ', 'drop'] });
    const client = t.connect();
    // Sent again as it was, message and options, on the new connection: the retry of a start re-attaches.
    const run = client.startRun({ sessionId: 's-drop', message: 'go', options: { confirmToolCalls: true, maxToolCalls: 5 } });
    const events: LoopEvent[] = [];
    for await (const event of run) {
      events.push(event);
      if (event.type === 'tool-start') {
        t.sockets.at(-1)!.terminate();
        // The decision goes over the new connection; the iterator picks up where it stopped.
        await expect.poll(() => t.sockets.length).toBe(2);
        await expect.poll(() => client.state).toBe('open');
        await client.decide({ sessionId: 's-drop', approvalId: event.approvalId, decision: 'allow' });
      }
    }
    const replay: LoopEvent[] = [];
    for await (const event of client.attachRun({ sessionId: 's-drop', runId: run.runId })) replay.push(event);
    expect(events).toStrictEqual(replay);
    expect(t.echo.calls).toStrictEqual(['across']);
    expect(t.fake.requests).toHaveLength(2);
  });

  it('stops following on abort without stopping the run; cancel stops it', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('never'));
    const client = t.connect();
    const controller = new AbortController();
    const run = client.startRun({ sessionId: 's-abort', message: 'go', signal: controller.signal });
    const seen: LoopEvent['type'][] = [];
    for await (const event of run) {
      seen.push(event.type);
      if (event.type === 'tool-start') controller.abort(new Error('the person left'));
    }
    // The loop just ends: an abort is the caller's own, nothing to catch.
    expect(seen.at(-1)).toBe('tool-start');
    expect(await client.pending('s-abort')).toHaveLength(1);

    const again = client.attachRun({ sessionId: 's-abort', runId: run.runId });
    expect(await run.cancel()).toBe(true);
    const ends: LoopEvent[] = [];
    for await (const event of again) if (event.type === 'tool-end' || event.type === 'run-end') ends.push(event);
    expect(ends).toMatchObject([{ type: 'tool-end', outcome: 'cancelled' }, { type: 'run-end', reason: 'cancelled' }]);
    expect(t.echo.calls).toStrictEqual([]);
  });

  it('follows the session list as runs start and end', async () => {
    await using t = await setup();
    t.fake.enqueue({ text: 'hi' });
    const client = t.connect();
    const controller = new AbortController();
    const lists = client.followSessions(controller.signal);
    expect((await lists.next()).value).toStrictEqual([]);
    for await (const event of client.startRun({ sessionId: 's-list', message: 'hello there' })) void event;
    let latest = (await lists.next()).value!;
    while (latest[0]?.activeRunId !== null) latest = (await lists.next()).value!;
    expect(latest).toMatchObject([{ sessionId: 's-list', activeRunId: null }]);
    controller.abort();
    expect(await lists.next()).toStrictEqual({ value: undefined, done: true });
  });

  it('follows every chat, reading the list a page at a time, and what changed while it read', async () => {
    const count = 2 * MAX_SESSION_PAGE + 3;
    const store = new MemoryStore();
    for (let index = 0; index < count; index++) {
      await store.createSession({ sessionId: `chat-${index}`, title: `chat ${index}`, createdAt: 1_000, updatedAt: 1_000 + (index % 10), confirmToolCalls: true, lastRunId: null });
    }
    await using t = await setup({ store });
    // Reads what the store kept, as the server's start-up does.
    await t.airlock.chat.open();
    t.fake.enqueue({ text: 'hi' });
    const client = t.connect();
    const controller = new AbortController();
    const lists = client.followSessions(controller.signal);
    const first: SessionSummary[] = (await lists.next()).value as SessionSummary[];
    expect(first.map((session) => session.sessionId)).toStrictEqual(
      (await store.listSessionPage({ limit: count })).map((session) => session.sessionId),
    );
    // The first page of one read without input is the newest 100.
    expect((await client.trpc.sessions.list.query()).sessions).toStrictEqual(first.slice(0, 100));

    for await (const event of client.startRun({ sessionId: 'chat-7', message: 'hello there' })) void event;
    let latest: SessionSummary[] = first;
    while (latest[0]?.sessionId !== 'chat-7' || latest[0].activeRunId !== null) latest = (await lists.next()).value!;
    expect(latest).toHaveLength(count);
    expect(latest.slice(1)).toStrictEqual(first.filter((session) => session.sessionId !== 'chat-7'));
    controller.abort();
  });

  it('passes on when a call starts and stops waiting in a chat, for a "waiting for you" list across chats', async () => {
    await using t = await setup();
    t.fake.enqueue(echoTurn('wait'), { text: 'done' });
    const client = t.connect();
    const controller = new AbortController();
    const changes = client.watchSessions(controller.signal);
    expect((await changes.next()).value).toStrictEqual({ type: 'ready' });
    const run = client.startRun({ sessionId: 's-waiting', message: 'go' });
    const waitingChanges = async () => {
      for (;;) {
        const result = await changes.next();
        if (result.done === true) throw new Error('the watch ended before a waiting-changed');
        if (result.value.type === 'waiting-changed') return result.value;
      }
    };
    expect(await waitingChanges()).toStrictEqual({ type: 'waiting-changed', sessionId: 's-waiting' });
    const [waiting] = await client.pending('s-waiting');
    expect(waiting).toMatchObject({ toolName: 'echo', arguments: { text: 'wait' } });
    await client.decide({ sessionId: 's-waiting', approvalId: waiting!.approvalId, decision: 'allow' });
    expect(await waitingChanges()).toStrictEqual({ type: 'waiting-changed', sessionId: 's-waiting' });
    expect(await client.pending('s-waiting')).toStrictEqual([]);
    for await (const event of run) void event;
    controller.abort();
    // Aborted, it ends quietly, past what was queued.
    expect(await changes.next()).toStrictEqual({ value: undefined, done: true });
  });

  it('a session list followed and let go of at once, 40 times, leaves the connection its places: the next one follows', async () => {
    await using t = await setup();
    const client = t.connect();
    // Connected first, so each subscription is written at once, and its stop right after it.
    await client.trpc.model.info.query();
    for (let index = 0; index < 40; index++) {
      const controller = new AbortController();
      const first = client.followSessions(controller.signal).next();
      controller.abort();
      await first.catch(() => undefined);
    }
    // Their stops are on their way (the server has them once it has started each); once through, a place is free.
    await vi.waitFor(async () => {
      const controller = new AbortController();
      try {
        expect((await client.followSessions(controller.signal).next()).value).toStrictEqual([]);
      } finally {
        controller.abort();
      }
    });
  });

  it('notices a connection that went silent: the decision sent into it fails, the client reconnects, and the call still waits', async () => {
    await using proxy = await startStallingProxy();
    await using t = await setup({ allowedOrigins: [proxy.url] });
    proxy.forwardTo(t.airlock.server.url);
    t.fake.enqueue(echoTurn('wait'), { text: 'done' });
    const closes: string[] = [];
    const client: AirlockClient = t.connect({
      url: socketUrl(proxy.url),
      keepAlive: { pingMs: 100, pongWaitMs: 1_000 },
      decisionTimeoutMs: 2_000,
      onClose: () => closes.push(client.state),
    });
    const run = client.startRun({ sessionId: 's-silent', message: 'go' });
    const events: LoopEvent[] = [];
    for (;;) {
      const { value } = await run.next();
      events.push(value as LoopEvent);
      if (value?.type === 'tool-start') break;
    }
    const start = events.at(-1) as Extract<LoopEvent, { type: 'tool-start' }>;
    // The path dies without closing: the server never gets the decision, the client never gets an answer.
    proxy.stall();
    const lost = await client.decide({ sessionId: 's-silent', approvalId: start.approvalId, decision: 'allow' }).catch((error: unknown) => error);
    // It fails when the connection is found silent, its answer unknown: the server may still apply it until its deadline.
    expect([(lost as Error).message.split(':')[0], isConnectionLost(lost), isAnswerUnknown(lost), isExpired(lost)]).toStrictEqual([
      'the connection went silent (no answer to a ping) before the answer came',
      true,
      true,
      false,
    ]);
    expect(closes[0]).toBe('reconnecting');
    await expect.poll(() => client.state).toBe('open');
    expect(proxy.accepted).toBeGreaterThanOrEqual(2);
    expect((await client.pending('s-silent')).map((call) => call.approvalId)).toStrictEqual([start.approvalId]);
    expect(t.echo.calls).toStrictEqual([]);

    expect(await client.decide({ sessionId: 's-silent', approvalId: start.approvalId, decision: 'allow' })).toMatchObject({ resolved: true });
    for await (const event of run) events.push(event);
    const replay: LoopEvent[] = [];
    for await (const event of client.attachRun({ sessionId: 's-silent', runId: run.runId })) replay.push(event);
    expect(events).toStrictEqual(replay);
    expect(t.echo.calls).toStrictEqual(['wait']);
  });

  it("fails a request over the server's 1 MiB message limit at once, naming the field, without dropping the connection", async () => {
    await using t = await setup();
    let closes = 0;
    const client = t.connect({ onClose: () => closes++ });
    expect(await client.pending('s-big')).toStrictEqual([]);
    const tooBig = (field: string, bytes: number) => ({
      message: expect.stringMatching(new RegExp(`^${field}: the request is \\d+ bytes, over the 1048576 bytes \\(1 MiB\\) the server takes in one message; shorten ${field} \\(${bytes} bytes of it\\)$`)),
      data: { code: 'PAYLOAD_TOO_LARGE', httpStatus: 413 },
    });
    await expect(client.startRun({ sessionId: 's-big', message: 'x'.repeat(5_000_000) }).next()).rejects.toMatchObject(tooBig('message', 5_000_002));
    await expect(client.decide({ sessionId: 's-big', approvalId: 'appr_1', decision: 'deny', reason: 'r'.repeat(2_000_000) })).rejects.toMatchObject(tooBig('reason', 2_000_002));
    await expect(client.pending('s'.repeat(2_000_000))).rejects.toMatchObject(tooBig('sessionId', 2_000_002));
    expect(await client.pending('s-big')).toStrictEqual([]);
    expect(closes).toBe(0);
    expect(t.sockets).toHaveLength(1);
    expect(t.fake.requests).toHaveLength(0);
  });

  it('refuses run options it does not know, naming the key, rather than running without them', async () => {
    await using t = await setup();
    const client = t.connect();
    // A misspelt enabledTools, dropped, would give the model every tool.
    const options = { enabledtools: ['read_file'] } as unknown as RunOptions;
    await expect(client.startRun({ sessionId: 's-options', message: 'go', options }).next()).rejects.toMatchObject({
      message: 'options: Unrecognized key: "enabledtools"',
      data: { code: 'BAD_REQUEST' },
    });
    expect(t.fake.requests).toHaveLength(0);
  });

  it('reads the start-up link, and gives up at once, the token unsent, when the server cannot prove it knows that token', async () => {
    await using t = await setup();
    const address = parseStartupLink(`${t.airlock.server.url}/#token=${encodeURIComponent(t.airlock.server.token)}`);
    expect(address).toStrictEqual({ url: t.airlock.server.wsUrl, token: t.airlock.server.token });
    expect(await t.connect(address).trpc.model.info.query()).toMatchObject({ provider: 'fake' });

    // A wrong token and a server that is not Airlock look the same to a client: neither proves it knows the token.
    const rejections: [string, string][] = [];
    const refused = t.connect({ token: 'not-the-token-not-the-token-not-the-token', onRejected: (message, reason) => rejections.push([message, reason]) });
    await expect(refused.trpc.model.info.query()).rejects.toThrow(UNPROVEN_SERVER_MESSAGE);
    expect(rejections).toStrictEqual([[UNPROVEN_SERVER_MESSAGE, 'unproven']]);
    expect(refused.state).toBe('rejected');
  });
});
