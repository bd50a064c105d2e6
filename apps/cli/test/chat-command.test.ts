import { createAirlockClient, MAX_REASON_LENGTH, socketUrl } from '@airlock/client';
import { DISK_FULL, fillingStore, recordingTool, startFakeOpenAIServer, startStallingProxy, startTestAirlock } from '@airlock/server/testing';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { runChat, type ChatCommandOptions } from '../src/chat-command';

const PROMPT = '[a]llow / [A]lways / [d]eny (reason)';
const WAIT = { timeout: 20_000, interval: 20 };

/** The client on a terminal made of two streams, in this process, with a clock the test moves. */
function fakeTerminal() {
  const input = Object.assign(new PassThrough(), { isTTY: true });
  const output = Object.assign(new PassThrough(), { isTTY: true, columns: 110 });
  let written = '';
  output.on('data', (chunk: Buffer) => (written += chunk.toString()));
  let time = 0;
  const text = () => stripVTControlCharacters(written);
  return {
    input,
    output,
    now: () => time,
    /** Moves the clock on. */
    advance: (ms: number) => (time += ms),
    type: (keys: string) => input.write(keys),
    /** Waits until what was written since `from` (the last time it was written) holds `text`. */
    async shows(wanted: string, from?: string) {
      await expect.poll(() => (from === undefined ? text() : text().slice(text().lastIndexOf(from))), WAIT).toContain(wanted);
    },
    text,
    /** Waits until what was written, its spaces and line breaks read as one space (notes are wrapped) and rows behind a `↪` gutter joined, holds `text`. */
    async says(wanted: string) {
      await expect.poll(() => text().replace(/\n *↪ /g, '').replace(/\s+/g, ' '), WAIT).toContain(wanted);
    },
  };
}

/** `airlock chat` on a fake terminal, without colour and with no decision guard unless `options` say otherwise. */
function chatOnFakeTerminal(options: Omit<ChatCommandOptions, 'input' | 'output' | 'env'>) {
  const terminal = fakeTerminal();
  const exited = runChat({ input: terminal.input, output: terminal.output, env: { NO_COLOR: '1' }, decisionGuardMs: 0, ...options });
  return { terminal, exited };
}

describe('airlock chat, in a chat whose run is paused (its data cannot be stored for now)', () => {
  it('says a decision was refused, not unsent; says the run is paused when it joins; and says a stop is kept until the run is taken up', async () => {
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    const { store, fill, free } = fillingStore({ fillsAt: (event) => event.type === 'tool-start' && event.arguments.text === 'second' });
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool], store, retryStoreAfterMs: 20 });
    fake.enqueue({ toolCalls: [{ name: 'echo', arguments: { text: 'first' } }, { name: 'echo', arguments: { text: 'second' } }] });
    const address = { url: airlock.server.wsUrl, token: airlock.server.token };
    const { terminal: first, exited: firstExited } = chatOnFakeTerminal({ address, sessionId: 'c1' });
    await first.shows('you›');
    first.type('go\r');
    await first.shows(PROMPT, 'text: first');
    fill();
    await expect.poll(() => airlock.chat.listSessions()[0]?.paused, WAIT).toBe(DISK_FULL);
    const runId = airlock.chat.listSessions()[0]!.activeRunId!;

    // Read before as "The decision was not sent (…); try again": it was sent, and refused.
    first.type('a\r');
    await first.says(
      `The server refused the decision: it cannot be applied to the call as it is now (The run ${runId} is paused until its data can be stored (${DISK_FULL}).`,
    );
    await first.says('Nothing was applied; the call still waits.');
    expect(first.text()).not.toContain('was not sent');

    // Joined while paused: said, where nothing was.
    const { terminal: second, exited: secondExited } = chatOnFakeTerminal({ address, sessionId: 'c1' });
    await second.says(`It is paused: Airlock cannot store its data for now (${DISK_FULL}). Its calls still wait`);
    await second.shows(PROMPT, 'text: first');

    // Ctrl-C: refused before ("The stop was not sent"), and the run went on once writes succeeded.
    second.type('\x03');
    await second.says('The server took the stop: The run');
    await second.says(`it will be stopped when it is taken up, before anything more of it runs. The stop could not be stored (${DISK_FULL})`);
    free();
    await first.shows('cancelled');
    await second.shows('cancelled');
    expect(echo.calls).toStrictEqual([]);
    expect((await store.loadEvents(runId, 0)).at(-1)).toMatchObject({ type: 'run-end', reason: 'cancelled' });

    first.input.end();
    second.input.end();
    expect(await firstExited).toBe(0);
    expect(await secondExited).toBe(0);
  });
});

describe('airlock chat, opening a chat with stored records left out as damaged', () => {
  // Found in review: the page's leftOut was said nowhere, and the next run's status saying it went by among its events.
  it('says when the chat is opened which records were left out and what the model was told instead', async () => {
    await using fake = await startFakeOpenAIServer();
    const { store } = fillingStore({ fillsAt: () => false });
    const record = 'a message of chat c1: content: Invalid input: expected string, received number';
    const loadMessagePage = store.loadMessagePage.bind(store);
    // As the SQLite and PostgreSQL stores answer for a message whose row does not read (their own tests damage one).
    store.loadMessagePage = async (sessionId, query) => {
      query.leftOut?.(record);
      return loadMessagePage(sessionId, query);
    };
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [], store });
    fake.enqueue({ text: 'hi' });
    await airlock.chat.startRun({ sessionId: 'c1', runId: 'r1', message: 'hello' });
    await expect.poll(() => airlock.chat.listSessions()[0]?.activeRunId, WAIT).toBeNull();

    const { terminal, exited } = chatOnFakeTerminal({ address: { url: airlock.server.wsUrl, token: airlock.server.token }, sessionId: 'c1' });
    await terminal.says(`A stored record of this chat is damaged and left out when the chat is read (${record}). The model does not read a left-out message either`);
    await terminal.says("where it was a call's result, the model was told the call has no recorded result and may have done part or all of its work");
    await terminal.shows('you›');
    terminal.input.end();
    expect(await exited).toBe(0);
  });
});

describe('airlock chat, opening a chat longer than one part with stored records left out of an earlier part', () => {
  // Found in review: only the newest part was read, so a record left out of an earlier one, which the model does not
  // read either, was said nowhere.
  it('reads each earlier part and names the records every part left out, oldest first', async () => {
    await using fake = await startFakeOpenAIServer();
    const { store } = fillingStore({ fillsAt: () => false });
    const earlier = 'a message of chat c1: role: Invalid input';
    const newest = 'a message of chat c1: content: Invalid input: expected string, received number';
    const loadMessagePage = store.loadMessagePage.bind(store);
    // As a store answers for a chat longer than one part (its newest part starting after its first message), whose
    // rows that do not read are named as the SQLite and PostgreSQL stores name them (their own tests damage one).
    store.loadMessagePage = async (sessionId, query) => {
      if (query.before === undefined) {
        query.leftOut?.(newest);
        return { ...(await loadMessagePage(sessionId, { ...query, before: Number.MAX_SAFE_INTEGER })), start: 1 };
      }
      query.leftOut?.(earlier);
      return { ...(await loadMessagePage(sessionId, { ...query, before: 1 })), start: 0 };
    };
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [], store });
    fake.enqueue({ text: 'hi' });
    await airlock.chat.startRun({ sessionId: 'c1', runId: 'r1', message: 'hello' });
    await expect.poll(() => airlock.chat.listSessions()[0]?.activeRunId, WAIT).toBeNull();

    const { terminal, exited } = chatOnFakeTerminal({ address: { url: airlock.server.wsUrl, token: airlock.server.token }, sessionId: 'c1' });
    await terminal.says(`2 stored records of this chat are damaged and left out when the chat is read (${earlier}; ${newest}).`);
    await terminal.shows('you›');
    terminal.input.end();
    expect(await exited).toBe(0);
  });
});

describe('airlock chat, stopping a run while the server cannot store its data', () => {
  it('says a stop the server could not store does not hold yet; once space is back the run ends stopped, running nothing', async () => {
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    // The disk fills up as the person's allow is written: the allow is refused, the call waits again, the store is full.
    const { store, fill, free } = fillingStore({ fillsAt: (event) => event.type === 'tool-decision' && event.decision === 'allow' });
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool], store, retryStoreAfterMs: 20 });
    fake.enqueue({ toolCalls: [{ name: 'echo', arguments: { text: 'first' } }] });
    const { terminal, exited } = chatOnFakeTerminal({ address: { url: airlock.server.wsUrl, token: airlock.server.token }, sessionId: 'c1' });
    await terminal.shows('you›');
    terminal.type('go\r');
    await terminal.shows(PROMPT, 'text: first');
    const runId = airlock.chat.listSessions()[0]!.activeRunId!;
    fill();
    terminal.type('a\r');
    await terminal.says(`The decision could not be stored (${DISK_FULL})`);

    // Read before as a stop taken and done ("The server took the stop: the run is stopped."), while nothing of it was
    // stored: after a restart the run was back, its call waiting again.
    terminal.type('\x03');
    await terminal.says(`The server took the stop: The run ${runId} is stopped here, but its stop could not be stored (${DISK_FULL}): it is stored once Airlock can store again`);
    await terminal.says('If Airlock restarts before then, the run comes back, its calls waiting for a decision again.');
    await expect.poll(() => airlock.chat.listSessions()[0]?.paused, WAIT).toBe(DISK_FULL);

    free();
    await terminal.shows('cancelled');
    await expect.poll(async () => (await store.loadEvents(runId, 0)).at(-1), WAIT).toStrictEqual({ type: 'run-end', runId, reason: 'cancelled' });
    expect(await store.getRun(runId)).toMatchObject({ endedAt: expect.any(Number), endReason: 'cancelled' });
    expect(echo.calls).toStrictEqual([]);
    terminal.input.end();
    expect(await exited).toBe(0);
  });
});

describe('airlock chat, with a clock the test moves', () => {
  it('shows the address it connected to with a token in it hidden', async () => {
    await using fake = await startFakeOpenAIServer();
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [] });
    const terminal = fakeTerminal();
    const url = `${airlock.server.wsUrl}?token=${airlock.server.token}`;
    const exited = runChat({ address: { url, token: airlock.server.token }, input: terminal.input, output: terminal.output, env: { NO_COLOR: '1' }, decisionGuardMs: 0 });
    await terminal.shows('you›');
    expect(terminal.text()).toContain(`Connecting to ${airlock.server.wsUrl}?token=<hidden>…`);
    expect(terminal.text()).toContain(`Connected to ${airlock.server.wsUrl}?token=<hidden>, model fake-model.`);
    expect(terminal.text()).not.toContain(airlock.server.token);
    terminal.input.end();
    expect(await exited).toBe(0);
  });

  it('says where it is connecting at once, before a server that takes the connection and never answers is given up on, and exits on Ctrl-C meanwhile', async () => {
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    await using _silent = { [Symbol.asyncDispose]: () => new Promise<void>((resolve) => (held.forEach((socket) => socket.destroy()), silent.close(() => resolve()))) };
    const url = `ws://127.0.0.1:${(silent.address() as AddressInfo).port}/trpc`;
    const { terminal, exited } = chatOnFakeTerminal({ address: { url, token: 'some-token' } });
    await terminal.shows(`Connecting to ${url}…`);
    expect(terminal.text()).not.toContain('Cannot reach');
    terminal.type('\x03');
    expect(await exited).toBe(1);
  });

  // Found by an outside probe: a pasted 300,000-character message said "Lost the run: …Too big…", though no run started.
  it('says a message over the limit is too long, with its length and the limit, and sends nothing', async () => {
    await using fake = await startFakeOpenAIServer();
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [] });
    fake.enqueue({ text: 'Short one read.' });
    const { terminal, exited } = chatOnFakeTerminal({ address: { url: airlock.server.wsUrl, token: airlock.server.token }, sessionId: 's-too-long' });
    await terminal.shows('you›');
    terminal.type(`${'y'.repeat(100_001)}\r`);
    await terminal.says('Not sent: this message is 100,001 characters long, and Airlock takes at most 100,000 characters in one message. Nothing was started; shorten it, or send it in parts.');
    expect(terminal.text()).not.toContain('Lost the run');
    terminal.type('short\r');
    await terminal.shows('Short one read.');
    expect((await airlock.connect().trpc.sessions.get.query({ sessionId: 's-too-long' })).messages).toMatchObject([{ role: 'user', content: 'short' }, { role: 'assistant' }]);
    terminal.input.end();
    expect(await exited).toBe(0);
  });

  it('says a message the server refused to start a run for was not started, with why, not that a run was lost', async () => {
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool] });
    const address = { url: airlock.server.wsUrl, token: airlock.server.token };
    const { terminal, exited } = chatOnFakeTerminal({ address, sessionId: 's-busy' });
    await terminal.shows('you›');
    // Another client starts a run in this chat once the terminal is at its prompt: its call waits for a decision.
    fake.enqueue({ toolCalls: [{ name: 'echo', arguments: { text: 'elsewhere' } }] });
    const other = createAirlockClient({ url: airlock.server.wsUrl, token: airlock.server.token, WebSocket });
    await using _other = { [Symbol.asyncDispose]: () => other.close() };
    const elsewhere = other.startRun({ sessionId: 's-busy', message: 'from another client' });
    for await (const event of elsewhere) if (event.type === 'tool-start') break;
    terminal.type('hello\r');
    await terminal.says(`Not started: session "s-busy" is still running ${elsewhere.runId}; cancel it or wait for it to end`);
    expect(terminal.text()).not.toContain('Lost the run');
    expect(echo.calls).toStrictEqual([]);
    terminal.input.end();
    expect(await exited).toBe(0);
  });

  it('takes an answer typed once the call had been shown for the guard time, and ignores a doubled one for the next call', async () => {
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool] });
    fake.enqueue({ toolCalls: [{ name: 'echo', arguments: { text: 'harmless' } }, { name: 'echo', arguments: { text: 'DANGEROUS > pwned.txt' } }] }, { text: 'Done.' });
    const terminal = fakeTerminal();
    const exited = runChat({
      address: { url: airlock.server.wsUrl, token: airlock.server.token },
      input: terminal.input,
      output: terminal.output,
      env: { NO_COLOR: '1' },
      decisionGuardMs: 600,
      now: terminal.now,
    });

    await terminal.shows('you›');
    terminal.type('go\r');
    await terminal.shows(PROMPT, 'text: harmless');
    terminal.advance(1000);
    terminal.type('a\r');
    // The next call is asked at once, and the same key, pressed again 100 ms later, lands on it. (Its card was shown
    // above the first question already; asked, it is drawn with its note.)
    await terminal.shows(PROMPT, 'text: DANGEROUS > pwned.txt\n  A runs');
    terminal.advance(100);
    terminal.type('a\r');
    await terminal.shows('Ignored an answer typed before this call was shown: read it, then answer.');
    terminal.advance(1000);
    terminal.type('d not that one\r');
    await terminal.shows('Done.');
    expect(echo.calls).toStrictEqual(['harmless']);
    expect(terminal.text()).toContain('✗ denied: not that one');

    terminal.input.end();
    expect(await exited).toBe(0);
  });

  it('ignores a y typed before the question after a lone A had been shown for the guard time, and grants "Always allow" on one typed after', async () => {
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool] });
    fake.enqueue({ toolCalls: [{ name: 'echo', arguments: { text: 'first' } }] }, { toolCalls: [{ name: 'echo', arguments: { text: 'second' } }] }, { text: 'Done.' });
    const terminal = fakeTerminal();
    const exited = runChat({
      address: { url: airlock.server.wsUrl, token: airlock.server.token },
      input: terminal.input,
      output: terminal.output,
      env: { NO_COLOR: '1' },
      decisionGuardMs: 600,
      now: terminal.now,
    });
    const confirm = 'Always allow? A runs any echo call without asking, in this chat only. y grants it, anything else goes back ›';

    await terminal.shows('you›');
    terminal.type('go\r');
    await terminal.shows(PROMPT, 'text: first');
    terminal.advance(1000);
    terminal.type('A\r');
    await terminal.shows(confirm);
    terminal.advance(100);
    terminal.type('y\r');
    await terminal.shows('Ignored an answer typed before this call was shown: read it, then answer.');
    await terminal.shows(confirm, 'Ignored an answer');
    expect(echo.calls).toStrictEqual([]);
    terminal.advance(1000);
    terminal.type('y\r');
    await terminal.shows('Done.');
    expect(echo.calls).toStrictEqual(['first', 'second']);
    expect(terminal.text()).toContain('✓ allowed by an "always" grant');

    terminal.input.end();
    expect(await exited).toBe(0);
  });

  it('cuts a deny reason over the limit the server takes to that limit and says so: the call is denied with it', async () => {
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool] });
    fake.enqueue({ toolCalls: [{ name: 'echo', arguments: { text: 'first' } }] }, { text: 'Done.' });
    const { terminal, exited } = chatOnFakeTerminal({ address: { url: airlock.server.wsUrl, token: airlock.server.token } });

    await terminal.shows('you›');
    terminal.type('go\r');
    await terminal.shows(PROMPT, 'text: first');
    // A character outside the BMP across the limit is not cut in half.
    const reason = `${'r'.repeat(MAX_REASON_LENGTH - 1)}😀${'s'.repeat(499)}`;
    terminal.type(`d ${reason}\r`);
    await terminal.says(`The reason is 2,500 characters long, and Airlock takes at most ${MAX_REASON_LENGTH.toLocaleString('en')}: it was cut to its first 1,999.`);
    await terminal.shows('Done.');
    expect(echo.calls).toStrictEqual([]);
    expect(terminal.text()).not.toContain('refused the decision');
    expect(terminal.text()).toContain(`✗ denied: ${'r'.repeat(50)}`);
    const told = fake.requests[1]?.messages as { role: string; content?: unknown }[];
    expect(/r{100,}\S*/.exec(String(told.at(-1)?.content))?.[0]).toBe('r'.repeat(MAX_REASON_LENGTH - 1));

    terminal.input.end();
    expect(await exited).toBe(0);
  });

  it('draws the card again under a note said while it is asked about, so its question is never answered with the card pushed away', async () => {
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool] });
    fake.enqueue({ toolCalls: [{ name: 'echo', arguments: { text: 'DANGEROUS > pwned.txt' } }] }, { text: 'Done.' });
    const terminal = fakeTerminal();
    const exited = runChat({
      address: { url: airlock.server.wsUrl, token: airlock.server.token },
      input: terminal.input,
      output: terminal.output,
      env: { NO_COLOR: '1' },
      decisionGuardMs: 600,
      now: terminal.now,
    });
    const card = '⏺ echo\n  text: DANGEROUS > pwned.txt\n  A runs any echo call without asking, in this chat only';
    /** The card and its question as the last lines written, with nothing after them. */
    const endsWithCard = (after: string) => {
      const text = terminal.text().replace(/; undecided, it is denied at [^\n]*/g, '');
      expect(text.slice(text.lastIndexOf(after))).toBe(`${after}\n${card}\n  echo ${PROMPT} › `);
    };

    await terminal.shows('you›');
    terminal.type('go\r');
    await terminal.shows(PROMPT, 'text: DANGEROUS');
    terminal.advance(100);
    terminal.type('a\r');
    const typedAhead = 'Ignored an answer typed before this call was shown: read it, then answer.';
    await terminal.shows(PROMPT, typedAhead);
    endsWithCard(typedAhead);
    // Drawn again, the card is asked about as when first shown: an answer at once does not count.
    terminal.type('a\r');
    await expect.poll(() => terminal.text().split(typedAhead).length - 1, { timeout: 20_000, interval: 20 }).toBe(2);
    await terminal.shows(PROMPT, typedAhead);
    endsWithCard(typedAhead);
    terminal.advance(1000);
    terminal.type('x\r');
    const hint = 'Type a, A or d, optionally followed by a reason: "d use notes.txt instead"; v shows the whole call.';
    await terminal.shows(PROMPT, hint);
    endsWithCard(hint);
    expect(echo.calls).toStrictEqual([]);

    terminal.advance(1000);
    terminal.type('d not that one\r');
    await terminal.shows('Done.');
    expect(echo.calls).toStrictEqual([]);
    expect(terminal.text()).toContain('✗ denied: not that one');
    terminal.input.end();
    expect(await exited).toBe(0);
  });

  it('names the call of a line shown under another call\'s card: the decisions of a reply come after all its cards are asked about', async () => {
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool] });
    fake.enqueue({ toolCalls: [{ name: 'echo', arguments: { text: 'first' } }, { name: 'echo', arguments: { text: 'second' } }] }, { text: 'Done.' });
    const { terminal, exited } = chatOnFakeTerminal({ address: { url: airlock.server.wsUrl, token: airlock.server.token } });

    await terminal.shows('you›');
    terminal.type('go\r');
    await terminal.shows(PROMPT, 'text: first');
    terminal.type('a\r');
    await terminal.shows(PROMPT, 'text: second\n  A runs');
    terminal.type('d no\r');
    await terminal.shows('Done.');
    const after = terminal.text().slice(terminal.text().indexOf('› d no'));
    expect(after.split(/\r?\n/).slice(0, 6)).toStrictEqual([
      '› d no',
      '  for echo (call_1_0): ✓ allowed',
      '  → ran',
      '    │ echo: first',
      '  for echo (call_1_1): ✗ denied: no',
      '  → not run: denied',
    ]);
    expect(echo.calls).toStrictEqual(['first']);

    terminal.input.end();
    expect(await exited).toBe(0);
  });

  it('says when the connection went silent under an answer, asks again under the card once that answer can no longer land, and the server, reading it late, refuses it', async () => {
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    await using proxy = await startStallingProxy();
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool], allowedOrigins: [proxy.url] });
    proxy.forwardTo(airlock.server.url);
    fake.enqueue({ toolCalls: [{ name: 'echo', arguments: { text: 'late' } }] }, { text: 'Done.' });
    const { terminal, exited } = chatOnFakeTerminal({
      address: { url: socketUrl(proxy.url), token: airlock.server.token },
      keepAlive: { pingMs: 100, pongWaitMs: 1_000 },
      decisionTimeoutMs: 2_000,
    });

    await terminal.shows('you›');
    terminal.type('go\r');
    await terminal.shows(PROMPT, 'text: late');
    // The path dies without closing, as when the server is frozen: the answer waits in a buffer, unread.
    proxy.stall();
    terminal.type('a\r');
    await terminal.shows('Connection to Airlock lost; reconnecting…');
    await terminal.says('The connection went before the server answered: the decision may or may not have been applied, or may still be in the next ');
    await terminal.says(' s, and is shown if it is. Asked again once that time has passed.');
    await terminal.shows('Reconnected to Airlock.');
    // Asked again only once the answer sent can no longer be applied: its deadline has passed.
    await terminal.shows(PROMPT, 'The earlier answer can no longer be applied');
    await terminal.says('The earlier answer can no longer be applied (if it was before, it is shown here). Answer again to decide.');
    expect(echo.calls).toStrictEqual([]);

    // The server wakes and reads it past its deadline: refused, it decides nothing; the answer typed again does.
    proxy.release();
    terminal.type('a\r');
    await terminal.shows('Done.');
    expect(echo.calls).toStrictEqual(['late']);
    const after = terminal.text().slice(terminal.text().lastIndexOf('Reconnected to Airlock.'));
    expect(after).toContain('  ✓ allowed\n');
    expect(after).not.toContain('Decided while the connection was lost');
    expect(after).not.toContain('in another client\n');

    terminal.input.end();
    expect(await exited).toBe(0);
  });

  it('asks nothing again once Ctrl-C stopped the run while an answer cut off by a lost connection could still land, though the server has not taken the stop yet', async () => {
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    await using proxy = await startStallingProxy();
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool], allowedOrigins: [proxy.url] });
    proxy.forwardTo(airlock.server.url);
    fake.enqueue({ toolCalls: [{ name: 'echo', arguments: { text: 'DANGEROUS' } }] });
    // An address nobody listens on: the connection cannot come back until the proxy forwards to the server again.
    const nowhere = createServer();
    await new Promise<void>((resolve) => nowhere.listen(0, '127.0.0.1', resolve));
    const deadUrl = `http://127.0.0.1:${(nowhere.address() as AddressInfo).port}`;
    await new Promise((resolve) => nowhere.close(resolve));
    const { terminal, exited } = chatOnFakeTerminal({
      address: { url: socketUrl(proxy.url), token: airlock.server.token },
      keepAlive: { pingMs: 100, pongWaitMs: 500 },
      decisionTimeoutMs: 3_000,
    });

    await terminal.shows('you›');
    terminal.type('go\r');
    await terminal.shows(PROMPT, 'text: DANGEROUS');
    proxy.stall();
    terminal.type('a\r');
    proxy.forwardTo(deadUrl);
    await terminal.says('Asked again once that time has passed.');
    terminal.type('\x03');
    await terminal.says('Stopping… the stop is sent once the connection is back.');
    // The time in which the answer could land passes with the stop still unsent: the call is not asked about again.
    await terminal.says('Not asked again: the run is being stopped.');
    expect(terminal.text().slice(terminal.text().lastIndexOf('Stopping…'))).not.toContain(PROMPT);

    proxy.forwardTo(airlock.server.url);
    await terminal.shows('■ stopped');
    await terminal.shows('you›', '■ stopped');
    expect(terminal.text().slice(terminal.text().lastIndexOf('Stopping…'))).not.toContain(PROMPT);
    expect(echo.calls).toStrictEqual([]);
    terminal.input.end();
    expect(await exited).toBe(0);
  });

  it('says at once when the connection went under an answer that it may have been applied, and shows it as such when the server, reading it in time, applies it', async () => {
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    await using proxy = await startStallingProxy();
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool], allowedOrigins: [proxy.url] });
    proxy.forwardTo(airlock.server.url);
    fake.enqueue({ toolCalls: [{ name: 'echo', arguments: { text: 'in time' } }] }, { text: 'Done.' });
    const { terminal, exited } = chatOnFakeTerminal({
      address: { url: socketUrl(proxy.url), token: airlock.server.token },
      keepAlive: { pingMs: 100, pongWaitMs: 1_000 },
      // Far beyond the test: the terminal says what it knows when the connection goes, not when this passes.
      decisionTimeoutMs: 600_000,
    });

    await terminal.shows('you›');
    terminal.type('go\r');
    await terminal.shows(PROMPT, 'text: in time');
    proxy.stall();
    terminal.type('a\r');
    await expect
      .poll(() => terminal.text().replace(/\s+/g, ' '), WAIT)
      .toMatch(/The connection went before the server answered: the decision may or may not have been applied, or may still be in the next \d+ s, and is shown if it is\. Asked again once that time has passed\./);
    await terminal.shows('Reconnected to Airlock.');
    expect(echo.calls).toStrictEqual([]);
    // Nothing is asked while the answer sent may still land: a line typed now decides nothing (found in review: asked
    // again at once, a second answer could be overtaken by the first, or overtake it).
    terminal.type('d changed my mind\r');
    await terminal.shows('d changed my mind', 'Reconnected to Airlock.');

    // The server reads the allow well before its deadline and applies it: the question is withdrawn, the decision shown.
    proxy.release();
    await terminal.shows('Done.');
    expect(echo.calls).toStrictEqual(['in time']);
    await terminal.says('Decided while the connection was lost: by the answer entered here before it, or in another client.');

    terminal.input.end();
    expect(await exited).toBe(0);
  });
});
