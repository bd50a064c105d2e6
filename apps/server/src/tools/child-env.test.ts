import { describe, expect, test } from 'vitest';
import { buildChildEnv, withGitConfig } from './child-env';

describe('buildChildEnv', () => {
  const source = {
    PATH: '/usr/bin:/bin',
    HOME: '/home/someone',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TZ: 'UTC',
    FOO_API_KEY: 'k-123',
    GITHUB_TOKEN: 'ghx',
    DB_PASSWORD: 'pw',
    MY_SECRET: 's',
    LC_TOKEN: 'looks-allowed-but-is-a-token',
    NODE_OPTIONS: '--require /tmp/evil.js',
    SHELL: 'server-token-value-1234',
    TERM: 'xterm prefix server-token-value-1234 suffix',
  };

  test('keeps only allowlisted variables, minus secret names and secret values, and sets PWD', () => {
    expect(buildChildEnv({ source, secretValues: ['server-token-value-1234'], cwd: '/work/ws' })).toStrictEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/someone',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      TZ: 'UTC',
      PWD: '/work/ws',
    });
  });

  test('applies the same filters to variables the tool adds', () => {
    const env = buildChildEnv({ source: {}, cwd: '/w', secretValues: ['abcdefgh'], extra: { PYTHONUNBUFFERED: '1', X_TOKEN: 'y', LEAK: 'abcdefgh' } });
    expect(env).toStrictEqual({ PWD: '/w', PYTHONUNBUFFERED: '1' });
  });

  test('a short secret value is matched whole only', () => {
    expect(buildChildEnv({ source: { PATH: '/bin', TZ: 'a' }, cwd: '/w', secretValues: ['a', ''] })).toStrictEqual({ PATH: '/bin', PWD: '/w' });
  });
});

describe('withGitConfig', () => {
  test('adds the settings after those the environment holds, and keeps the rest', () => {
    const env = { PATH: '/bin', GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.pager', GIT_CONFIG_VALUE_0: 'cat' };
    expect(withGitConfig(env, [['safe.bareRepository', 'explicit']])).toStrictEqual({
      PATH: '/bin',
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'core.pager',
      GIT_CONFIG_VALUE_0: 'cat',
      GIT_CONFIG_KEY_1: 'safe.bareRepository',
      GIT_CONFIG_VALUE_1: 'explicit',
    });
  });

  test('starts at 0 without a count, or with one Git would refuse', () => {
    for (const count of [undefined, '', '-1', 'x']) {
      const env: Record<string, string> = count === undefined ? { PATH: '/bin' } : { PATH: '/bin', GIT_CONFIG_COUNT: count };
      expect(withGitConfig(env, [['safe.bareRepository', 'explicit']])).toStrictEqual({
        PATH: '/bin',
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'safe.bareRepository',
        GIT_CONFIG_VALUE_0: 'explicit',
      });
    }
  });
});
