import { appRouter, ChatService, ConnectionState, createCallerFactory, MemoryStore, type AppRouter } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { hangingStep, ScriptedModel } from '@airlock/core/testing';
import { TRPCClientError, type TRPCLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { testTrpc } from '../lib/test-trpc';
import { useRunningChats } from './use-running-chats';

afterEach(cleanup);

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((chat) => chat.shutdown()));
});

/** The server's own router over a store where `running` chats have a run going (`busy-0` started first) among idle ones. */
async function serverWith(running: number, later = 0) {
  const store = new MemoryStore();
  for (let index = 0; index < 20; index++) {
    await store.createSession({ sessionId: `idle-${index}`, title: `Idle ${index}`, createdAt: 1_000, updatedAt: 1_000 + index, confirmToolCalls: true, lastRunId: null });
  }
  const model = new ScriptedModel(Array.from({ length: running + later }, () => hangingStep()));
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [], store });
  services.push(chat);
  await chat.open();
  for (let index = 0; index < running; index++) await chat.startRun({ sessionId: `busy-${index}`, runId: `run-${index}`, message: `Busy ${index}` });
  const caller = createCallerFactory(appRouter)({
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) },
    connection: new ConnectionState('page'),
  });
  const reads: unknown[] = [];
  /** Reads from this one on wait for `release()`. */
  const gate = { from: Infinity, waiting: [] as (() => void)[] };
  const link: TRPCLink<AppRouter> = () => ({ op }) =>
    observable((observer) => {
      if (op.path !== 'sessions.list') return () => undefined;
      reads.push(op.input);
      const held = reads.length > gate.from ? new Promise<void>((resolve) => gate.waiting.push(resolve)) : Promise.resolve();
      held.then(() => caller.sessions.list(op.input as Parameters<typeof caller.sessions.list>[0])).then(
        (data) => {
          observer.next({ result: { type: 'data', data } });
          observer.complete();
        },
        (error: unknown) => observer.error(TRPCClientError.from(error as Error)),
      );
      return () => undefined;
    });
  const startLater = async () => {
    for (let index = running; index < running + later; index++) await chat.startRun({ sessionId: `busy-${index}`, runId: `run-${index}`, message: `Busy ${index}` });
  };
  return { reads, gate, startLater, link };
}

function RunningChats({ pageSize }: { pageSize: number }) {
  const running = useRunningChats(60_000, pageSize);
  return <p data-testid="running">{running === undefined ? 'not read' : running.map((session) => session.title).join(', ')}</p>;
}

// The Waiting list reads the calls of the chats this lists: with one page read, the calls of every chat past it (past
// the 500 most recently active with a run going) were never listed, nor said to be missing.
describe('the chats with a run going', () => {
  it('are read a page at a time until none is left, and given only once every page has been read', async () => {
    const server = await serverWith(7);
    render(testTrpc(server.link).provide(<RunningChats pageSize={3} />));
    expect(screen.getByTestId('running').textContent).toBe('not read');
    await screen.findByText('Busy 6, Busy 5, Busy 4, Busy 3, Busy 2, Busy 1, Busy 0');
    expect(server.reads).toStrictEqual([
      { running: true, limit: 3, direction: 'forward' },
      { running: true, limit: 3, cursor: expect.any(String), direction: 'forward' },
      { running: true, limit: 3, cursor: expect.any(String), direction: 'forward' },
    ]);
  });

  // Found in review: once read whole, a read again that found more pages than before (more chats running) gave the
  // pages read so far as the whole list, and the calls of the chats past them were taken for decided.
  it('keeps the last whole list while a read again finds more pages than before, and gives the new one once whole', async () => {
    const server = await serverWith(7, 3);
    const { provide, queryClient } = testTrpc(server.link);
    render(provide(<RunningChats pageSize={3} />));
    const first = 'Busy 6, Busy 5, Busy 4, Busy 3, Busy 2, Busy 1, Busy 0';
    await screen.findByText(first);
    await server.startLater();
    // The read again: its three pages come, the fourth, which Busy 0 is now on, waits.
    server.gate.from = server.reads.length + 3;
    void queryClient.refetchQueries();
    await expect.poll(() => server.gate.waiting.length).toBe(1);
    expect(screen.getByTestId('running').textContent).toBe(first);
    server.gate.waiting.splice(0).forEach((release) => release());
    server.gate.from = Infinity;
    await screen.findByText('Busy 9, Busy 8, Busy 7, Busy 6, Busy 5, Busy 4, Busy 3, Busy 2, Busy 1, Busy 0');
  });
});
