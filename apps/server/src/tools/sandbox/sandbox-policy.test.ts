import { describe, expect, test } from 'vitest';
import { bubblewrapArgs } from './sandbox-policy';

const mountArgs = (args: string[]) => args.slice(args.indexOf('/tmp') + 1);

describe('bubblewrap arguments', () => {
  test('each folder between the workspace and a hidden path is bound over itself, before the masks', () => {
    const args = bubblewrapArgs({
      workspace: '/home/me',
      hidden: [
        { path: '/home/me/.local/share/airlock', folder: true },
        { path: '/home/me/.config/airlock/token', folder: false },
        { path: '/home/me/key', folder: false },
        { path: '/srv/data', folder: true },
      ],
      network: true,
    });
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
    ]);
  });
});
