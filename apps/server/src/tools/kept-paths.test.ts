import { describe, expect, test } from 'vitest';
import { browserPlaces } from './browser-profiles';
import { keptWhileSame } from './kept-paths';
import { userHiddenPaths } from './user-hidden-paths';

describe('keptWhileSame', () => {
  test('makes the paths once while the places and the variables read hold still, again when either changes', () => {
    let made = 0;
    const paths = keptWhileSame((places, env) => {
      made += 1;
      return [`${places.home}/${env.HISTFILE ?? 'none'}`];
    });
    const env: Record<string, string | undefined> = { HISTFILE: 'a', UNRELATED: '1' };
    expect(paths(browserPlaces({ HOME: '/home/me' }), env)).toStrictEqual(['/home/me/a']);
    env.UNRELATED = '2';
    expect(paths(browserPlaces({ HOME: '/home/me' }), env)).toStrictEqual(['/home/me/a']);
    expect(made).toBe(1);
    env.HISTFILE = 'b';
    expect(paths(browserPlaces({ HOME: '/home/me' }), env)).toStrictEqual(['/home/me/b']);
    expect(paths(browserPlaces({ HOME: '/home/other' }), env)).toStrictEqual(['/home/other/b']);
    delete env.HISTFILE;
    expect(paths(browserPlaces({ HOME: '/home/other' }), env)).toStrictEqual(['/home/other/none']);
    expect(made).toBe(4);
  });

  test("the user's hidden paths follow a history file named anew, and an XDG folder set, in the same environment", () => {
    const env: Record<string, string | undefined> = { HOME: '/home/me', HISTFILE: '/data/one_history' };
    const places = () => browserPlaces(env);
    expect(userHiddenPaths(places(), env)).toContain('/data/one_history');
    env.HISTFILE = '/data/two_history';
    const now = userHiddenPaths(places(), env);
    expect(now).toContain('/data/two_history');
    expect(now).not.toContain('/data/one_history');
    env.XDG_STATE_HOME = '/state';
    expect(userHiddenPaths(places(), env)).toContain('/state/nvim/swap');
  });
});
