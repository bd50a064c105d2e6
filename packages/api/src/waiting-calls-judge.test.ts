import { ApprovalRegistry, defineTool, type AnyTool, type PolicyVerdict, type ToolCall } from '@airlock/core';
import { deferred, ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ChatService } from './chat-service';
import type { RuleService } from './context';
import { MemoryStore } from './memory-store';
import type { AppendEventInput } from './store';
import { MARK_RETRY_FIRST_MS, MARK_RETRY_MAX_MS, UNJUDGED, WaitingCallsJudge } from './waiting-calls-judge';

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((chat) => chat.shutdown()));
});

function echoTool(ran: string[]): AnyTool {
  return defineTool({ name: 'echo', description: 'echoes', parameters: z.object({ text: z.string() }), annotations: { executesCode: false }, execute: ({ text }) => (ran.push(text), Promise.resolve(`echo: ${text}`)) });
}

/** Rules that judge as `judge` makes them (told their version), and `change`, which moves their version on and tells their listeners. */
function changingRules(judge: (version: () => number) => Partial<RuleService>) {
  const listeners = new Set<() => void>();
  let version = 0;
  const rules = {
    ...judge(() => version),
    version: () => version,
    onChange: (listener: () => void) => (listeners.add(listener), () => listeners.delete(listener)),
  } as Partial<RuleService> as RuleService;
  const change = () => {
    version++;
    for (const listener of listeners) listener();
  };
  return { rules, change };
}

/** A chat service of `options`, opened, with a run `r-<chat>` started in each of `chats`, each waiting on its one call. */
async function chatsWaiting(options: ConstructorParameters<typeof ChatService>[0], chats: readonly string[]): Promise<ChatService> {
  const chat = new ChatService(options);
  services.push(chat);
  await chat.open();
  for (const sessionId of chats) {
    await chat.startRun({ sessionId, runId: `r-${sessionId}`, message: 'go' });
    await vi.waitFor(() => expect(chat.pending(sessionId)).toHaveLength(1), { timeout: 10_000 });
  }
  return chat;
}

/** Rules that cannot be read for one call while `damaged` (a workspace rules file unreadable as it is judged, say). */
function damageableRules() {
  const state = { damaged: false };
  const { rules, change } = changingRules(() => ({
    evaluate: (_sessionId: string, call: ToolCall): Promise<PolicyVerdict | undefined> =>
      state.damaged && call.arguments.text === 'cat ~/.ssh/id_rsa' ? Promise.reject(new Error('the workspace rules file cannot be read')) : Promise.resolve(undefined),
  }));
  return { rules, state, change };
}

describe('a waiting call the changed rules could not judge again', () => {
  it('is held to exact grants, saying why: a grant for any call of its tool does not release it (found in review)', async () => {
    const { rules, state, change } = damageableRules();
    const ran: string[] = [];
    const log: string[] = [];
    const model = new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'cat ~/.ssh/id_rsa' } }, { name: 'echo', arguments: { text: 'hello' } }), textStep('done')]);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [echoTool(ran)], store: new MemoryStore(), rules, log: (line) => log.push(line) });
    services.push(chat);
    await chat.open();
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(2), { timeout: 10_000 });
    const [unjudged, plain] = chat.pending('s');

    state.damaged = true;
    change();
    // "Always allow" in this chat on the other call: a grant for any call of the tool, given after the change.
    expect(await chat.confirm({ sessionId: 's', approvalId: plain!.approvalId, decision: 'allow', always: true })).toMatchObject({ resolved: true, decision: 'allow' });
    expect(chat.pending('s').map((call) => call.approvalId)).toStrictEqual([unjudged!.approvalId]);
    const [listed] = await chat.listWaiting('s');
    expect(listed).toMatchObject({ approvalId: unjudged!.approvalId, exactGrantsOnly: true, askedBecause: { ruleId: 'rules-unread', reason: [{ text: expect.stringContaining('the workspace rules file cannot be read') }] } });
    expect(log).toContainEqual(expect.stringContaining(`Could not judge ${unjudged!.approvalId} again by the rules`));
    expect(ran).toStrictEqual([]);

    // The person's own allow of it, on its card, still runs it.
    state.damaged = false;
    expect(await chat.confirm({ sessionId: 's', approvalId: unjudged!.approvalId, decision: 'allow' })).toMatchObject({ resolved: true, decision: 'allow' });
    await vi.waitFor(() => expect(chat.listSessions().find((s) => s.sessionId === 's')?.activeRunId).toBeNull(), { timeout: 10_000 });
    expect(ran).toStrictEqual(['cat ~/.ssh/id_rsa', 'hello']);
  });
});

describe('the hold of a call judged before its start was stored', () => {
  it('reaches the store with the start: the ledger row of a call held while its start was being written says so from the moment it is there (found in review)', async () => {
    const { rules, state, change } = damageableRules();
    const ran: string[] = [];
    // Every write holding a call's start waits until `written` is resolved.
    const written = deferred<void>();
    const starting: string[] = [];
    class SlowStarts extends MemoryStore {
      override async appendEvent(input: AppendEventInput): Promise<void> {
        if (input.ledger?.kind === 'start') {
          starting.push(input.runId);
          await written.promise;
        }
        return super.appendEvent(input);
      }
    }
    const store = new SlowStarts();
    const model = new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'cat ~/.ssh/id_rsa' } }), textStep('done')]);
    const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => model, tools: () => [echoTool(ran)], store, rules, log: () => {} });
    services.push(chat);
    await chat.open();
    await chat.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(starting).toStrictEqual(['r1']), { timeout: 10_000 });
    await vi.waitFor(() => expect(chat.pending('s')).toHaveLength(1), { timeout: 10_000 });

    // The rules change while the call's start is still being written: they cannot judge it, and it is held here.
    state.damaged = true;
    change();
    await vi.waitFor(() => expect(chat.pending('s').map((call) => call.exactGrantsOnly)).toStrictEqual([true]), { timeout: 10_000 });
    written.resolve();

    // What a restart, or another instance, reads of the call holds it too, from the moment its row is there.
    const [firstSeen] = await vi.waitFor(
      async () => {
        const rows = await store.listRunToolCalls('r1');
        expect(rows).toHaveLength(1);
        return rows;
      },
      { timeout: 10_000, interval: 1 },
    );
    expect([firstSeen!.decision, firstSeen!.exactGrantsOnly, firstSeen!.askedBecause?.ruleId]).toStrictEqual([null, true, UNJUDGED]);
    expect(ran).toStrictEqual([]);
  });
});

describe('a decision after the rules changed', () => {
  it('waits for the judgement of its own chat only, not of every chat: one chat whose judgement is slow holds no other (found in review)', async () => {
    const slow = deferred();
    const started = deferred();
    const deny: PolicyVerdict = { effect: 'deny', ruleId: 'rule_rm', description: [{ text: 'Deny rm' }], message: 'no rm' };
    const { rules, change } = changingRules((version) => ({
      evaluate: async (sessionId: string): Promise<PolicyVerdict | undefined> => {
        if (version() === 0 || sessionId !== 'slow') return undefined;
        started.resolve();
        await slow.promise;
        return deny;
      },
    }));
    const ran: string[] = [];
    const steps = () => new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'hello' } }), textStep('done')]);
    const models = new Map([
      ['r-quick', steps()],
      ['r-slow', steps()],
    ]);
    let next = 0;
    const order = ['r-quick', 'r-slow'];
    const chat = await chatsWaiting({ registry: new ApprovalRegistry(), model: () => models.get(order[next++]!)!, tools: () => [echoTool(ran)], store: new MemoryStore(), rules }, ['quick', 'slow']);
    const [quick] = chat.pending('quick');
    const [held] = chat.pending('slow');

    change();
    await started.promise;
    // The slow chat's judgement is still reading: an allow in the other chat lands, and its call runs.
    expect(await chat.confirm({ sessionId: 'quick', approvalId: quick!.approvalId, decision: 'allow' })).toMatchObject({ resolved: true, decision: 'allow' });
    await vi.waitFor(() => expect(ran).toStrictEqual(['hello']), { timeout: 10_000 });

    // An allow in the slow chat still lands after its chat's judgement: the rule denied the call first.
    const allow = chat.confirm({ sessionId: 'slow', approvalId: held!.approvalId, decision: 'allow' });
    slow.resolve();
    expect(await allow).toMatchObject({ resolved: false, status: 'already-decided', decision: 'deny' });
    expect(ran).toStrictEqual(['hello']);
  });
});

describe('a waiting call the rules never finish judging again', () => {
  it('is held as one they could not judge once their time is up, and the decisions of every chat land (found in review)', async () => {
    const { rules, change } = changingRules((version) => ({
      // A file system that hangs: the judgement of the stuck chat's call never ends.
      evaluate: (sessionId: string): Promise<PolicyVerdict | undefined> => (version() > 0 && sessionId === 'stuck' ? new Promise<never>(() => {}) : Promise.resolve(undefined)),
    }));
    const ran: string[] = [];
    const models = [new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'stuck' } }), textStep('done')]), new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text: 'quick' } }), textStep('done')])];
    const chat = await chatsWaiting({ registry: new ApprovalRegistry(), model: () => models.shift()!, tools: () => [echoTool(ran)], store: new MemoryStore(), rules, judgeCallTimeLimitMs: 1, log: () => {} }, ['stuck', 'quick']);
    const [stuck] = chat.pending('stuck');
    const [quick] = chat.pending('quick');

    change();
    expect(await chat.confirm({ sessionId: 'quick', approvalId: quick!.approvalId, decision: 'allow' })).toMatchObject({ resolved: true, decision: 'allow' });
    await vi.waitFor(() => expect(ran).toStrictEqual(['quick']), { timeout: 10_000 });
    const [held] = await chat.listWaiting('stuck');
    expect(held).toMatchObject({ approvalId: stuck!.approvalId, exactGrantsOnly: true, askedBecause: { ruleId: 'rules-unread', reason: [{ text: expect.stringContaining('the rules took longer than 1 ms to judge it') }] } });
    expect(await chat.confirm({ sessionId: 'stuck', approvalId: stuck!.approvalId, decision: 'deny' })).toMatchObject({ resolved: true, decision: 'deny' });
    expect(ran).toStrictEqual(['quick']);
  });
});

describe('a judgement of the waiting calls of many chats', () => {
  it('lets the server serve between chats, rather than hold its thread for the whole pass (found in review)', async () => {
    let judged = 0;
    let judgedWhenServed: number | undefined;
    const { rules, change } = changingRules((version) => ({
      // Rules that answer at once, as most do for a call no file look concerns: the pass itself never waits.
      evaluate: (): Promise<PolicyVerdict | undefined> => {
        if (version() > 0 && judged++ === 0) setImmediate(() => (judgedWhenServed = judged));
        return Promise.resolve(undefined);
      },
    }));
    const chats = ['a', 'b', 'c', 'd'];
    const models = chats.map((text) => new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text } }), textStep('done')]));
    await chatsWaiting({ registry: new ApprovalRegistry(), model: () => models.shift()!, tools: () => [echoTool([])], store: new MemoryStore(), rules }, chats);

    change();
    await vi.waitFor(() => expect([judged, judgedWhenServed !== undefined]).toStrictEqual([chats.length, true]), { timeout: 10_000 });
    expect(judgedWhenServed).toBeLessThan(chats.length);
  });
});

describe('rules read for a pass while another read finds them changed', () => {
  it('are read again for the next chat, not kept under the newer version: a deny rule the other read found denies every waiting call it catches (found in review)', async () => {
    let fileDenies = false;
    const firstRead = deferred<void>();
    const firstReadStarted = deferred<void>();
    let reads = 0;
    const deny: PolicyVerdict = { effect: 'deny', ruleId: 'no-echo', description: [{ text: 'never echo' }], message: 'echo is denied by a rule' };
    const { rules, change } = changingRules(() => ({
      evaluate: (): Promise<PolicyVerdict | undefined> => Promise.resolve(fileDenies ? deny : undefined),
      // As the rule book's: the file as this read saw it, whatever a read that finished before it saw.
      snapshot: async () => {
        const saw = fileDenies;
        if (reads++ === 0) {
          firstReadStarted.resolve();
          await firstRead.promise;
        }
        return () => Promise.resolve(saw ? deny : undefined);
      },
    }));
    const ran: string[] = [];
    const chats = ['a', 'b'];
    const models = chats.map((text) => new ScriptedModel([toolCallStep({ name: 'echo', arguments: { text } }), textStep('done')]));
    const chat = await chatsWaiting({ registry: new ApprovalRegistry(), model: () => models.shift()!, tools: () => [echoTool(ran)], store: new MemoryStore(), rules }, chats);

    change();
    await firstReadStarted.promise;
    // Meanwhile another read of the rules (a new call's) finds the deny rule the file gained.
    fileDenies = true;
    change();
    firstRead.resolve();

    await vi.waitFor(() => expect(chats.map((sessionId) => chat.pending(sessionId).length)).toStrictEqual([0, 0]), { timeout: 10_000 });
    expect(ran).toStrictEqual([]);
  });
});

describe('the hold of a call the rules could not judge, its write to the store failing', () => {
  /** A judge over one registry whose call `x` the rules cannot read, and a store whose writes of a hold fail `failing` times. */
  function judgeWithFlakyStore(failing: number) {
    const registry = new ApprovalRegistry();
    const ticket = registry.register({ sessionId: 's', runId: 'r1', toolCallId: 'c1', toolName: 'echo', arguments: { text: 'x' }, executesCode: false, toolVersion: 'v1', timeoutMs: 'never' });
    const writes: string[] = [];
    const changed: string[] = [];
    let left = failing;
    const store = {
      requireExactGrants: (runId: string, toolCallId: string) => {
        writes.push(`${runId}/${toolCallId}`);
        if (left === 0) return Promise.resolve(true);
        left -= 1;
        return Promise.reject(new Error('the connection to the database was lost'));
      },
    };
    const rules = { evaluate: () => Promise.reject(new Error('the workspace rules file cannot be read')) } as Partial<RuleService> as RuleService;
    const judge = new WaitingCallsJudge({ registry, rules, store, sessions: () => ['s'], toolOf: () => echoTool([]), changed: (sessionId) => changed.push(sessionId), log: () => {} });
    return { registry, ticket, judge, writes, changed };
  }

  afterEach(() => {
    vi.useRealTimers();
  });

  it('is written again, later each time, until the store keeps it, and the watchers told then (found in review)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { registry, judge, writes, changed } = judgeWithFlakyStore(2);
    await judge.judgeAll();
    expect(registry.listPending('s').map((call) => [call.exactGrantsOnly, call.askedBecause?.ruleId])).toStrictEqual([[true, UNJUDGED]]);
    expect([writes.length, changed.length]).toStrictEqual([1, 1]);
    await vi.advanceTimersByTimeAsync(MARK_RETRY_FIRST_MS);
    expect(writes).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(MARK_RETRY_FIRST_MS);
    expect(writes).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(MARK_RETRY_FIRST_MS);
    expect([writes.length, changed.length]).toStrictEqual([3, 2]);
    await vi.advanceTimersByTimeAsync(MARK_RETRY_MAX_MS * 2);
    expect(writes).toStrictEqual(['r1/c1', 'r1/c1', 'r1/c1']);
  });

  it('is no longer written once the call is decided, nor once the judge is stopped', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const decided = judgeWithFlakyStore(Number.POSITIVE_INFINITY);
    await decided.judge.judgeAll();
    await vi.advanceTimersByTimeAsync(MARK_RETRY_FIRST_MS);
    expect(decided.writes).toHaveLength(2);
    expect(decided.registry.resolve(decided.registry.listPending('s')[0]!.approvalId, 'deny', { sessionId: 's' })).toMatchObject({ resolved: true });
    await vi.advanceTimersByTimeAsync(MARK_RETRY_MAX_MS * 2);
    expect(decided.writes).toHaveLength(2);

    const stopped = judgeWithFlakyStore(Number.POSITIVE_INFINITY);
    await stopped.judge.judgeAll();
    stopped.judge.stop();
    await vi.advanceTimersByTimeAsync(MARK_RETRY_MAX_MS * 2);
    expect(stopped.writes).toHaveLength(1);
    expect(stopped.registry.listPending('s').map((call) => call.exactGrantsOnly)).toStrictEqual([true]);
  });
});
