import { afterEach, describe, expect, it, vi } from 'vitest';
import { focusApprovalCard } from './focus-approval';

afterEach(() => {
  document.body.innerHTML = '';
});

function card(approvalId: string): HTMLElement {
  const article = document.createElement('article');
  article.dataset.approvalId = approvalId;
  article.tabIndex = -1;
  return article;
}

describe('focusApprovalCard', () => {
  it('focuses the card once it shows up, when the person has not put focus elsewhere', async () => {
    focusApprovalCard('apv_1');
    const shown = card('apv_1');
    document.body.append(shown);
    await vi.waitFor(() => expect(document.activeElement).toBe(shown));
  });

  it('never takes focus from the message box the person typed into meanwhile: a typed letter would decide the call', async () => {
    const box = document.createElement('textarea');
    document.body.append(box);
    focusApprovalCard('apv_1');
    box.focus();
    const shown = card('apv_1');
    const marker = document.createElement('div');
    document.body.append(shown, marker);
    // A later mutation proves the observer has seen the card.
    await vi.waitFor(() => expect(document.querySelector('[data-approval-id="apv_1"]')).not.toBeNull());
    marker.remove();
    await Promise.resolve();
    expect(document.activeElement).toBe(box);
  });

  it('does not take focus from a text field even when the card is already there', () => {
    const box = document.createElement('input');
    const shown = card('apv_1');
    document.body.append(box, shown);
    box.focus();
    focusApprovalCard('apv_1');
    expect(document.activeElement).toBe(box);
  });
});
