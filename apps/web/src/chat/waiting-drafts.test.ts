import { describe, expect, it } from 'vitest';
import { FakeStorage } from '../lib/fake-storage';
import { MAX_DRAFT_CHARS, MAX_DRAFTS, WaitingDrafts, type WaitingDraft } from './waiting-drafts';

const edit: WaitingDraft = { edit: { mode: 'form', fieldsFrom: { command: 'ls' }, values: [['command', 'ls -la']] } };

function clock(start: number) {
  const time = { now: start };
  return { time, now: () => time.now };
}

describe('WaitingDrafts', () => {
  it('gives back a call its own draft, and no other call', () => {
    const drafts = new WaitingDrafts(new FakeStorage());
    expect(drafts.save('apv_1', { ...edit, reason: 'too broad' }, null)).toBe(true);
    expect(drafts.save('apv_2', { edit: { mode: 'raw', text: '{"command": "pwd"' } }, null)).toBe(true);
    expect(drafts.read('apv_1')).toStrictEqual({ ...edit, reason: 'too broad' });
    expect(drafts.read('apv_2')).toStrictEqual({ edit: { mode: 'raw', text: '{"command": "pwd"' } });
    expect(drafts.read('apv_3')).toBeUndefined();
    expect(drafts.read('__proto__')).toBeUndefined();
  });

  it('survives the page: a new instance on the same storage reads what the last one kept', () => {
    const storage = new FakeStorage();
    new WaitingDrafts(storage).save('apv_1', { reason: 'not now' }, null);
    expect(new WaitingDrafts(storage).read('apv_1')).toStrictEqual({ reason: 'not now' });
  });

  it('drops a draft saved empty, and one dropped', () => {
    const storage = new FakeStorage();
    const drafts = new WaitingDrafts(storage);
    drafts.save('apv_1', { reason: 'x' }, null);
    drafts.save('apv_1', { reason: '' }, null);
    expect(drafts.read('apv_1')).toBeUndefined();
    drafts.save('apv_2', edit, null);
    drafts.drop('apv_2');
    expect(storage.items.size).toBe(0);
  });

  it('keeps nothing too large, and drops the older version so it never comes back', () => {
    const storage = new FakeStorage();
    const drafts = new WaitingDrafts(storage);
    drafts.save('apv_1', { edit: { mode: 'raw', text: '{}' } }, null);
    expect(drafts.save('apv_1', { edit: { mode: 'raw', text: 'x'.repeat(MAX_DRAFT_CHARS) } }, null)).toBe(false);
    expect(drafts.read('apv_1')).toBeUndefined();
    expect(storage.items.size).toBe(0);
  });

  it('throws nothing on full storage, blocked storage or none', () => {
    const storage = new FakeStorage();
    const drafts = new WaitingDrafts(storage);
    drafts.save('apv_1', { reason: 'first' }, null);
    storage.full = true;
    expect(drafts.save('apv_1', { reason: 'second' }, null)).toBe(false);
    expect(drafts.read('apv_1')).toBeUndefined();

    const blocked = {
      get length(): number {
        throw new DOMException('Access denied', 'SecurityError');
      },
      key: () => {
        throw new DOMException('Access denied', 'SecurityError');
      },
      getItem: () => {
        throw new DOMException('Access denied', 'SecurityError');
      },
      setItem: () => {
        throw new DOMException('Access denied', 'SecurityError');
      },
      removeItem: () => {
        throw new DOMException('Access denied', 'SecurityError');
      },
    };
    for (const kept of [new WaitingDrafts(blocked), new WaitingDrafts(undefined)]) {
      expect(kept.save('apv_1', { reason: 'x' }, null)).toBe(false);
      expect(kept.read('apv_1')).toBeUndefined();
      kept.drop('apv_1');
      kept.dropExpired();
      kept.keepOnly(new Set());
    }
  });

  it('reads nothing from an entry that is not a draft, and drops it at start', () => {
    const storage = new FakeStorage();
    storage.setItem('airlock.draft.apv_1', 'not json');
    storage.setItem('airlock.draft.apv_2', JSON.stringify({ edit: { mode: 'form', fieldsFrom: {}, values: [['command', 5]] }, expiresAt: null, savedAt: 1 }));
    storage.setItem('airlock.draft.apv_3', JSON.stringify({ reason: 7, expiresAt: null, savedAt: 1 }));
    storage.setItem('airlock.token', 'secret');
    const drafts = new WaitingDrafts(storage);
    for (const approvalId of ['apv_1', 'apv_2', 'apv_3']) expect(drafts.read(approvalId)).toBeUndefined();
    drafts.dropExpired();
    expect([...storage.items.keys()]).toStrictEqual(['airlock.token']);
  });

  it('drops at start the drafts of calls whose time ran out, and those of calls no longer waiting', () => {
    const storage = new FakeStorage();
    const { time, now } = clock(1_000);
    const drafts = new WaitingDrafts(storage, now);
    drafts.save('apv_expired', { reason: 'a' }, 2_000);
    drafts.save('apv_later', { reason: 'b' }, 9_000);
    drafts.save('apv_no_timeout', { reason: 'c' }, null);
    drafts.save('apv_gone', { reason: 'd' }, null);
    time.now = 5_000;
    drafts.dropExpired();
    expect(drafts.read('apv_expired')).toBeUndefined();
    drafts.keepOnly(new Set(['apv_later', 'apv_no_timeout']));
    expect(drafts.read('apv_gone')).toBeUndefined();
    expect(drafts.read('apv_later')).toStrictEqual({ reason: 'b' });
    expect(drafts.read('apv_no_timeout')).toStrictEqual({ reason: 'c' });
    storage.setItem('airlock.token', 'kept');
    drafts.keepOnly(new Set());
    expect([...storage.items.keys()]).toStrictEqual(['airlock.token']);
  });

  it(`keeps at most ${MAX_DRAFTS} drafts, the oldest saved going first`, () => {
    const { time, now } = clock(0);
    const drafts = new WaitingDrafts(new FakeStorage(), now);
    for (let index = 0; index <= MAX_DRAFTS; index++) {
      time.now = index;
      drafts.save(`apv_${index}`, { reason: String(index) }, null);
    }
    expect(drafts.read('apv_0')).toBeUndefined();
    expect(drafts.read('apv_1')).toStrictEqual({ reason: '1' });
    expect(drafts.read(`apv_${MAX_DRAFTS}`)).toStrictEqual({ reason: String(MAX_DRAFTS) });
  });
});
