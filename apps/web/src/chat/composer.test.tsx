import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Composer } from './composer';
import { PendingBar } from './pending-bar';
import type { ToolCallView } from './tool-call-state';

afterEach(cleanup);

describe('Composer', () => {
  it('sends on Enter and adds a line on Shift+Enter', () => {
    const onSend = vi.fn();
    render(<Composer running={false} disabled={false} onSend={onSend} onStop={() => undefined} />);
    const box = screen.getByRole('textbox', { name: 'Message' });
    fireEvent.change(box, { target: { value: 'hello' } });
    fireEvent.keyDown(box, { key: 'Enter', shiftKey: true });
    expect(onSend).not.toHaveBeenCalled();
    fireEvent.keyDown(box, { key: 'Enter' });
    expect(onSend).toHaveBeenCalledWith('hello');
    expect((box as HTMLTextAreaElement).value).toBe('');
  });

  it('offers Stop instead of Send while a run is going', () => {
    const onStop = vi.fn();
    const onSend = vi.fn();
    render(<Composer running disabled={false} onSend={onSend} onStop={onStop} />);
    fireEvent.change(screen.getByRole('textbox', { name: 'Message' }), { target: { value: 'next' } });
    fireEvent.keyDown(screen.getByRole('textbox', { name: 'Message' }), { key: 'Enter' });
    expect(onSend).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('button', { name: 'Stop' }));
    expect(onStop).toHaveBeenCalledTimes(1);
  });
});

describe('PendingBar', () => {
  const call = (id: string, status: 'awaiting-decision' | 'deciding'): ToolCallView => ({
    key: id,
    runId: 'r',
    toolCallId: id,
    toolName: 'terminal',
    arguments: {},
    state: status === 'deciding' ? { status, approvalId: id, expiresAt: null, decision: 'allow' } : { status, approvalId: id, expiresAt: null, problem: null },
  });

  it('offers Allow all and Deny all when several calls wait', () => {
    const onDecideAll = vi.fn();
    const calls = [call('a', 'awaiting-decision'), call('b', 'awaiting-decision')];
    render(<PendingBar tools={new Map()} calls={calls} onDecideAll={onDecideAll} />);
    fireEvent.click(screen.getByRole('button', { name: 'Deny all' }));
    fireEvent.click(screen.getByRole('button', { name: 'Allow all' }));
    expect(onDecideAll.mock.calls).toStrictEqual([
      ['deny', calls],
      ['allow', calls],
    ]);
  });

  it('is absent for a single call and disabled while every decision is in flight', () => {
    render(<PendingBar tools={new Map()} calls={[call('a', 'awaiting-decision')]} onDecideAll={() => undefined} />);
    expect(screen.queryByRole('button', { name: 'Allow all' })).toBeNull();
    cleanup();
    render(<PendingBar tools={new Map()} calls={[call('a', 'deciding'), call('b', 'deciding')]} onDecideAll={() => undefined} />);
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Allow all' }).disabled).toBe(true);
  });
});
