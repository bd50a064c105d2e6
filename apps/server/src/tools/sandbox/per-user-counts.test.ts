import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { createBuiltinTools } from '../index';
import { callContext, runTool, tempFolder, toolNamed } from '../test-support';
import { callShare, hostCounts, limitedNamespaceCommand } from './namespace-limits';
import { probeBubblewrap } from './probe-bubblewrap';
import { bubblewrapArgs } from './sandbox-policy';

const probe = await probeBubblewrap(true);
/** Whether bubblewrap starts in a namespace of the call's own here, which bounds these counts (see limitedNamespaceCommand). */
const namespaced = probe.available && 'unshare' in probe;
const all = hostCounts();
/** What a call alone may hold of each (the first a test file's process runs). */
const share = all === undefined ? undefined : callShare(all);

/** A class of C structures python's ctypes makes: mq_attr, its flags, most messages and bytes a message. */
const MQ_PRELUDE = [
  'import ctypes, os, time',
  'rt = ctypes.CDLL("librt.so.1", use_errno=True)',
  'class attr(ctypes.Structure):',
  '    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long), ("msgsize", ctypes.c_long), ("cur", ctypes.c_long), ("pad", ctypes.c_long * 4)]',
].join('\n');

/** Opens a queue of 10 messages of 8 KiB (glibc's default, about 80 KiB), says whether it could, and removes it. */
const MQ_PROBE = `${MQ_PRELUDE}
a = attr(0, 10, 8192, 0)
name = f"/probe{os.getpid()}".encode()
fd = rt.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(a))
print("mq_open:", "ok" if fd >= 0 else os.strerror(ctypes.get_errno()))
if fd >= 0: rt.mq_unlink(name)
`;

/**
 * Four processes, one of them in a user namespace of its own, each opening queues of one message of 1 KiB until
 * refused; writes how many they opened in all to `holding`, then holds them.
 */
const MQ_HOLD = `${MQ_PRELUDE}
def grab(tag):
    n = 0
    while True:
        a = attr(0, 1, 1024, 0)
        if rt.mq_open(f"/{tag}{n}".encode(), os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(a)) < 0: return n
        n += 1
total = 0
for i in range(4):
    r, w = os.pipe()
    if os.fork() == 0:
        if i == 3 and ctypes.CDLL(None, use_errno=True).unshare(0x10000000) != 0: os._exit(1)
        os.write(w, f"{grab(f'p{i}-')}\\n".encode())
        while True: time.sleep(1000)
    total += int(os.read(r, 100).decode())
open("holding", "w").write(str(total))
while True: time.sleep(1000)
`;

const FANOTIFY_INIT = [
  'import ctypes, os, time',
  'libc = ctypes.CDLL(None, use_errno=True)',
  // FAN_CLASS_NOTIF | FAN_REPORT_FID: what a process without capabilities may make.
  'init = lambda: libc.fanotify_init(0x200, os.O_RDONLY)',
].join('\n');
const FANOTIFY_PROBE = `${FANOTIFY_INIT}\nprint("fanotify_init:", "ok" if init() >= 0 else os.strerror(ctypes.get_errno()))\n`;
const FANOTIFY_HOLD = `${FANOTIFY_INIT}
n = 0
while init() >= 0: n += 1
open("holding", "w").write(str(n))
while True: time.sleep(1000)
`;

const PTY_PROBE = 'import os\ntry:\n    os.openpty(); print("openpty: ok")\nexcept OSError as e:\n    print("openpty:", e.strerror)\n';
/** Eight processes, each opening pseudo-terminals until refused. */
const PTY_HOLD = `import os, time
held = []
def grab():
    n = 0
    try:
        while True: held.append(os.openpty()); n += 1
    except OSError: return n
total = 0
for i in range(8):
    r, w = os.pipe()
    if os.fork() == 0:
        os.write(w, f"{grab()}\\n".encode())
        while True: time.sleep(1000)
    total += int(os.read(r, 100).decode())
open("holding", "w").write(str(total))
while True: time.sleep(1000)
`;

interface Held {
  /** What the holding call held, as it wrote it. */
  held: number;
  /** What a second call, the host (this test's process) and a call after the first ended printed. */
  second: string;
  host: string;
  after: string;
}

/** Runs `hold` in one python call until it wrote `holding`, runs `check` in a second call and on the host meanwhile, and once more after. */
async function holdThenCheck(hold: string, check: string): Promise<Held> {
  await using workspace = await tempFolder();
  const python = toolNamed(createBuiltinTools({ workspace: workspace.path, killGraceMs: 500, sandbox: 'bubblewrap' }), 'python');
  const controller = new AbortController();
  const holder = runTool(python, { code: hold }, callContext({ signal: controller.signal, timeoutMs: 120_000 }));
  try {
    const held = await vi.waitFor(() => readFile(path.join(workspace.path, 'holding'), 'utf8'), { timeout: 60_000 });
    const second = (await runTool(python, { code: check })).content;
    const host = spawnSync('python3', ['-c', check], { encoding: 'utf8' }).stdout;
    controller.abort(new Error('done'));
    await holder;
    return { held: Number(held), second, host, after: (await runTool(python, { code: check })).content };
  } finally {
    controller.abort(new Error('done'));
    await holder;
  }
}

describe.skipIf(!namespaced || share === undefined)('a call holds its share of what the kernel counts per user or per machine, not all of it', () => {
  test('POSIX message queues: all its processes, one in a user namespace of its own, hold at most its share of bytes between them', async () => {
    const { held, second, host, after } = await holdThenCheck(MQ_HOLD, MQ_PROBE);
    // Each queue is charged its kilobyte and the kernel's own bookkeeping for it.
    expect(held).toBeGreaterThan(0);
    expect(held * 1024).toBeLessThanOrEqual(share!.messageQueueBytes);
    expect([second, host, after]).toStrictEqual(['mq_open: ok\nexit code: 0', 'mq_open: ok\n', 'mq_open: ok\nexit code: 0']);
  }, 120_000);

  test.skipIf(share?.fanotifyGroups === undefined)('fanotify groups: its share, and a second call and the host still make one', async () => {
    const { held, second, host, after } = await holdThenCheck(FANOTIFY_HOLD, FANOTIFY_PROBE);
    expect(held).toBe(share!.fanotifyGroups);
    expect([second, host, after]).toStrictEqual(['fanotify_init: ok\nexit code: 0', 'fanotify_init: ok\n', 'fanotify_init: ok\nexit code: 0']);
  }, 120_000);

  test('pseudo-terminals: at most its share between its processes, of a devpts of its own, and a second call still opens one', async () => {
    const { held, second, host, after } = await holdThenCheck(PTY_HOLD, PTY_PROBE);
    expect(held).toBe(share!.ptys);
    expect([second, host, after]).toStrictEqual(['openpty: ok\nexit code: 0', 'openpty: ok\n', 'openpty: ok\nexit code: 0']);
  }, 120_000);

  test.skipIf(!existsSync('/usr/bin/script'))('a terminal in the call still works: python’s pty, script, /dev/ptmx leading to the call’s own', async () => {
    await using workspace = await tempFolder();
    const terminal = toolNamed(createBuiltinTools({ workspace: workspace.path, sandbox: 'bubblewrap' }), 'terminal');
    const fork = 'import os, pty\npid, fd = pty.fork()\nif pid == 0: os.execvp("tty", ["tty"])\nprint(os.read(fd, 100).decode().strip())';
    const command = `python3 -c '${fork}' && script -qc 'tty; echo typed' /dev/null | tr -d '\\r' && readlink /dev/ptmx && grep ' /dev/pts ' /proc/self/mountinfo | tail -1 | grep -o 'devpts airlock-pts .*'`;
    const result = await runTool(terminal, { command });
    expect(result).toStrictEqual({ content: `/dev/pts/0\n/dev/pts/0\ntyped\npts/ptmx\ndevpts airlock-pts rw,mode=620,ptmxmode=666,max=${share!.ptys}\nexit code: 0`, isError: false });
  }, 60_000);
});

describe.skipIf(!namespaced || share === undefined)('a call that starts while the others hold every pseudo-terminal of the budget', () => {
  test('runs, and opens none: its /dev/pts is empty and read-only (a devpts of max=0 has no bound)', () => {
    if (!probe.available || !('unshare' in probe)) return;
    const args = [...bubblewrapArgs({ workspace: '/tmp', network: true, ptysGiven: true }), '--', 'python3', '-c', `${PTY_PROBE}print(os.listdir("/dev/pts"))`];
    const start = limitedNamespaceCommand({ unshare: probe.unshare, limits: { ...share!, ptys: 0 }, bwrap: probe.bwrap, args });
    const result = spawnSync(start.file, start.args, { encoding: 'utf8' });
    expect([result.stdout, result.stderr, result.status]).toStrictEqual(['openpty: No such file or directory\n[]\n', '', 0]);
  });
});

describe('the devpts of the namespace around bubblewrap', () => {
  test('is bound over the call’s /dev/pts, with its devices, once bubblewrap made /dev', () => {
    const args = bubblewrapArgs({ workspace: '/home/me/project', network: true, ptysGiven: true }, { maskedFolders: [], keptFiles: [], keptLinks: [] });
    const dev = args.indexOf('--dev');
    expect(args.slice(dev, dev + 5)).toStrictEqual(['--dev', '/dev', '--dev-bind', '/dev/pts', '/dev/pts']);
    expect(bubblewrapArgs({ workspace: '/home/me/project', network: true }, { maskedFolders: [], keptFiles: [], keptLinks: [] })).not.toContain('--dev-bind');
  });

  test('a call’s share of the rest: an eighth of each, and at most 64 ptys', () => {
    const all = { instances: 128, watches: 8192, fanotifyGroups: 128, fanotifyMarks: 205_042, ptys: 3072, messageQueueBytes: 819_200 };
    expect(callShare(all)).toStrictEqual({ instances: 16, watches: 4096, fanotifyGroups: 16, fanotifyMarks: 25_630, ptys: 64, messageQueueBytes: 102_400 });
    expect(callShare({ ...all, ptys: 256, fanotifyGroups: 0, messageQueueBytes: 4 })).toMatchObject({ ptys: 32, fanotifyGroups: 0, messageQueueBytes: 1 });
  });
});
