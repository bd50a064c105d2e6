import { ApprovalRegistry } from '@airlock/core';
import { hangingStep, ScriptedModel, textStep, type ScriptStep } from '@airlock/core/testing';
import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { ChatService, type SessionChange, type SessionSummary } from './chat-service';
import { ConnectionState } from './context';
import { MemoryStore } from './memory-store';
import { appRouter, createCallerFactory } from './router';
import { DEFAULT_SESSION_PAGE, MAX_SESSION_PAGE } from './session-cursor';
import { MAX_SESSION_SEARCH } from './session-search';

const createCaller = createCallerFactory(appRouter);

/**
 * A service over a store holding `count` chats, `chat-000`…, active three to a millisecond (so pages end inside a
 * run of ties), and a caller of its router.
 */
async function withChats(count: number, newChats = 0, steps: ScriptStep[] = Array.from({ length: newChats }, () => textStep('ok'))) {
  const store = new MemoryStore();
  for (let index = 0; index < count; index++) {
    const sessionId = `chat-${String(index).padStart(3, '0')}`;
    await store.createSession({ sessionId, title: `chat ${index}`, createdAt: 1_000, updatedAt: 1_000 + Math.floor(index / 3), confirmToolCalls: true, lastRunId: null });
  }
  const model = new ScriptedModel(steps);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [], store });
  await chat.open();
  const caller = createCaller({
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('c1'),
  });
  return {
    chat,
    caller,
    [Symbol.asyncDispose]: () => chat.shutdown(),
  };
}

/** How a call was refused: its code and its input's issues, as the error formatter names them to a client. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; issues: string[] }> {
  const error = await call.then(
    () => expect.fail('the call was not refused'),
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof TRPCError) || !(error.cause instanceof ZodError)) throw error;
  return { code: error.code, issues: error.cause.issues.map((issue) => `${issue.path.map(String).join('.')}: ${issue.message}`) };
}

/** The ids in the order a page lists them: the more recently active first, then the greater id. */
function inListOrder(sessions: readonly Pick<SessionSummary, 'sessionId' | 'updatedAt'>[]): string[] {
  return [...sessions].sort((a, b) => b.updatedAt - a.updatedAt || (a.sessionId < b.sessionId ? 1 : -1)).map((session) => session.sessionId);
}

describe('sessions.list', () => {
  it('pages through every chat once, in order, most recently active first; without input it answers the first page', async () => {
    await using service = await withChats(250);
    const { caller, chat } = service;
    const all = inListOrder(chat.listSessions());

    const first = await caller.sessions.list();
    expect(first.sessions.map((session) => session.sessionId)).toStrictEqual(all.slice(0, DEFAULT_SESSION_PAGE));
    expect(first.nextCursor).toEqual(expect.any(String));

    const listed: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await caller.sessions.list({ limit: 40, ...(cursor === undefined ? {} : { cursor }) });
      listed.push(...page.sessions.map((session) => session.sessionId));
      sizes.push(page.sessions.length);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(listed).toStrictEqual(all);
    expect(sizes).toStrictEqual([40, 40, 40, 40, 40, 40, 10]);

    const whole = await caller.sessions.list({ limit: 250 });
    expect(whole.sessions).toHaveLength(250);
    expect(whole.nextCursor).toBeNull();
  });

  it('lists no chat twice and, with sessions.watch, misses none, while chats are made and changed between pages', async () => {
    await using service = await withChats(200, 5);
    const { caller, chat } = service;
    const before = new Set(chat.listSessions().map((session) => session.sessionId));
    const changed = new Set<string>();
    // A client watches before it reads the first page: what changes while it pages is told there.
    const stop = chat.watchSessions((change: SessionChange) => {
      if (change.type === 'session-changed') changed.add(change.session.sessionId);
    });

    const listed: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await caller.sessions.list({ limit: 30, ...(cursor === undefined ? {} : { cursor }) });
      listed.push(...page.sessions.map((session) => session.sessionId));
      cursor = page.nextCursor ?? undefined;
      pages++;
      if (pages === 2) {
        // One already listed, one on the next page and one far ahead move to the top; a new chat comes.
        for (const sessionId of [listed[5]!, 'chat-140', 'chat-010']) await chat.updateSession(sessionId, { title: `changed ${sessionId}` });
        await chat.startRun({ sessionId: 'new-1', message: 'a new chat' });
      }
      if (pages === 4) {
        await chat.updateSession('chat-003', { title: 'changed again' });
        await chat.startRun({ sessionId: 'new-2', message: 'another new chat' });
      }
    } while (cursor !== undefined);
    stop();

    expect(listed.length).toBe(new Set(listed).size);
    const seen = new Set([...listed, ...changed]);
    expect([...before, 'new-1', 'new-2'].filter((sessionId) => !seen.has(sessionId))).toStrictEqual([]);
    // A chat nobody changed is listed by the pages themselves.
    expect([...before].filter((sessionId) => !changed.has(sessionId) && !listed.includes(sessionId))).toStrictEqual([]);
    expect(changed).toEqual(new Set([listed[5], 'chat-140', 'chat-010', 'chat-003', 'new-1', 'new-2']));
  });

  it('lists the chats with a run going on their own, whatever page they are on', async () => {
    await using service = await withChats(150, 0, [hangingStep()]);
    const { caller, chat } = service;
    await chat.startRun({ sessionId: 'busy', runId: 'run-busy', message: 'a run that goes on' });
    // 120 chats are active after it: its run goes on, on the second page.
    for (let index = 0; index < 120; index++) await chat.updateSession(`chat-${String(index).padStart(3, '0')}`, { title: `active ${index}` });
    expect((await caller.sessions.list()).sessions.map((session) => session.sessionId)).not.toContain('busy');
    expect(await caller.sessions.list({ running: true })).toMatchObject({ sessions: [{ sessionId: 'busy', activeRunId: 'run-busy' }], nextCursor: null });
    const { nextCursor } = await caller.sessions.list({ running: true, limit: 1 });
    expect(nextCursor).toBeNull();
  });

  it('searches every chat by title with query, whatever the case, paged as the list is', async () => {
    await using service = await withChats(250, 0, [hangingStep()]);
    const { caller, chat } = service;
    const matching = inListOrder(chat.listSessions().filter((session) => /^chat 1\d?$/.test(session.title)));
    expect(matching).toHaveLength(11);
    // chat-010 … chat-019 are active long before the first page's last chat: only the search reaches them.
    expect((await caller.sessions.list()).sessions.map((session) => session.sessionId).filter((sessionId) => matching.includes(sessionId))).toStrictEqual([]);

    const found: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await caller.sessions.list({ limit: 4, query: '  CHAT 1 ', ...(cursor === undefined ? {} : { cursor }) });
      found.push(...page.sessions.map((session) => session.sessionId));
      sizes.push(page.sessions.length);
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    // chat 1, chat 10 … chat 19, and chat 100 … chat 199.
    const expected = inListOrder(chat.listSessions().filter((session) => session.title.startsWith('chat 1')));
    expect(expected).toHaveLength(111);
    expect(found).toStrictEqual(expected);
    expect(sizes).toStrictEqual([...Array.from({ length: 27 }, () => 4), 3]);
    expect(await caller.sessions.list({ query: 'no such chat' })).toStrictEqual({ sessions: [], nextCursor: null });

    await chat.startRun({ sessionId: 'busy', runId: 'run-busy', message: 'Deploy the site' });
    expect(await caller.sessions.list({ running: true, query: 'deploy' })).toMatchObject({ sessions: [{ sessionId: 'busy', activeRunId: 'run-busy' }], nextCursor: null });
    expect(await caller.sessions.list({ running: true, query: 'chat' })).toStrictEqual({ sessions: [], nextCursor: null });
  });

  it('refuses a search of no text or longer than a title can be, naming the field', async () => {
    await using service = await withChats(3);
    const { caller } = service;
    for (const query of ['', '   ']) {
      expect(await refusal(caller.sessions.list({ query }))).toStrictEqual({ code: 'BAD_REQUEST', issues: ['query: Too small: expected string to have >=1 characters'] });
    }
    expect(await refusal(caller.sessions.list({ query: 'a'.repeat(MAX_SESSION_SEARCH + 1) }))).toStrictEqual({ code: 'BAD_REQUEST', issues: [`query: Too big: expected string to have <=${MAX_SESSION_SEARCH} characters`] });
    expect((await caller.sessions.list({ query: ` ${'a'.repeat(MAX_SESSION_SEARCH)} ` })).sessions).toStrictEqual([]);
  });

  it('refuses a limit out of bounds and a cursor it did not give, naming the field', async () => {
    await using service = await withChats(3);
    const { caller } = service;
    expect(await refusal(caller.sessions.list({ limit: MAX_SESSION_PAGE + 1 }))).toStrictEqual({ code: 'BAD_REQUEST', issues: [`limit: Too big: expected number to be <=${MAX_SESSION_PAGE}`] });
    expect(await refusal(caller.sessions.list({ limit: 0 }))).toStrictEqual({ code: 'BAD_REQUEST', issues: ['limit: Too small: expected number to be >=1'] });
    expect(await refusal(caller.sessions.list({ limit: 2.5 }))).toStrictEqual({ code: 'BAD_REQUEST', issues: ['limit: Invalid input: expected int, received number'] });
    const notOurs = 'cursor: not a cursor this server gave: pass the nextCursor of the previous page, or none for the first';
    for (const cursor of ['', 'not a cursor', btoa('x:chat-001'), btoa('12:has space'), 'a'.repeat(400)]) {
      expect(await refusal(caller.sessions.list({ cursor }))).toStrictEqual({ code: 'BAD_REQUEST', issues: [notOurs] });
    }
    expect(await refusal(caller.sessions.list({ cursor: 'a'.repeat(401) }))).toStrictEqual({ code: 'BAD_REQUEST', issues: ['cursor: Too big: expected string to have <=400 characters'] });
    const { nextCursor } = await caller.sessions.list({ limit: 2 });
    expect((await caller.sessions.list({ limit: 2, cursor: nextCursor! })).sessions.map((session) => session.sessionId)).toStrictEqual(['chat-000']);
  });
});
