import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ARMING_MS } from '../lib/steady-button';
import { PendingBar } from './pending-bar';
import type { ToolInfo } from '../lib/api-types';
import type { ToolCallView } from './tool-call-state';

const waitingCall = (id: string): ToolCallView => ({
  key: id,
  runId: 'r',
  toolCallId: id,
  toolName: 'terminal',
  arguments: { command: `echo ${id}` },
  state: { status: 'awaiting-decision', approvalId: id, expiresAt: null, problem: null },
});

const NO_TOOLS: ReadonlyMap<string, ToolInfo> = new Map();

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'requestAnimationFrame', 'cancelAnimationFrame', 'performance', 'Date'] });
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

const wait = (ms: number) =>
  act(() => {
    vi.advanceTimersByTime(ms);
  });
const aimAndClick = (button: HTMLElement) => {
  fireEvent.pointerMove(button, { pointerType: 'mouse' });
  fireEvent.click(button, { detail: 1 });
};

describe('PendingBar when the waiting calls change under it', () => {
  it('decides nothing on a click right after one waiting call went and another came, says why, then decides only the calls shown', () => {
    const decideAll = vi.fn();
    const [x, y, z, repeat] = ['x', 'y', 'z', 'x-again'].map(waitingCall) as [ToolCallView, ToolCallView, ToolCallView, ToolCallView];
    const { rerender } = render(<PendingBar tools={NO_TOOLS} calls={[x, y, z]} onDecideAll={decideAll} />);
    wait(ARMING_MS);
    const allowAll = screen.getByRole('button', { name: 'Allow all' });
    expect(allowAll.hasAttribute('aria-disabled')).toBe(false);

    // Another tab denied x; the model's repeat of it is put up: three calls wait, as before, in the same place.
    rerender(<PendingBar tools={NO_TOOLS} calls={[y, z, repeat]} onDecideAll={decideAll} />);
    expect(screen.getByText('3 tool calls are waiting for your decision.')).toBeTruthy();
    expect(allowAll.getAttribute('aria-disabled')).toBe('true');
    aimAndClick(allowAll);
    // A key meant for the calls seen before decides nothing either.
    fireEvent.click(screen.getByRole('button', { name: 'Deny all' }), { detail: 0 });
    expect(decideAll).not.toHaveBeenCalled();
    screen.getByText('Nothing was decided: the waiting calls changed as you clicked.', { exact: false });

    wait(ARMING_MS);
    expect(allowAll.hasAttribute('aria-disabled')).toBe(false);
    aimAndClick(allowAll);
    expect(decideAll.mock.calls).toStrictEqual([['allow', [y, z, repeat]]]);
  });

  it('stays armed while the same calls wait, whatever else changes on them', () => {
    const decideAll = vi.fn();
    const [a, b] = ['a', 'b'].map(waitingCall) as [ToolCallView, ToolCallView];
    const { rerender } = render(<PendingBar tools={NO_TOOLS} calls={[a, b]} onDecideAll={decideAll} />);
    wait(ARMING_MS);
    rerender(<PendingBar tools={NO_TOOLS} calls={[{ ...a }, { ...b }]} onDecideAll={decideAll} />);
    const allowAll = screen.getByRole('button', { name: 'Allow all' });
    expect(allowAll.hasAttribute('aria-disabled')).toBe(false);
    aimAndClick(allowAll);
    expect(decideAll.mock.calls).toStrictEqual([['allow', [a, b]]]);
  });
});

describe('PendingBar with a call a deny rule asked about', () => {
  it('allows the others with Allow all, leaves that one for its card and says so, and still denies them all', () => {
    const decideAll = vi.fn();
    const asked: ToolCallView = { ...waitingCall('x'), exactGrantsOnly: true };
    const [y, z] = [waitingCall('y'), waitingCall('z')];
    const { rerender } = render(<PendingBar tools={NO_TOOLS} calls={[asked, y, z]} onDecideAll={decideAll} />);
    wait(ARMING_MS);
    screen.getByText('Allow all leaves out the one a deny rule asked about (its card says why): read its card and decide it there.');
    aimAndClick(screen.getByRole('button', { name: 'Deny all' }));
    expect(decideAll.mock.calls).toStrictEqual([['deny', [asked, y, z]]]);
    aimAndClick(screen.getByRole('button', { name: 'Allow all' }));
    expect(decideAll.mock.calls[1]).toStrictEqual(['allow', [y, z]]);
    // The others decided, the one left still waits: the bar is gone, and says what Allow all left.
    rerender(<PendingBar tools={NO_TOOLS} calls={[asked]} onDecideAll={decideAll} />);
    expect(screen.getByRole('status', { name: 'Left by Allow all' }).textContent).toBe('Allow all left one call waiting: a deny rule asked about it. Read its card and decide it there.');
    expect(screen.queryByRole('button', { name: 'Allow all' })).toBe(null);
    rerender(<PendingBar tools={NO_TOOLS} calls={[]} onDecideAll={decideAll} />);
    expect(screen.queryByRole('status', { name: 'Left by Allow all' })).toBe(null);
  });

  it('offers no Allow all when every waiting call is one a deny rule asked about, and says why', () => {
    const decideAll = vi.fn();
    const calls = [{ ...waitingCall('x'), exactGrantsOnly: true as const }, { ...waitingCall('y'), exactGrantsOnly: true as const }];
    render(<PendingBar tools={NO_TOOLS} calls={calls} onDecideAll={decideAll} />);
    wait(ARMING_MS);
    const allowAll = screen.getByRole('button', { name: 'Allow all' });
    expect(allowAll.hasAttribute('disabled') || allowAll.getAttribute('aria-disabled') === 'true').toBe(true);
    aimAndClick(allowAll);
    expect(decideAll).not.toHaveBeenCalled();
    screen.getByText('Allow all is off: a deny rule asked about all 2 of them (their cards say why). Read their cards and decide them there.');
  });
});

describe('PendingBar notes', () => {
  it('says that a waiting call has an argument its tool, as listed, does not declare, as its card marks it', () => {
    const deploy: ToolInfo = {
      name: 'deploy__deploy',
      description: 'Deploys.',
      inputSchema: { type: 'object', properties: { target: { type: 'string' } } },
      annotations: { readOnly: false, destructive: true, executesCode: false, exactGrants: false, idempotent: false, openWorld: true },
      source: 'mcp:deploy',
    };
    const call = (id: string, args: Record<string, unknown>): ToolCallView => ({ ...waitingCall(id), toolName: 'deploy__deploy', arguments: args });
    const tools = new Map([[deploy.name, deploy]]);
    const { rerender } = render(<PendingBar tools={tools} calls={[call('a', { target: 'production' }), call('b', { target: 'staging' })]} onDecideAll={vi.fn()} />);
    expect(screen.queryByRole('note')).toBeNull();
    rerender(<PendingBar tools={tools} calls={[call('a', { target: 'production', dry_run: true }), call('b', { target: 'staging' })]} onDecideAll={vi.fn()} />);
    expect(screen.getByRole('note').textContent).toBe(
      'One of them has an argument that is not a parameter of its tool (marked on its card): the tool may ignore it and run with its own default instead. Read its card before you allow all.',
    );
  });
});
