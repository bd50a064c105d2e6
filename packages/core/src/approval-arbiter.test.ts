import { describe, expect, it } from 'vitest';
import { ApprovalRegistry, type ApprovalRequest, type DecisionOutcome, type PendingApproval } from './approval-registry';
import { Cancellation } from './cancellation';

function request(overrides: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return { sessionId: 'sess', runId: 'run-1', toolCallId: 'call-1', toolName: 'read_file', arguments: { path: 'a.txt' }, executesCode: false, toolVersion: 'v1', ...overrides };
}

/** A registry whose arbiter keeps every outcome (answers undefined); `asked()` tells how many times it was asked. */
function withCountingArbiter(): { registry: ApprovalRegistry; asked: () => number } {
  let calls = 0;
  const registry = new ApprovalRegistry({
    arbiter: () => {
      calls++;
      return undefined;
    },
  });
  return { registry, asked: () => calls };
}

describe('ApprovalRegistry with an arbiter', () => {
  it('lets the arbiter replace a cancel with the decision that won elsewhere', async () => {
    const seen: { call: PendingApproval; outcome: DecisionOutcome }[] = [];
    const registry = new ApprovalRegistry({
      arbiter: (call, outcome) => {
        seen.push({ call, outcome });
        return Promise.resolve<DecisionOutcome>({ decision: 'allow', source: 'user' });
      },
    });
    const cancellation = new Cancellation();
    const ticket = registry.register(request());
    const waiting = ticket.wait(cancellation);
    cancellation.cancel();
    await expect(waiting).resolves.toStrictEqual({ decision: 'allow', source: 'user' });
    expect(seen.map(({ call, outcome }) => [call.approvalId, outcome.decision])).toStrictEqual([[ticket.approvalId, 'cancel']]);
  });

  it('keeps the outcome when the arbiter answers undefined, and settles only once', async () => {
    const { registry, asked } = withCountingArbiter();
    const ticket = registry.register(request());
    registry.resolve(ticket.approvalId, 'deny', { sessionId: 'sess', reason: 'no' });
    expect(registry.resolve(ticket.approvalId, 'allow', { sessionId: 'sess' })).toMatchObject({ resolved: false, status: 'already-decided' });
    await expect(ticket.wait()).resolves.toStrictEqual({ decision: 'deny', source: 'user', reason: 'no' });
    expect(asked()).toBe(1);
  });

  it('applies a decision recorded elsewhere as it was made, its grant kept, without asking the arbiter', async () => {
    const { registry, asked } = withCountingArbiter();
    const ticket = registry.register(request());
    expect(registry.applyRecorded(ticket.approvalId, 'other', { decision: 'allow', source: 'grant', grantId: 'grt_1' })).toBe(false);
    expect(registry.applyRecorded(ticket.approvalId, 'sess', { decision: 'allow', source: 'grant', grantId: 'grt_1' })).toBe(true);
    await expect(ticket.wait()).resolves.toStrictEqual({ decision: 'allow', source: 'grant', grantId: 'grt_1' });
    expect(registry.resolve(ticket.approvalId, 'deny', { sessionId: 'sess' })).toStrictEqual({ resolved: false, status: 'already-decided', decision: 'allow' });
    expect(asked()).toBe(0);
  });

  it('falls back to the outcome itself when the arbiter fails', async () => {
    const registry = new ApprovalRegistry({ arbiter: () => Promise.reject(new Error('store down')) });
    const cancellation = new Cancellation();
    const ticket = registry.register(request());
    cancellation.cancel();
    await expect(ticket.wait(cancellation)).resolves.toStrictEqual({ decision: 'cancel', source: 'user' });
  });
});

describe('ApprovalRegistry.restore and restoreGrant', () => {
  it('answers a restored call at once with the decision it was given while no process held it', async () => {
    const registry = new ApprovalRegistry();
    const ticket = registry.restore({ ...request(), approvalId: 'apv_kept', requestedAt: 1, expiresAt: null }, { decision: 'deny', source: 'user', reason: 'later' });
    await expect(ticket.wait()).resolves.toStrictEqual({ decision: 'deny', source: 'user', reason: 'later' });
    expect(registry.listPending('sess')).toStrictEqual([]);
  });

  it('releases the waiting calls a grant made elsewhere covers, and only those', async () => {
    const registry = new ApprovalRegistry();
    const covered = registry.register(request());
    const other = registry.register(request({ toolCallId: 'call-2', toolName: 'write_file' }));
    registry.restoreGrant({ grantId: 'grt_elsewhere', sessionId: 'sess', toolName: 'read_file', arguments: null, createdAt: 1, toolVersion: 'v1' });
    await expect(covered.wait()).resolves.toStrictEqual({ decision: 'allow', source: 'grant', grantId: 'grt_elsewhere' });
    expect(registry.listPending('sess').map((p) => p.approvalId)).toStrictEqual([other.approvalId]);
  });
});
