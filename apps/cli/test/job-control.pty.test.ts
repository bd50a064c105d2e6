import { recordingTool, startFakeOpenAIServer, startTestAirlock } from '@airlock/server/testing';
import xterm from '@xterm/headless';
import { spawn } from 'node-pty';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/airlock.mjs', import.meta.url));
const SCREEN_TIMEOUT = { timeout: 20_000, interval: 50 };
const PROMPT = '[a]llow / [A]lways / [d]eny (reason)';

/**
 * An interactive shell with job control in a real pseudo-terminal, its output rendered by a headless terminal
 * emulator: Ctrl-Z stops the client there, and `fg` brings it back, as at a person's terminal.
 */
function startShell(env: Record<string, string>, { rows = 40, columns = 110 } = {}) {
  const terminal = new xterm.Terminal({ cols: columns, rows, allowProposedApi: true });
  const pty = spawn('bash', ['--norc', '--noprofile', '-i'], {
    name: 'xterm-256color',
    cols: columns,
    rows,
    cwd: process.cwd(),
    env: { ...process.env, NO_COLOR: '', AIRLOCK_DECISION_GUARD_MS: '0', PS1: '$ ', HISTFILE: '/dev/null', ...env },
  });
  pty.onData((data) => terminal.write(data));
  const screen = async () => {
    await new Promise<void>((resolve) => terminal.write('', resolve));
    const buffer = terminal.buffer.active;
    const lines: string[] = [];
    for (let row = 0; row < buffer.length; row++) lines.push(buffer.getLine(row)?.translateToString(true) ?? '');
    return lines.join('\n').trimEnd();
  };
  return {
    screen,
    /** Waits until the screen shows `text` (count times). */
    async shows(text: string, count = 1) {
      await expect.poll(async () => (await screen()).split(text).length - 1, SCREEN_TIMEOUT).toBeGreaterThanOrEqual(count);
    },
    type: (text: string) => pty.write(text),
    /** Pastes as a terminal does: line ends as Enter's \r, marked as a paste while the terminal is asked to. */
    paste(text: string) {
      const keys = text.replace(/\r?\n/g, '\r');
      pty.write(terminal.modes.bracketedPasteMode ? `\x1b[200~${keys}\x1b[201~` : keys);
    },
    [Symbol.asyncDispose]: async () => {
      pty.kill('SIGKILL');
      terminal.dispose();
    },
  };
}

describe('airlock chat stopped with Ctrl-Z and brought back with fg', () => {
  it('reads keys again at once: Ctrl-C stops the run, and the question comes back with its card under what the shell wrote', async () => {
    await using fake = await startFakeOpenAIServer();
    const echo = recordingTool('echo');
    await using airlock = await startTestAirlock({ modelUrl: fake.url, tools: [echo.tool] });
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    fake.enqueue({ text: 'Checking first.', toolCalls: [{ name: 'echo', arguments: { text: 'DANGEROUS' } }], hold }, { toolCalls: [{ name: 'echo', arguments: { text: 'second' } }] }, { text: 'Left alone.' });
    await using shell = startShell({ AIRLOCK_TOKEN: airlock.server.token });
    shell.type(`${process.execPath} ${BIN} chat --url ${airlock.server.url}\r`);
    await shell.shows('you›');

    shell.type('go\r');
    await shell.shows('┃ Checking first.');
    shell.type('\x1a');
    await shell.shows('Stopped');
    shell.type('fg\r');
    await shell.shows('$ fg');
    // A run going, nothing asked: Ctrl-C stops it.
    shell.type('\x03');
    // Under the shell's lines, no prompt drawn again (an empty row at most): nothing is asked. A Ctrl-C typed before the
    // client has its keys back after fg is the terminal's: echoed as ^C, it reaches the client as SIGINT, with the same stop.
    await expect.poll(shell.screen, SCREEN_TIMEOUT).toMatch(/\$ fg\n[^\n]*chat --url[^\n]*\n(?:\^C\n)?(?: *\n)?Stopping… \(Ctrl-C again to exit\)/);
    release();
    await shell.shows('■ stopped');
    await shell.shows('you›', 2);
    expect(echo.calls).toStrictEqual([]);

    shell.type('again\r');
    await shell.shows(PROMPT);
    shell.type('\x1a');
    await shell.shows('Stopped', 2);
    shell.type('fg\r');
    await shell.shows('$ fg', 2);
    const card = '⏺ echo\n  text: second\n  A runs any echo call without asking, in this chat only';
    const untimed = async () => (await shell.screen()).replace(/; undecided, it is denied at [^\n]*/g, '');
    await expect.poll(untimed, SCREEN_TIMEOUT).toMatch(new RegExp(`\\$ fg\\n[^\\n]*chat --url[^\\n]*\\n${card.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n  echo \\[a\\]llow`));
    // The shell turned the terminal's paste marks off to run fg: a pasted answer is still told from a typed one.
    shell.paste('a\n');
    shell.type('\r');
    await shell.shows('Ignored a pasted answer');
    expect(echo.calls).toStrictEqual([]);
    shell.type('d not now\r');
    await shell.shows('┃ Left alone.');
    expect(await untimed()).toContain('  ✗ denied: not now\n  → not run: denied\n┃ Left alone.');
    expect(echo.calls).toStrictEqual([]);
  });
});
