import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolAnnotations } from '../lib/api-types';
import { decidedBy, MAX_TAB_DECISIONS, TabDecisions, tabDecisions } from './tab-decisions';
import { ToolCallCard } from './tool-call-card';
import type { ToolCallState, ToolCallView } from './tool-call-state';
import { FakeStorage } from '../lib/fake-storage';

afterEach(() => {
  cleanup();
  tabDecisions.clear();
});

describe('TabDecisions', () => {
  it('reads a decision as yours after a reload, yours in another tab in a new tab of the browser, and another client’s in another browser', () => {
    const browser = new FakeStorage();
    const tab = new TabDecisions({ shared: browser, tabId: 'tab_1' });
    tab.record('apv_a', 'allow', 'sent');
    tab.record('apv_a', 'allow', 'accepted');
    tab.record('apv_b', 'deny', 'superseded');

    const reloaded = new TabDecisions({ shared: browser, tabId: 'tab_1' });
    const newTab = new TabDecisions({ shared: browser, tabId: 'tab_2' });
    const otherBrowser = new TabDecisions({ shared: new FakeStorage(), tabId: 'tab_1' });
    const who = (store: TabDecisions, approvalId: string) => decidedBy(store.forCall(approvalId), store.tabId);
    expect([who(reloaded, 'apv_a'), who(newTab, 'apv_a'), who(otherBrowser, 'apv_a')]).toStrictEqual(['you', 'another-tab', 'elsewhere']);
    expect([reloaded.get('apv_a'), newTab.get('apv_a')]).toStrictEqual([{ decision: 'allow', outcome: 'accepted' }, undefined]);
    // Tab 1's deny came second: whoever decided, it was not this browser.
    expect([who(reloaded, 'apv_b'), who(newTab, 'apv_b')]).toStrictEqual(['elsewhere', 'elsewhere']);
  });

  it('keeps each tab’s decision on a call: one tab superseded by another tab’s accepted one reads as decided in that tab', () => {
    const browser = new FakeStorage();
    const first = new TabDecisions({ shared: browser, tabId: 'tab_1' });
    const second = new TabDecisions({ shared: browser, tabId: 'tab_2' });
    second.record('apv_a', 'deny', 'sent');
    second.record('apv_a', 'deny', 'accepted');
    // Tab 1 had not heard of it yet (no storage event): its record reads the call again before writing.
    first.record('apv_a', 'allow', 'sent');
    first.record('apv_a', 'allow', 'superseded');
    second.storageChanged('airlock.decision.apv_a');
    expect([decidedBy(first.forCall('apv_a'), 'tab_1'), decidedBy(second.forCall('apv_a'), 'tab_2')]).toStrictEqual(['another-tab', 'you']);
    expect([first.get('apv_a')?.outcome, second.get('apv_a')?.outcome]).toStrictEqual(['superseded', 'accepted']);
  });

  it('tells a tab of another tab’s decision on the storage event, and ignores what it cannot read', () => {
    const browser = new FakeStorage();
    const first = new TabDecisions({ shared: browser, tabId: 'tab_1' });
    const second = new TabDecisions({ shared: browser, tabId: 'tab_2' });
    let told = 0;
    first.subscribe(() => told++);
    second.record('apv_a', 'allow', 'accepted');
    expect(first.forCall('apv_a')).toBeUndefined();
    first.storageChanged('airlock.decision.apv_a');
    expect([told, decidedBy(first.forCall('apv_a'), 'tab_1')]).toStrictEqual([1, 'another-tab']);
    first.storageChanged('airlock.draft.apv_a');
    expect(told).toBe(1);

    browser.setItem('airlock.decision.apv_b', '{not json');
    browser.setItem('airlock.decision.apv_c', JSON.stringify({ at: 1, tabs: [{ tab: 'tab_2', decision: 'run', outcome: 'accepted' }] }));
    const reloaded = new TabDecisions({ shared: browser, tabId: 'tab_1' });
    expect([reloaded.forCall('apv_b'), reloaded.forCall('apv_c')?.tabs]).toStrictEqual([undefined, []]);
  });

  it('keeps at most MAX_TAB_DECISIONS calls across the browser, the oldest going first from its storage too', () => {
    const browser = new FakeStorage();
    let now = 0;
    const tab = new TabDecisions({ shared: browser, tabId: 'tab_1', now: () => ++now });
    for (let index = 0; index <= MAX_TAB_DECISIONS; index++) tab.record(`apv_${index}`, 'allow', 'accepted');
    expect([tab.forCall('apv_0'), browser.getItem('airlock.decision.apv_0')]).toStrictEqual([undefined, null]);
    expect(browser.length).toBe(MAX_TAB_DECISIONS);
    expect(new TabDecisions({ shared: browser, tabId: 'tab_2' }).forCall(`apv_${MAX_TAB_DECISIONS}`)?.tabs).toStrictEqual([{ tab: 'tab_1', decision: 'allow', outcome: 'accepted' }]);
  });

  it('without storage shared by tabs, knows only this page’s decisions', () => {
    const page = new TabDecisions({ tabId: 'tab_1' });
    page.record('apv_a', 'allow', 'accepted');
    expect([page.seesOtherTabs, decidedBy(page.forCall('apv_a'), 'tab_1')]).toStrictEqual([false, 'you']);
  });
});

describe('a card of a call decided from this browser', () => {
  const terminal: ToolAnnotations = { readOnly: false, destructive: true, executesCode: true, exactGrants: true, idempotent: false, openWorld: false };
  const card = (state: ToolCallState, extra: Partial<ToolCallView> = {}) =>
    render(<ToolCallCard call={{ key: 'tool:run_1:c1', runId: 'run_1', toolCallId: 'c1', toolName: 'terminal', approvalId: 'apv_1', arguments: { command: 'ls' }, state, ...extra }} annotations={terminal} onDecide={() => undefined} />);
  /** Another tab of this browser records a decision, and this tab hears of it. */
  const fromAnotherTab = (decision: 'allow' | 'deny') => {
    new TabDecisions({ shared: window.localStorage, tabId: 'another-tab' }).record('apv_1', decision, 'accepted');
    tabDecisions.storageChanged('airlock.decision.apv_1');
  };

  it('says you decided in another tab, not another tab or client', () => {
    fromAnotherTab('allow');
    card({ status: 'allowed', approvedBy: 'you' });
    screen.getByText('You allowed it in another tab. It runs once the calls before it are done.');
    cleanup();
    card({ status: 'done', approvedBy: 'you', result: 'ok' }, { editedArguments: { command: 'ls -a' } });
    screen.getByText('You allowed it in another tab.');
    screen.getByText('Ran with · edited by you in another tab');
    cleanup();
    fromAnotherTab('deny');
    card({ status: 'denied', reason: 'not now', result: null });
    screen.getByText('Your reason, given in another tab: not now');
  });

  it('says a decision no tab of this browser sent was made in another browser or client', () => {
    card({ status: 'denied', reason: 'cli', result: null });
    screen.getByText('Reason given in another browser or client, or before the server restarted: cli');
  });
});
