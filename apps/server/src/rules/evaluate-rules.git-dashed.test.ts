import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, terminal } from './rule-fixtures';

const noPush = prefix('git push', { effect: 'deny', reason: 'never push' });

function decide(command: string) {
  return evaluateRules(terminal(command), [noPush], context);
}

describe("git's programs named by their subcommand (git's exec-path), under a deny rule for git push", () => {
  it.each(['/usr/lib/git-core/git-http-push --dry-run http://127.0.0.1:9/repo.git main', 'git http-push http://127.0.0.1:9/repo.git main'])(
    '%s, which pushes, is denied',
    async (line) => {
      expect(await decide(line)).toStrictEqual({ decision: 'deny', rule: noPush });
    },
  );

  it('are judged as git with that subcommand: one that is not plain as `git <subcommand>` is not plain dashed either', async () => {
    for (const line of ['git difftool HEAD', '/usr/lib/git-core/git-difftool HEAD']) {
      expect(await decide(line), line).toMatchObject({ decision: 'ask', because: noPush });
    }
    expect(await decide('/usr/lib/git-core/git-status')).toStrictEqual({ decision: 'ask' });
  });
});
