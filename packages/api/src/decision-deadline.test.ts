import { ApprovalRegistry, defineTool, type LoopEvent } from '@airlock/core';
import { ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ChatService } from './chat-service';
import { ConnectionState } from './context';
import { clientClockOffset } from './decision-deadline';
import { appRouter, createCallerFactory } from './router';

const createCaller = createCallerFactory(appRouter);
const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.shutdown()));
});

function setup() {
  const ran: string[] = [];
  const echo = defineTool({
    name: 'echo',
    description: 'echoes',
    parameters: z.object({ text: z.string() }),
    execute: async ({ text }) => {
      ran.push(text);
      return `echo: ${text}`;
    },
  });
  const model = new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'hi' } }), textStep('done')]);
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [echo] });
  services.push(chat);
  const callerOn = (connection: ConnectionState) =>
    createCaller({ services: { chat, catalog: { tools: () => [echo], servers: () => [] }, modelInfo: () => ({ provider: 'test', baseURL: null, model: 'scripted', demo: false }) }, connection });
  return { chat, ran, callerOn };
}

/** The event of a tracked item as a caller reads it (`[id, event]`). */
const eventOf = (item: unknown) => (item as [string, LoopEvent])[1];

describe('a decision with a deadline (notAfter)', () => {
  it('is refused with TIMEOUT once past it, the call still waiting; refused on a connection with no clock; applied before it', async () => {
    const { ran, callerOn } = setup();
    // A client whose clock reads 5 s behind this process's.
    const caller = callerOn(new ConnectionState('c1', { clientClockOffset: 5_000 }));
    const events = (await caller.chat.stream({ sessionId: 's1', runId: 'run-1', message: 'go' }))[Symbol.asyncIterator]();
    let start: LoopEvent | undefined;
    while (start?.type !== 'tool-start') start = eventOf((await events.next()).value);
    const decision = { sessionId: 's1', approvalId: start.approvalId, decision: 'allow' as const };
    const clientNow = () => performance.now() - 5_000;

    await expect(caller.chat.confirmTool({ ...decision, notAfter: clientNow() - 1 })).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: expect.stringMatching(/^notAfter: the decision came \d+ ms after its deadline, when its client had stopped waiting for it; it was not applied, and the call still waits$/),
    });
    await expect(callerOn(new ConnectionState('c2')).chat.confirmTool({ ...decision, notAfter: clientNow() + 60_000 })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect((await caller.chat.pending({ sessionId: 's1' })).map((call) => call.approvalId)).toStrictEqual([start.approvalId]);
    expect(ran).toStrictEqual([]);

    expect(await caller.chat.confirmTool({ ...decision, notAfter: clientNow() + 60_000 })).toStrictEqual({ resolved: true, status: 'resolved', decision: 'allow' });
    for (let next = await events.next(); !next.done; next = await events.next()) if (eventOf(next.value).type === 'run-end') break;
    expect(ran).toStrictEqual(['hi']);
  });

  it('reads the client clock by when the socket was accepted, and nothing else as a clock', () => {
    expect(clientClockOffset('1000.5', 4000)).toBe(2999.5);
    for (const clock of [undefined, '', 'soon', 'Infinity', '1e400', 12, '9'.repeat(40)]) expect(clientClockOffset(clock, 4000)).toBeUndefined();
  });
});
