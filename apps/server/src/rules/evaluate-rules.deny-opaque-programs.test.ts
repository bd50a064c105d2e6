import { ruleSchema } from '@airlock/api';
import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, terminal } from './rule-fixtures';

const noDelete = prefix('rm -rf', { effect: 'deny' });

async function decisionOf(command: string, rules = [noDelete]): Promise<string> {
  const decision = await evaluateRules(terminal(command), rules, context);
  return 'because' in decision ? `ask naming ${decision.because.id}` : decision.decision;
}

describe('under a command deny rule, a program the deny side cannot read is not plain', () => {
  it('a program fed the pipe that is not a known filter of data: it may run what it reads', async () => {
    for (const line of [
      'echo cm0gLXJmIHZpY3RpbQ== | base64 -d | capsh --',
      'echo b3M6Y21kKCJybSAtcmYgdmljdGltIiksIGhhbHQoKS4= | base64 -d | erl',
      'echo cm0gLXJmIHZpY3RpbQ== | base64 -d | fakeroot-sysv',
      'echo cm0gLXJmIHZpY3RpbQ== | base64 -d | fakeroot-tcp',
      'echo cm0gLXJmIHZpY3RpbQ== | base64 -d | some-new-reader',
      'echo x | base64 -d | tool --quiet',
      'cat notes | /tmp/x/cat',
      'some-new-reader <&3',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
  });

  it('a program given a shell or an interpreter among its words, or code by -e, -c or --eval', async () => {
    for (const line of [
      "fakeroot-sysv -- sh -c 'x=r; ${x}m -rf victim'",
      "capsh -- -c 'x=r; ${x}m -rf victim'",
      "fakeroot-tcp sh -c 'x=r; ${x}m -rf victim'",
      "luit -- sh -c 'x=r; ${x}m -rf victim'",
      "heaptrack sh -c 'x=r; ${x}m -rf victim'",
      "memusage sh -c 'x=r; ${x}m -rf victim'",
      "sotruss sh -c 'x=r; ${x}m -rf victim'",
      "pg_virtualenv sh -c 'x=r; ${x}m -rf victim'",
      "dotenv run sh -c 'x=r; ${x}m -rf victim'",
      `erl -noshell -eval 'os:cmd([114,109]++" -rf victim"), halt().'`,
      "some-wrapper /usr/bin/python3.12 -c 'import shutil'",
      'some-wrapper --shell=/bin/bash task',
      "some-wrapper /bin/s? -c 'x=r; ${x}m -rf victim'",
      "some-lisp --eval '(run-program \"x\")'",
      "some-lang -e 'system(x)'",
      'some-lang --exec=code',
      // The price: lines that run nothing but name such a program, or take such an option, are asked about too.
      "git commit -m 'fix bash completion'",
      'gcc -c x.c',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
  });

  it('a cluster program running kubectl, kubectl making a job that runs a command, and more subcommands and options that run one', async () => {
    // Each was plain and ran the command it gave.
    for (const line of [
      'k3s kubectl exec p -- evil',
      'minikube kubectl -- run x --image=alpine',
      'microk8s kubectl evil',
      'k3s $X exec p -- evil',
      'kubectl create job j --image=alpine -- evil',
      'oc create deployment d --image=alpine -- evil',
      'nix-shell -p hello --run=evil',
      'docker service update --args evil s',
      'podman attach c',
      'cabal v2-run',
      'guix container exec 12 evil',
      'guix repl x.scm',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
    for (const line of ['k3s kubectl get pods', 'minikube kubectl -- get pods', 'minikube status', 'kubectl create namespace web', 'cabal v2-build']) {
      expect(await decisionOf(line), line).toBe('ask');
    }
  });

  it('ordinary pipelines and commands stay plain', async () => {
    for (const line of [
      'git log | head',
      'git log --oneline | head -n 5 | cut -c1-7',
      'ls | grep x',
      'cat f | wc -l',
      // (`git ls-files | sort` is not: sort may write a file, -o, while git reads the Git directories.)
      'git ls-files | wc -l',
      'ls src | sort -r',
      'git status && ls -la',
      'ps aux | grep node',
      'cat package.json | jq .name',
      'echo aGk= | base64 -d | sort | uniq -c | sort -rn | tail -n 3',
      'git diff | grep -e bash -c',
      'wc -c notes',
      'grep -r python src',
    ]) {
      expect(await decisionOf(line), line).toBe('ask');
    }
  });
});

describe('programs that run what they are given, by name', () => {
  it('take exact allow rules only', () => {
    for (const name of ['erl', 'erlc', 'escript', 'guile', 'duckdb', 'lldb', 'capsh', 'fakeroot-sysv', 'fakeroot-tcp', 'luit', 'heaptrack', 'memusage', 'sotruss', 'pg_virtualenv', 'dotenv']) {
      const draft = { ...noDelete, effect: 'allow', match: { kind: 'command-prefix', tokens: [name], exact: false } };
      expect(ruleSchema.safeParse(draft).success, name).toBe(false);
      expect(ruleSchema.safeParse({ ...draft, match: { ...draft.match, exact: true } }).success, name).toBe(true);
    }
  });

  it('telnet runs the `!` lines of a pipe: a prefix rule for it does not cover it piped', async () => {
    const rules = [prefix('telnet'), prefix('echo')];
    expect(await decisionOf("echo '!touch PWNED' | telnet", rules)).toBe('ask');
    expect(await decisionOf('telnet', rules)).toBe('allow');
  });

  it('an exact rule for one does not cover it fed a pipe', async () => {
    for (const name of ['erl', 'guile', 'duckdb', 'lldb', 'capsh']) {
      expect(await decisionOf(`echo x | ${name}`, [prefix(name, { exact: true }), prefix('echo')]), name).toBe('ask');
    }
  });
});
