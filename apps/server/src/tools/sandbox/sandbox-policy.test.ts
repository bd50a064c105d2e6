import { describe, expect, test } from 'vitest';
import type { HostLayout } from './host-layout';
import { bubblewrapArgs } from './sandbox-policy';

const mountArgs = (args: string[]) => args.slice(args.indexOf('/tmp') + 1);
const NO_SOCKET_FOLDERS: HostLayout = { maskedFolders: [], keptFiles: [], keptLinks: [] };

describe('bubblewrap arguments', () => {
  test('each folder between the workspace and a hidden path is bound over itself, before the masks', () => {
    const args = bubblewrapArgs(
      {
        workspace: '/home/me',
        hidden: [
          { path: '/home/me/.local/share/airlock', folder: true },
          { path: '/home/me/.config/airlock/token', folder: false },
          { path: '/home/me/key', folder: false },
          { path: '/srv/data', folder: true },
        ],
        network: true,
      },
      NO_SOCKET_FOLDERS,
    );
    expect(mountArgs(args)).toStrictEqual([
      ...['--bind', '/home/me', '/home/me'],
      ...['--tmpfs', '/srv/data'],
      ...['--bind', '/home/me/.local', '/home/me/.local'],
      ...['--bind', '/home/me/.config', '/home/me/.config'],
      ...['--ro-bind', '/dev/null', '/home/me/key'],
      ...['--bind', '/home/me/.local/share', '/home/me/.local/share'],
      ...['--bind', '/home/me/.config/airlock', '/home/me/.config/airlock'],
      ...['--tmpfs', '/home/me/.local/share/airlock'],
      ...['--ro-bind', '/dev/null', '/home/me/.config/airlock/token'],
      ...['--remount-ro', '/srv/data'],
      ...['--remount-ro', '/home/me/.local/share/airlock'],
    ]);
  });

  test('a folder of the workspace whose name starts with .. is bound over itself too: it is inside, and would be renamed away from under the mask', () => {
    const args = bubblewrapArgs({ workspace: '/home/me', hidden: [{ path: '/home/me/..data/airlock/token', folder: false }], network: true }, NO_SOCKET_FOLDERS);
    expect(mountArgs(args)).toStrictEqual([
      ...['--bind', '/home/me', '/home/me'],
      ...['--bind', '/home/me/..data', '/home/me/..data'],
      ...['--bind', '/home/me/..data/airlock', '/home/me/..data/airlock'],
      ...['--ro-bind', '/dev/null', '/home/me/..data/airlock/token'],
    ]);
  });

  test('a veiled folder is an empty tmpfs with its other entries put back, made read-only before what lies deeper; its own hidden entries get no mask', () => {
    const args = bubblewrapArgs(
      {
        workspace: '/home/me/work',
        hidden: [
          { path: '/home/me/.zsh_history', folder: false },
          { path: '/home/me/.mozilla', folder: true },
          { path: '/home/me/.config/chromium', folder: true },
        ],
        veiled: [{ path: '/home/me', entries: [{ name: '.config' }, { name: 'work' }, { name: '.zshrc', link: 'dotfiles/zshrc' }] }],
        network: true,
      },
      NO_SOCKET_FOLDERS,
    );
    expect(mountArgs(args)).toStrictEqual([
      ...['--tmpfs', '/home/me'],
      ...['--ro-bind-try', '/home/me/.config', '/home/me/.config'],
      ...['--ro-bind-try', '/home/me/work', '/home/me/work'],
      ...['--symlink', 'dotfiles/zshrc', '/home/me/.zshrc'],
      ...['--remount-ro', '/home/me'],
      ...['--bind', '/home/me/work', '/home/me/work'],
      ...['--tmpfs', '/home/me/.config/chromium'],
      ...['--remount-ro', '/home/me/.config/chromium'],
    ]);
  });

  test('each socket folder gets an empty tmpfs, then the links at its top and the files of /etc linked into it, then what lies inside', () => {
    const host: HostLayout = {
      maskedFolders: ['/run', '/var/lib/mysql'],
      keptFiles: [{ source: '/run/systemd/resolve/stub-resolv.conf', path: '/run/systemd/resolve/stub-resolv.conf' }],
      keptLinks: [{ target: '/dev/shm', path: '/run/shm' }],
    };
    const args = bubblewrapArgs({ workspace: '/run/user/1000/work', hidden: [{ path: '/run/user/1000/work/key', folder: false }], network: false }, host);
    expect(mountArgs(args)).toStrictEqual([
      ...['--tmpfs', '/run'],
      ...['--symlink', '/dev/shm', '/run/shm'],
      ...['--tmpfs', '/var/lib/mysql'],
      ...['--ro-bind', '/run/systemd/resolve/stub-resolv.conf', '/run/systemd/resolve/stub-resolv.conf'],
      ...['--bind', '/run/user/1000/work', '/run/user/1000/work'],
      ...['--ro-bind', '/dev/null', '/run/user/1000/work/key'],
      ...['--remount-ro', '/run'],
      ...['--remount-ro', '/var/lib/mysql'],
    ]);
  });

  test('guards are mounted from their descriptors after the workspace and before a hidden path at the same depth; the seccomp filter is read from its own', () => {
    const args = bubblewrapArgs(
      {
        workspace: '/w',
        hidden: [{ path: '/w/.airlock', folder: true }],
        network: true,
        guards: [
          { path: '/w/.git', fd: 5, readOnly: false },
          { path: '/w/.git/config', fd: 6, readOnly: true },
          { path: '/w/.airlock', fd: 7, readOnly: true },
        ],
        seccompFd: 4,
      },
      NO_SOCKET_FOLDERS,
    );
    expect(args.slice(args.indexOf('ALL') + 1, args.indexOf('ALL') + 3)).toStrictEqual(['--seccomp', '4']);
    expect(mountArgs(args)).toStrictEqual([
      ...['--bind', '/w', '/w'],
      ...['--bind-fd', '5', '/w/.git'],
      ...['--ro-bind-fd', '7', '/w/.airlock'],
      ...['--tmpfs', '/w/.airlock'],
      ...['--ro-bind-fd', '6', '/w/.git/config'],
      ...['--remount-ro', '/w/.airlock'],
    ]);
  });

  test('the call writes only to its /tmp and /dev/shm, each of the size given; /dev is read-only', () => {
    const args = bubblewrapArgs({ workspace: '/w', network: true, tmpfsBytes: 1_048_576 }, NO_SOCKET_FOLDERS);
    expect(args.slice(args.indexOf('--dev'), args.indexOf('/tmp') + 1)).toStrictEqual([
      ...['--dev', '/dev'],
      ...['--size', '1048576', '--tmpfs', '/dev/shm'],
      ...['--remount-ro', '/dev'],
      ...['--proc', '/proc'],
      ...['--ro-bind', '/proc/sys', '/proc/sys'],
      ...['--size', '1048576', '--tmpfs', '/tmp'],
    ]);
    const unsized = bubblewrapArgs({ workspace: '/w', network: true }, NO_SOCKET_FOLDERS);
    expect(unsized.includes('--size')).toBe(false);
  });

  test('the call gets an IPC namespace of bubblewrap’s making, unless one with its limits is given it', () => {
    const namespaces = (args: string[]) => args.filter((arg) => arg.startsWith('--unshare-'));
    expect(namespaces(bubblewrapArgs({ workspace: '/w', network: false }, NO_SOCKET_FOLDERS))).toStrictEqual(['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-net']);
    expect(namespaces(bubblewrapArgs({ workspace: '/w', network: false, ipcNamespaceGiven: true }, NO_SOCKET_FOLDERS))).toStrictEqual(['--unshare-user', '--unshare-pid', '--unshare-net']);
  });
});
