import { describe, expect, it } from 'vitest';
import { ChatRuns } from './chat-runs';

const STOPPED = 'The server stopped sending this run’s events.';

function session(activeRunId: string | null, lastRunId: string | null = activeRunId) {
  return { activeRunId, lastRunId };
}

describe('ChatRuns', () => {
  it('follows a run again after a restart when the read made during the shutdown said no run was going', () => {
    const runs = new ChatRuns(true);
    runs.started('run_1');
    expect(runs.read(session('run_1'), 'run_1')).toBeNull();

    // The server goes down: the stream ends before its run-end, and the going-down server still answers the
    // re-read with the run it has just suspended no longer active.
    runs.streamFailed('run_1', STOPPED, 'stopped');
    expect(runs.read(session(null, 'run_1'), null)).toStrictEqual({ follow: null, streamError: STOPPED });

    // The next server resumed the run: the view follows it again.
    expect(runs.read(session('run_1'), null)).toStrictEqual({ follow: 'run_1', streamError: null });
    expect(runs.read(session('run_1'), 'run_1')).toBeNull();
  });

  it('leaves the chat as shown while it follows the run going', () => {
    const runs = new ChatRuns(false);
    expect(runs.read(session('run_1'), null)).toStrictEqual({ follow: 'run_1', streamError: null });
    expect(runs.read(session('run_1'), 'run_1')).toBeNull();
  });

  it('does not follow again a run whose run-end it saw, when a read still says it is going', () => {
    const runs = new ChatRuns(true);
    runs.started('run_1');
    runs.runEnded('run_1');
    expect(runs.read(session('run_1'), null)).toBeNull();
    expect(runs.read(session(null, 'run_1'), null)).toBeNull();
  });

  it('follows a run started in another tab, and rebuilds the chat for one it missed', () => {
    const runs = new ChatRuns(false);
    expect(runs.read(session(null, null), null)).toStrictEqual({ follow: null, streamError: null });
    expect(runs.read(session('run_2'), null)).toStrictEqual({ follow: 'run_2', streamError: null });
    runs.runEnded('run_2');
    expect(runs.read(session(null, 'run_3'), null)).toStrictEqual({ follow: null, streamError: null });
    expect(runs.read(session(null, 'run_3'), null)).toBeNull();
  });

  it('never follows a run whose stream failed, and rebuilds the chat at each read while it goes', () => {
    const runs = new ChatRuns(true);
    runs.started('run_1');
    runs.streamFailed('run_1', 'test breaks the stream', 'error');
    expect(runs.read(session('run_1'), null)).toStrictEqual({ follow: null, streamError: 'test breaks the stream' });
    expect(runs.read(session('run_1'), null)).toStrictEqual({ follow: null, streamError: null });
    expect(runs.read(session(null, 'run_1'), null)).toStrictEqual({ follow: null, streamError: null });
    expect(runs.read(session(null, 'run_1'), null)).toBeNull();
  });

  it('follows a run whose stream keeps stopping three times more, then shows it as the server has it', () => {
    const runs = new ChatRuns(true);
    runs.started('run_1');
    for (let i = 0; i < 3; i++) {
      runs.streamFailed('run_1', STOPPED, 'stopped');
      expect(runs.read(session('run_1'), null)).toStrictEqual({ follow: 'run_1', streamError: null });
    }
    runs.streamFailed('run_1', STOPPED, 'stopped');
    expect(runs.read(session('run_1'), null)).toStrictEqual({ follow: null, streamError: STOPPED });
  });
});
