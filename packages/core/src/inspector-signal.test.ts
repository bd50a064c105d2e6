import { afterEach, describe, expect, it, vi } from 'vitest';
import { refuseInspectorSignal } from './inspector-signal';

const before = process.listeners('SIGUSR1');
afterEach(() => {
  for (const listener of process.listeners('SIGUSR1')) if (!before.includes(listener)) process.off('SIGUSR1', listener);
  vi.restoreAllMocks();
});

const added = () => process.listeners('SIGUSR1').filter((listener) => !before.includes(listener));

describe('refuseInspectorSignal', () => {
  it('takes SIGUSR1 and says so once, so that Node does not open its inspector', () => {
    const told = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    expect(refuseInspectorSignal({ notice: 'ignored', nodeOptions: '--max-old-space-size=512', execArgv: ['--enable-source-maps'] })).toBe(true);
    const [listener] = added();
    expect(added()).toHaveLength(1);
    listener!('SIGUSR1');
    listener!('SIGUSR1');
    expect(told.mock.calls).toStrictEqual([['ignored']]);
  });

  it('leaves the signal to Node when an inspector port was asked for, in NODE_OPTIONS or on the command line', () => {
    const asked = [
      { nodeOptions: '--inspect-port=127.0.0.1:0' },
      { nodeOptions: '--max-old-space-size=512  --inspect-port 9229' },
      { nodeOptions: '--debug-port=9229' },
      { nodeOptions: '', execArgv: ['--inspect-port=0'] },
      { nodeOptions: '', execArgv: ['--debug-port', '9229'] },
    ];
    for (const options of asked) expect({ options, refused: refuseInspectorSignal({ notice: 'ignored', execArgv: [], ...options }) }).toStrictEqual({ options, refused: false });
    expect(added()).toStrictEqual([]);
    // An option whose name only begins the same asks for no port.
    expect(refuseInspectorSignal({ notice: 'ignored', nodeOptions: '--inspect-portal', execArgv: [] })).toBe(true);
  });
});
