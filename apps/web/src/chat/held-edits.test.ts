import { describe, expect, it } from 'vitest';
import { HeldEdits } from './held-edits';
import { FakeStorage } from '../lib/fake-storage';

describe('HeldEdits across the tabs of a browser', () => {
  it('tells another tab of an edit held here until it is dropped or the page goes away', () => {
    const shared = new FakeStorage();
    const editing = new HeldEdits({ shared, pageId: 'page_a' });
    const other = new HeldEdits({ shared, pageId: 'page_b' });

    const release = editing.hold('apv_1');
    expect(other.has('apv_1')).toBe(false);
    expect(other.heldInAnyTab('apv_1')).toBe(true);
    // An id that only begins like it is another call.
    expect(other.heldInAnyTab('apv_')).toBe(false);
    release();
    expect(other.heldInAnyTab('apv_1')).toBe(false);

    // Both tabs hold it: one letting go leaves the other's.
    const releaseHere = editing.hold('apv_2');
    other.hold('apv_2');
    releaseHere();
    expect(editing.heldInAnyTab('apv_2')).toBe(true);

    editing.hold('apv_3');
    editing.leave();
    expect(other.heldInAnyTab('apv_3')).toBe(false);
    editing.rejoin();
    expect(other.heldInAnyTab('apv_3')).toBe(true);
  });

  it('holds an edit kept as a draft as one held open, for another tab too, until both let go', () => {
    const shared = new FakeStorage();
    const editing = new HeldEdits({ shared, pageId: 'page_a' });
    const other = new HeldEdits({ shared, pageId: 'page_b' });

    const release = editing.hold('apv_1');
    editing.holdKept(new Set(['apv_1']));
    // The card goes (another chat opened): its editor lets go, the draft still holds it.
    release();
    expect(editing.getSnapshot()).toStrictEqual(new Set(['apv_1']));
    expect(other.heldInAnyTab('apv_1')).toBe(true);
    editing.holdKept(new Set());
    expect(editing.getSnapshot()).toStrictEqual(new Set());
    expect(other.heldInAnyTab('apv_1')).toBe(false);

    // Two holds of one call: letting go of one, twice, leaves the other.
    const first = editing.hold('apv_2');
    editing.hold('apv_2');
    first();
    first();
    expect(editing.has('apv_2')).toBe(true);
  });

  it('keeps to this tab when storage is absent or throws', () => {
    const blocked = new FakeStorage();
    blocked.setItem = () => {
      throw new Error('QuotaExceededError');
    };
    for (const held of [new HeldEdits(), new HeldEdits({ shared: blocked })]) {
      const release = held.hold('apv_1');
      expect(held.heldInAnyTab('apv_1')).toBe(true);
      release();
      expect(held.heldInAnyTab('apv_1')).toBe(false);
    }
  });
});
