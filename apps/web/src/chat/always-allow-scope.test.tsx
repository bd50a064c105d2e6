import type { AppRouter } from '@airlock/client';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import type { TRPCLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ARMING_MS } from '../lib/steady-button';
import { testTrpc } from '../lib/test-trpc';
import { CurrentSessionContext } from './current-session';
import { DecisionControls } from './decision-controls';
import type { DecisionProblem } from './tool-call-state';

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

/** Answers `rules.propose` with a rule naming the scope asked for. */
const proposing: TRPCLink<AppRouter> = () => ({ op }) =>
  observable((observer) => {
    if (op.path === 'rules.propose') {
      const { scope } = op.input as { scope: string };
      observer.next({ result: { type: 'data', data: { description: [{ text: `Allow any terminal call ${scope === 'global' ? 'everywhere' : 'in this workspace'}` }] } } });
      observer.complete();
    }
    return () => undefined;
  });

describe('the scope of Always allow', () => {
  // Found in review: a rule read before for a scope came from the cache at once, its readiness unchanged since the
  // scope before, so the button stayed off beside the rule it would save (this workspace, then everywhere, then
  // this workspace again).
  it('offers Always allow beside each rule it shows, a scope picked again too', async () => {
    const { provide } = testTrpc(proposing);
    const onDecide = vi.fn();
    render(
      provide(
        <CurrentSessionContext value="s_1">
          <DecisionControls toolName="terminal" state={{ status: 'awaiting-decision', approvalId: 'apv_1', expiresAt: null, problem: null }} annotations={undefined} onDecide={onDecide} />
        </CurrentSessionContext>,
      ),
    );
    const always = () => screen.getByRole('button', { name: 'Always allow terminal' });
    const offered: [string, boolean][] = [];
    for (const [scope, words] of [
      ['this workspace', 'in this workspace'],
      ['everywhere', 'everywhere'],
      ['this workspace', 'in this workspace'],
    ] as const) {
      fireEvent.click(screen.getByRole('radio', { name: scope }));
      await screen.findByText(new RegExp(`Allow any terminal call ${words}`));
      offered.push([scope, !always().hasAttribute('disabled')]);
    }
    expect(offered).toStrictEqual([
      ['this workspace', true],
      ['everywhere', true],
      ['this workspace', true],
    ]);
  });
});

describe('the rule Always allow saves', () => {
  /** Answers `rules.propose` with the rule `drafts` holds first, then the next at each read; counts the reads. */
  function drafting(drafts: string[]) {
    const reads = { count: 0 };
    const link: TRPCLink<AppRouter> = () => ({ op }) =>
      observable((observer) => {
        if (op.path === 'rules.propose') {
          const command = drafts[Math.min(reads.count, drafts.length - 1)]!;
          reads.count += 1;
          const draft = { effect: 'allow', tool: 'terminal', match: { kind: 'command-prefix', tokens: command.split(' '), exact: false }, scope: { kind: 'global' }, source: 'user' };
          observer.next({ result: { type: 'data', data: { draft, description: [{ text: `Allow commands starting with ${command}` }] } } });
          observer.complete();
        }
        return () => undefined;
      });
    return { link, reads };
  }

  type SentDecision = { scope?: string; rule?: { match: { tokens: string[] } } };
  const tokensSent = (onDecide: ReturnType<typeof vi.fn>) =>
    onDecide.mock.calls.map((call) => {
      const request = call[0] as SentDecision;
      return [request.scope, request.rule?.match.tokens];
    });

  it('is sent with the decision as the card shows it, and read again after the server refused it as changed', async () => {
    // Only the page's clock (performance.now, read by the button) is the test's; the reads' own timers run.
    vi.useFakeTimers({ toFake: ['performance'] });
    const { link, reads } = drafting(['yarn why lodash', 'yarn why']);
    const { provide } = testTrpc(link);
    const onDecide = vi.fn();
    const controls = (problem: DecisionProblem | null) =>
      provide(
        <CurrentSessionContext value="s_1">
          <DecisionControls toolName="terminal" state={{ status: 'awaiting-decision', approvalId: 'apv_1', expiresAt: null, problem }} annotations={undefined} onDecide={onDecide} />
        </CurrentSessionContext>,
      );
    const { rerender } = render(controls(null));
    fireEvent.click(screen.getByRole('radio', { name: 'everywhere' }));
    await screen.findByText('Allow commands starting with yarn why lodash');
    // The button re-arms beside the rule shown: the click comes once it has stood there for a moment.
    act(() => {
      vi.advanceTimersByTime(ARMING_MS);
    });
    fireEvent.click(screen.getByRole('button', { name: 'Always allow terminal' }));
    expect(tokensSent(onDecide)).toStrictEqual([['global', ['yarn', 'why', 'lodash']]]);

    rerender(controls({ kind: 'refused', why: 'conflict', message: 'the rule "Always allow" would save for this call is no longer the one shown' }));
    await screen.findByText('Allow commands starting with yarn why');
    expect(reads.count).toBe(2);
    // Found in review: the button stayed armed beside the rule read again, and the second click of a double-click
    // saved it unseen. A click (here a key's) at once decides nothing, and says why.
    fireEvent.click(screen.getByRole('button', { name: 'Always allow terminal' }));
    expect(tokensSent(onDecide)).toStrictEqual([['global', ['yarn', 'why', 'lodash']]]);
    screen.getByText('Nothing was decided: what the button decides had just changed as you clicked.', { exact: false });

    act(() => {
      vi.advanceTimersByTime(ARMING_MS);
    });
    fireEvent.click(screen.getByRole('button', { name: 'Always allow terminal' }));
    expect(tokensSent(onDecide)).toStrictEqual([
      ['global', ['yarn', 'why', 'lodash']],
      ['global', ['yarn', 'why']],
    ]);
  });
});
