import { textStep } from '@airlock/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatService } from './chat-service';
import { MemoryStore } from './memory-store';
import { DISK_FULL, echoCall, runEnded, startEchoChat } from './test-support';

const services: ChatService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.shutdown()));
});

describe('ChatService: a grant revoked when the store cannot take the revoke', () => {
  it('stays in force, listed, and the revoke given again once the store takes it holds after a restart', async () => {
    const store = new MemoryStore();
    const deleteGrant = store.deleteGrant.bind(store);
    let full = false;
    store.deleteGrant = (grantId) => (full ? Promise.reject(new Error(DISK_FULL)) : deleteGrant(grantId));
    const ran: string[] = [];
    const first = await startEchoChat(services, store, [echoCall('a'), textStep('done')], ran);
    await first.startRun({ sessionId: 's', runId: 'r1', message: 'go' });
    await vi.waitFor(() => expect(first.pending('s')).toHaveLength(1));
    await first.confirm({ sessionId: 's', approvalId: first.pending('s')[0]!.approvalId, decision: 'allow', always: true });
    await runEnded(first, 's');
    const [grant] = first.listGrants('s');

    full = true;
    await expect(first.revokeGrant('s', grant!.grantId)).rejects.toThrow(DISK_FULL);
    // Not revoked: still listed, so the person sees it is and can revoke it again.
    expect(first.listGrants('s').map((g) => g.grantId)).toStrictEqual([grant!.grantId]);
    full = false;
    expect(await first.revokeGrant('s', grant!.grantId)).toBe(true);
    expect(first.listGrants('s')).toStrictEqual([]);
    await first.shutdown();

    const second = await startEchoChat(services, store, [echoCall('b'), textStep('done')], ran);
    expect(second.listGrants('s')).toStrictEqual([]);
    await second.startRun({ sessionId: 's', runId: 'r2', message: 'again' });
    await vi.waitFor(() => expect(second.pending('s')).toHaveLength(1));
    expect(ran).toStrictEqual(['a']);
  });
});
