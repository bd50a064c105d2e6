import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, terminal } from './rule-fixtures';

const noDelete = prefix('rm -rf', { effect: 'deny' });

async function decisionOf(command: string): Promise<string> {
  const decision = await evaluateRules(terminal(command), [noDelete], context);
  return 'because' in decision ? `ask naming ${decision.because.id}` : decision.decision;
}

describe('under a command deny rule, a program that runs commands its words or its files name is not plain', () => {
  it('socat runs the command of a SYSTEM:, EXEC: or SHELL: address, in any case, and of any address it does not know', async () => {
    for (const line of [
      "socat /dev/null 'SYSTEM:x=r; ${x}m -rf victim'",
      "socat - 'SYSTEM:x=r; ${x}m -rf victim'",
      'socat - EXEC:./evil.sh',
      "socat - 'EXEC:find victim -delete'",
      "socat - 'exec:find victim -delete'",
      "socat - 'System:x=r; ${x}m -rf victim'",
      "socat - 'SHELL:x=r; ${x}m -rf victim'",
      "socat -u 'exec:./evil.sh,pty' -",
      'socat - some-new-address:./evil.sh',
      "socat1 - 'SYSTEM:x=r; ${x}m -rf victim'",
      'socat - "$ADDRESS"',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
  });

  it('programs that run the command they are given, or one a file they read names', async () => {
    for (const line of [
      'gio launch evil.desktop',
      'gio open evil.desktop',
      'gio some-new-subcommand x',
      'gio-launch-desktop ./evil.sh',
      'gapplication launch org.example.App',
      'xdg-open evil.desktop',
      'make',
      'make test',
      'gmake all',
      'bmake',
      // ninja runs what build.ninja says, which a call may have written, as make runs its Makefile.
      'ninja',
      'ninja test',
      'watchexec ./evil.sh',
      'entr ./evil.sh',
      "pee 'x=r; ${x}m -rf victim'",
      "mispipe 'true' 'x=r; ${x}m -rf victim'",
      'lckdo lock ./evil.sh',
      'daemonize ./evil.sh',
      'fakechroot ./evil.sh',
      'fakeroot ./evil.sh',
      'fakeroot-ng ./evil.sh',
      'pandoc --filter ./evil.sh in.md',
      'pandoc --filter=./evil.sh in.md',
      'pandoc -F ./evil.sh in.md',
      'pandoc -F./evil.sh in.md',
      'pandoc --lua-filter x.lua in.md',
      'pandoc -L x.lua in.md',
      'pandoc --pdf-engine=./evil.sh -o out.pdf in.md',
      'pandoc -d defaults.yaml',
      'pandoc -t ./writer.lua in.md',
      'pandoc --from=reader.lua in.md',
      'aria2c --on-download-complete=./evil.sh http://example.com/x',
      'aria2c --on-download-start ./evil.sh http://example.com/x',
      'aria2c http://example.com/x',
      'texi2dvi doc.texi',
      'texi2pdf doc.texi',
      'latexmk -pdf doc.tex',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
  });

  it('programs that run their remaining words as a command', async () => {
    for (const line of [
      'systemd-cat ./evil.sh',
      'systemd-cat -t tag ./evil.sh',
      'dtach -n sock ./evil.sh',
      'dtach -A sock ./evil.sh',
      'abduco -n name ./evil.sh',
      'abduco -A name ./evil.sh',
      'reflex -- ./evil.sh',
      'reflex -r x ./evil.sh',
      'trickle ./evil.sh',
      'nocache ./evil.sh',
      'caffeinate ./evil.sh',
      'scl enable x ./evil.sh',
      'with-lock-ex lock ./evil.sh',
      'lockrun -L lock -- ./evil.sh',
      'gosu user ./evil.sh',
      'su-exec user ./evil.sh',
      'cset shell -- ./evil.sh',
      'retry ./evil.sh',
      'systemd-nspawn ./evil.sh',
      'schroot -- ./evil.sh',
      'mpirun ./evil.sh',
      'mpiexec ./evil.sh',
      'orterun ./evil.sh',
      'srun ./evil.sh',
      'salloc ./evil.sh',
      'sbatch --wrap ./evil.sh',
      'distcc ./evil.sh',
      'timelimit ./evil.sh',
      'run-one ./evil.sh',
      'run-this-one ./evil.sh',
      'keep-one-running ./evil.sh',
      'start-stop-daemon -S -x ./evil.sh',
      'daemon ./evil.sh',
      'rootlesskit ./evil.sh',
      'flatpak-spawn --host ./evil.sh',
      'toolbox run ./evil.sh',
      'distrobox-enter -- ./evil.sh',
      'xinit ./evil.sh',
      'startx ./evil.sh',
      'sshpass -p x ./evil.sh',
      'empty -f ./evil.sh',
      'faketty ./evil.sh',
      'bear -- ./evil.sh',
      'intercept-build ./evil.sh',
      'scan-build ./evil.sh',
      'rr record ./evil.sh',
      'uftrace ./evil.sh',
      'multitime ./evil.sh',
      'nq ./evil.sh',
      'tsp ./evil.sh',
      'pueue add ./evil.sh',
      'concurrently ./evil.sh',
      'watchman-make -p x --run ./evil.sh',
      'when-changed x ./evil.sh',
      'onchange x ./evil.sh',
      'cargo-watch -s ./evil.sh',
      'byobu ./evil.sh',
      'zellij run -- ./evil.sh',
      'dvtm ./evil.sh',
      'gnome-terminal -- ./evil.sh',
      'konsole -e ./evil.sh',
      'kitty ./evil.sh',
      'tilix ./evil.sh',
      'alacritty -e ./evil.sh',
      'wezterm start ./evil.sh',
      'urxvt -e ./evil.sh',
      'terminator -x ./evil.sh',
      'foot ./evil.sh',
      'footclient ./evil.sh',
      'mate-terminal -- ./evil.sh',
      'mate-terminal -x ./evil.sh',
      'xfce4-terminal -x ./evil.sh',
      'x-terminal-emulator -e ./evil.sh',
      'lxterminal -e ./evil.sh',
      'qterminal -e ./evil.sh',
      'kgx -- ./evil.sh',
      'ptyxis -- ./evil.sh',
      'kitten run-shell ./evil.sh',
      's6-setuidgid me ./evil.sh',
      'vglrun ./evil.sh',
      'prime-run ./evil.sh',
      'gamemoderun ./evil.sh',
      'mangohud ./evil.sh',
      'qsub ./evil.sh',
      'bsub ./evil.sh',
      'mpiexec.hydra ./evil.sh',
      // Already judged through the wrapper tables or their code options; kept so that a change there shows.
      'systemd-run ./evil.sh',
      'systemd-inhibit ./evil.sh',
      'screen -dmS s ./evil.sh',
      'tmux new-session ./evil.sh',
      'tmux send-keys -t s ./evil.sh Enter',
      'at now',
      'batch',
      'unbuffer ./evil.sh',
      'expect script.exp',
      'dbus-launch ./evil.sh',
      'dbus-run-session -- ./evil.sh',
      'xvfb-run -a ./evil.sh',
      'flock lock ./evil.sh',
      'setsid ./evil.sh',
      'chrt -f 1 ./evil.sh',
      'taskset -c 0 ./evil.sh',
      'ionice -c 3 ./evil.sh',
      'nice -n 5 ./evil.sh',
      'nohup ./evil.sh',
      'stdbuf -oL ./evil.sh',
      'timeout 5 ./evil.sh',
      'time ./evil.sh',
      'sudo ./evil.sh',
      'su -c ./evil.sh',
      'runuser -u user ./evil.sh',
      'doas ./evil.sh',
      'pkexec ./evil.sh',
      'script -qc ./evil.sh /dev/null',
      'valgrind ./evil.sh',
      'strace -f ./evil.sh',
      'ltrace ./evil.sh',
      'gdb -ex run ./evil.sh',
      'gdb --args ./evil.sh',
      'perf record ./evil.sh',
      'perf stat -- ./evil.sh',
      'catchsegv ./evil.sh',
      'ssh-agent ./evil.sh',
      'sg group ./evil.sh',
      'newgrp group',
      'chroot / ./evil.sh',
      'unshare -r ./evil.sh',
      'nsenter -t 1 ./evil.sh',
      'firejail ./evil.sh',
      'bwrap --bind / / ./evil.sh',
      'proot ./evil.sh',
      "env -S './evil.sh x'",
      'watch -n 1 ./evil.sh',
      'parallel ./evil.sh ::: a',
      'xargs ./evil.sh',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
  });

  it('programs whose subcommands, options or environment run a command: by subcommand, option or any word', async () => {
    for (const line of [
      // ip takes any unique start of an object and a command (`ip net e`), runs `netns exec` or `vrf exec`, and runs
      // the ip commands of a file with -batch (`-b`, `--batch`).
      'ip netns exec NAME ./evil.sh',
      'ip -all netns exec ./evil.sh',
      'ip -a netns exec ./evil.sh',
      'ip -n NAME exec ./evil.sh',
      'ip net exec NAME ./evil.sh',
      'ip netn e NAME ./evil.sh',
      'ip netns ex NAME ./evil.sh',
      'ip vrf exec blue ./evil.sh',
      'ip -b commands.txt',
      'ip -batch commands.txt',
      'ip --batch commands.txt',
      'ip -force -ba commands.txt',
      'ip "$OBJECT" exec NAME ./evil.sh',
      // containers and their user namespaces: the command runs with the call's files (`-v`, the same home)
      'podman unshare ./evil.sh',
      'buildah unshare ./evil.sh',
      'podman machine ssh ./evil.sh',
      'podman run img ./evil.sh',
      'podman exec c ./evil.sh',
      'podman container run img ./evil.sh',
      'docker run -v /:/host img ./evil.sh',
      'docker exec c ./evil.sh',
      'docker compose up',
      'docker-compose up',
      'podman-compose up',
      'nerdctl run img ./evil.sh',
      'buildah run c ./evil.sh',
      'lxc exec c -- ./evil.sh',
      'incus exec c -- ./evil.sh',
      'kubectl exec p -- ./evil.sh',
      'kubectl run p --image=x -- ./evil.sh',
      'oc exec p -- ./evil.sh',
      'flatpak run --command=./evil.sh org.example.App',
      'snap run --shell app',
      'distrobox enter -- ./evil.sh',
      'distrobox ephemeral -- ./evil.sh',
      'distrobox-host-exec ./evil.sh',
      // process managers start a script or a command line, and restart what they started
      'pm2 start ./evil.sh',
      'pm2 start "./evil.sh x"',
      'pm2 restart app',
      'pm2 reload app',
      'pm2 resurrect',
      'pm2 start ecosystem.config.js',
      'pm2 some-new-subcommand x',
      'forever start ./evil.sh',
      'forever restart app',
      'forever ./evil.sh',
      'nodemon --exec ./evil.sh',
      // sudoedit runs the editor $SUDO_EDITOR, $VISUAL or $EDITOR names
      'sudoedit f',
      'sudo -e f',
      'env SUDO_EDITOR=./evil.sh sudoedit f',
      'env EDITOR=./evil.sh git commit',
      'env VISUAL=./evil.sh crontab -e',
      'env GIT_EDITOR=./evil.sh git commit',
      'env GIT_SEQUENCE_EDITOR=./evil.sh git rebase -i HEAD~2',
      'env PAGER=./evil.sh git log',
      'env GIT_PAGER=./evil.sh git log',
      'env MANPAGER=./evil.sh man ls',
      "env LESSOPEN='|./evil.sh %s' less f",
      'SUDO_EDITOR=./evil.sh sudoedit f',
      'EDITOR=./evil.sh git commit',
      // TeX with its shell escape on, in any spelling getopt takes, or a Lua script to run
      'pdflatex -shell-escape doc.tex',
      'pdflatex --shell-escape doc.tex',
      'pdflatex -shell-e doc.tex',
      'pdflatex -enable-write18 doc.tex',
      'pdflatex --cnf-line=shell_escape=t doc.tex',
      'xelatex -shell-escape doc.tex',
      'lualatex -shell-escape doc.tex',
      'latex -shell-escape doc.tex',
      'tex -shell-escape doc.tex',
      'etex -shell-escape doc.tex',
      'pdftex -shell-escape doc.tex',
      'luatex -shell-escape doc.tex',
      'xetex -shell-escape doc.tex',
      'platex -shell-escape doc.tex',
      'uplatex -shell-escape doc.tex',
      'pdflatex-dev -shell-escape doc.tex',
      'luatex --lua=init.lua doc.tex',
      'luatex --luaonly x.lua',
      'pdflatex "$OPTIONS" doc.tex',
      'texlua x.lua',
      'mtxrun --script x',
      'arara doc.tex',
      // task-spooler queues the command it is given (`tsp` on Debian, whose `ts` is moreutils')
      'ts ./evil.sh',
      'ts -n ./evil.sh',
      'tsp ./evil.sh',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
  });

  it('a sweep of programs that run their words, each with its outcome, so that a change to any table shows', async () => {
    const notPlain = `ask naming ${noDelete.id}`;
    // 'ask' is plain: put up only because no allow rule covers it, and with confirmation off it would run.
    const table: [string, string][] = [
      ['nsenter -t 1 ./evil.sh', notPlain],
      ['unshare -r ./evil.sh', notPlain],
      ['firejail ./evil.sh', notPlain],
      ['flatpak run org.example.App', notPlain],
      ['snap run app', notPlain],
      ['toolbox run ./evil.sh', notPlain],
      ['distrobox enter -- ./evil.sh', notPlain],
      ['lxc exec c -- ./evil.sh', notPlain],
      ['incus exec c -- ./evil.sh', notPlain],
      ['kubectl exec p -- ./evil.sh', notPlain],
      ['docker exec c ./evil.sh', notPlain],
      ['vagrant ssh -c ./evil.sh', notPlain],
      ['timeout 5 ./evil.sh', notPlain],
      ['chronic ./evil.sh', notPlain],
      ['ionice ./evil.sh', notPlain],
      ['taskset 1 ./evil.sh', notPlain],
      ['numactl -C 0 ./evil.sh', notPlain],
      ['cpulimit -l 5 ./evil.sh', notPlain],
      ['stdbuf -oL ./evil.sh', notPlain],
      ['unbuffer ./evil.sh', notPlain],
      ['script -c ./evil.sh', notPlain],
      ['expect -c x', notPlain],
      ['tclsh x.tcl', notPlain],
      ['wish x.tcl', notPlain],
      ['guile x.scm', notPlain],
      ["gawk 'BEGIN{system(\"./evil.sh\")}'", notPlain],
      ['find . -exec ./evil.sh {} ;', notPlain],
      ['find . -execdir ./evil.sh {} ;', notPlain],
      ['find . -ok ./evil.sh {} ;', notPlain],
      ['find . -okdir ./evil.sh {} ;', notPlain],
      ['xargs ./evil.sh', notPlain],
      ['parallel ./evil.sh ::: a', notPlain],
      ["env -S './evil.sh x'", notPlain],
      ['busybox sh', notPlain],
      ['toybox sh', notPlain],
      ['ssh host ./evil.sh', notPlain],
      ['mosh host -- ./evil.sh', notPlain],
      ['autossh host ./evil.sh', notPlain],
      ['rsync -e ./evil.sh a host:b', notPlain],
      ['tar -I ./evil.sh -cf x.tar a', notPlain],
      ['tar --to-command=./evil.sh -xf x.tar', notPlain],
      ['zip -TT ./evil.sh x.zip a', notPlain],
      ['sort --compress-program=./evil.sh f', notPlain],
      ['rg --pre ./evil.sh x', notPlain],
      ['machinectl shell root@.host ./evil.sh', notPlain],
      ['runc exec c ./evil.sh', notPlain],
      ['crun exec c ./evil.sh', notPlain],
      ['crictl exec c ./evil.sh', notPlain],
      ['ctr run img id ./evil.sh', notPlain],
      ['ctr task exec --exec-id 1 c ./evil.sh', notPlain],
      ['lxc-attach -n c -- ./evil.sh', notPlain],
      ['lxc-execute -n c -- ./evil.sh', notPlain],
      ['arch-chroot /mnt ./evil.sh', notPlain],
      ['singularity exec img.sif ./evil.sh', notPlain],
      ['apptainer exec img.sif ./evil.sh', notPlain],
      ['udocker run img ./evil.sh', notPlain],
      ['multipass exec vm -- ./evil.sh', notPlain],
      ['minikube ssh ./evil.sh', notPlain],
      ['nix-shell --run ./evil.sh', notPlain],
      ['nix run nixpkgs#x', notPlain],
      ['nix develop -c ./evil.sh', notPlain],
      ['guix shell -- ./evil.sh', notPlain],
      ['nvm exec ./evil.sh', notPlain],
      ['opam exec -- ./evil.sh', notPlain],
      ['stack exec ./evil.sh', notPlain],
      ['cabal exec ./evil.sh', notPlain],
      ['aws-vault exec p -- ./evil.sh', notPlain],
      ['op run -- ./evil.sh', notPlain],
      ['doppler run -- ./evil.sh', notPlain],
      ['dotenvx run -- ./evil.sh', notPlain],
      ['infisical run -- ./evil.sh', notPlain],
      ['chamber exec s -- ./evil.sh', notPlain],
      ['sops exec-env f ./evil.sh', notPlain],
      ['with-contenv ./evil.sh', notPlain],
      ['s6-envdir d ./evil.sh', notPlain],
      ['execlineb x', notPlain],
      ['runsv d', notPlain],
      ['gdbserver :1 ./evil.sh', notPlain],
      ['xdotool exec ./evil.sh', notPlain],
      ['npm exec ./evil.sh', notPlain],
      ['uv run ./evil.sh', notPlain],
      ['poetry run ./evil.sh', notPlain],
      ['bundle exec ./evil.sh', notPlain],
      ['direnv exec . ./evil.sh', notPlain],
      ['mise exec -- ./evil.sh', notPlain],
      ['hyperfine ./evil.sh', notPlain],
      ['sem ./evil.sh', notPlain],
      ['xterm -e ./evil.sh', notPlain],
      ['git -c core.pager=./evil.sh log', notPlain],
      ['git difftool -x ./evil.sh', notPlain],
      ['podman container runlabel install img', notPlain],
      ['groff -U x.ms', notPlain],
      ['groff -msU x.ms', notPlain],
      ['nroff -U x', notPlain],
      ['dvips -R0 x.dvi', notPlain],
      ['dvips -R 0 x.dvi', notPlain],
      ['go run .', notPlain],
      ...['yash', 'oksh', 'posh', 'nu', 'elvish', 'xonsh', 'octave', 'maxima', 'asy', 'sage', 'scilab', 'clisp', 'sbcl', 'racket', 'ocaml', 'runghc', 'swipl', 'scala', 'kotlin', 'groovy', 'elixir', 'raku', 'tcc', 'clojure', 'bb', 'hy', 'janet', 'fennel', 'qjs', 'gjs', 'lilypond'].map(
        (program): [string, string] => [`${program} ./x`, notPlain],
      ),
      ['groff -ms x.ms', 'ask'],
      ['dvips x.dvi', 'ask'],
      // Programs that run what their own files say go by their words (docs/rules.md): plain.
      ['cargo run', 'ask'],
      ['go build', 'ask'],
      ['go test', 'ask'],
      ['npm test', 'ask'],
      ['pytest', 'ask'],
      ['sv start x', 'ask'],
      ['inotifywait -m .', 'ask'],
    ];
    for (const [line, outcome] of table) expect(await decisionOf(line), line).toBe(outcome);
  });

  it('a program named by a path outside the system\'s program folders, where a call may have copied a script of the workspace', async () => {
    for (const line of [
      '/tmp/e',
      'cp evil.sh /tmp/e && /tmp/e',
      '/var/tmp/x.sh',
      '/dev/shm/x',
      '/root/e',
      '/home/person/bin/e',
      '../e',
      '/usr/bin/../../tmp/e',
      '/usr/local/bin/x/../../../../tmp/e',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
  });

  it('go run, go generate and go tool run code their words or the files of the package name, and go env -w sets what later go commands run', async () => {
    for (const line of [
      'go run x.go',
      'go run .',
      'go run ./cmd/evil',
      'go generate',
      'go generate ./...',
      'go tool x',
      'go tool pprof x',
      'go env -w GOFLAGS=-toolexec=./evil.sh',
      'go env -w CC=./evil.sh',
      'go env -w=true GOFLAGS=-toolexec=./evil.sh',
      'go env --w GOFLAGS=-toolexec=./evil.sh',
      'go "$SUBCOMMAND" x.go',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
    // Building, testing and reading stay plain, as `cargo build` and `npm test` do (docs/rules.md).
    for (const line of ['go build', 'go build ./...', 'go test ./...', 'go vet ./...', 'go env', 'go env GOPATH', 'go env -u GOFLAGS', 'go version', 'go mod tidy']) {
      expect(await decisionOf(line), line).toBe('ask');
    }
  });

  it('compilers and build tools that run what they compile or build, a script, or a playbook\'s tasks', async () => {
    for (const line of [
      'swift x.swift',
      'swift run',
      'swift build',
      'kotlinc -script x.kts',
      'kotlinc -expression x',
      'kotlin x.main.kts',
      'crystal run x.cr',
      'crystal x.cr',
      'crystal build x.cr',
      'nim r x.nim',
      'nim c -r x.nim',
      'nim c x.nim',
      'nim e x.nims',
      'nimble run',
      'zig run x.zig',
      'zig build',
      'zig build run',
      'zig test x.zig',
      'dart run',
      'dart run x.dart',
      'dart x.dart',
      'dart test',
      'dart --enable-asserts x.dart',
      'ansible-playbook p.yml',
      'ansible-playbook -i hosts p.yml',
      "ansible all -m shell -a './evil.sh'",
      "ansible localhost -a './evil.sh'",
      'ansible all -m ping',
      'ansible-pull -U https://example.com/x.git',
      'ansible-inventory -i ./evil.sh --list',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
    for (const line of ['zig fmt x.zig', 'zig build-exe x.zig', 'zig version', 'kotlinc x.kt', 'dart format .', 'swiftc x.swift']) {
      expect(await decisionOf(line), line).toBe('ask');
    }
  });

  it('wrappers, launchers, environments, virtual machines and monorepo tools that run the command or script they are given', async () => {
    for (const wrapper of [
      'optirun',
      'primusrun',
      'micromamba run',
      'micromamba run -n env',
      'cross-env',
      'cross-env A=1',
      'cross-env-shell',
      'env-cmd',
      'env-cmd -f .env',
      'summon',
      'nsjail --',
      'nsjail -Mo --',
      'box64',
      'box86',
      'wine',
      'wine64',
      'lima',
      'limactl shell default',
      'colima ssh --',
      'devcontainer exec',
      'devcontainer exec --workspace-folder .',
      'foreman run',
      'nx exec --',
      'lerna exec --',
    ]) {
      for (const command of ['./evil.sh', "sh -c './evil.sh'"]) {
        const line = `${wrapper} ${command}`;
        expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
      }
    }
    // What their files say to run: a Procfile, devcontainer.json's lifecycle commands, a Lima template's provisioning
    // scripts, the packages' scripts and Nx's plugins.
    for (const line of ['foreman start', 'devcontainer up', 'limactl start x.yaml', 'colima start', 'nx run app:build', 'nx show projects', 'lerna run test', 'turbo run test', 'turbo test', 'turbo build']) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
    // Those the deny side now looks behind are caught by the rule itself.
    for (const line of ['cross-env A=1 rm -rf victim', 'env-cmd -f .env rm -rf victim', 'primusrun rm -rf victim', 'box64 rm -rf victim', 'micromamba run -n env rm -rf victim']) {
      expect(await decisionOf(line), line).toBe('deny');
    }
    for (const line of ['foreman check', 'lerna list', 'turbo ls', 'limactl list', 'colima status', 'devcontainer read-configuration']) {
      expect(await decisionOf(line), line).toBe('ask');
    }
  });

  it('openssl given an engine, a provider or a config, which may load a shared object, and a kubectl or cargo plugin', async () => {
    for (const line of [
      'openssl req -engine ./x.so -new',
      'openssl req --engine=./x.so -new',
      'openssl s_client -engine ./x.so',
      'openssl s_client -ssl_client_engine ./x.so',
      'openssl genpkey -keygen_engine ./x.so',
      'openssl req -provider-path . -provider x -new',
      'openssl req -config x.cnf -new',
      'openssl engine ./x.so',
      'openssl provider /tmp/x.so',
      'openssl x509 "$OPTION" ./x.so',
      // kubectl runs `kubectl-<word>` from PATH, where a call may have put one, for a first word it does not know.
      'kubectl foo',
      'kubectl evil pods',
      'kubectl krew install x',
      'kubectl "$WORD" pods',
      // and cargo `cargo-<word>` from ~/.cargo/bin or PATH
      'cargo evil',
      'cargo +nightly evil',
      'cargo "$WORD"',
      // found after cargo's options, as cargo finds it
      'cargo --color always evil',
      'cargo -v evil',
      'cargo +nightly --locked evil',
      'cargo -Z unstable-options evil',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
    for (const line of ['openssl x509 -in c.pem -noout -text', 'openssl dgst -sha256 f', 'kubectl get pods', 'kubectl -n ns get pods', 'kubectl plugin list', 'kubectl version', 'cargo build', 'cargo +nightly build', 'cargo test', 'cargo fmt', 'cargo --color always build', 'cargo -v test', 'cargo --locked build', 'cargo --version']) {
      expect(await decisionOf(line), line).toBe('ask');
    }
  });

  it('kubectl given a kubeconfig, or writing one, whose exec credential plugin runs a command', async () => {
    for (const line of [
      'kubectl --kubeconfig ./kc get pods',
      'kubectl --kubeconfig=./kc get pods',
      'kubectl get pods --kubeconfig ./kc',
      'oc --kubeconfig ./kc get pods',
      'kubectl config set-credentials me --exec-command=./evil.sh',
      'kubectl config set users.me.exec.command ./evil.sh',
      'oc config set-credentials me --exec-command=./evil.sh',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
    for (const line of ['kubectl config view', 'kubectl config get-contexts', 'kubectl set image deploy/x x=img:2', 'oc get pods']) {
      expect(await decisionOf(line), line).toBe('ask');
    }
  });


  it('a helm plugin, a gh extension or alias and an oc plugin, run for a first word that is none of their commands', async () => {
    for (const line of [
      // helm runs a plugin of $HELM_PLUGINS (~/.local/share/helm/plugins) as a command of its own, after its options too.
      'helm evil',
      'helm evil list',
      'helm -n ns evil',
      'helm --debug evil list',
      'helm --kube-context=x evil',
      'helm "$WORD"',
      // and a plugin's install hook, and a post-renderer
      'helm plugin install ./evil-plugin',
      'helm plugin update evil',
      'helm install x ./chart --post-renderer ./evil.sh',
      'helm template ./chart --post-renderer=./evil.sh',
      // gh runs an extension `gh-<word>` (~/.local/share/gh/extensions), or an alias, which may be a shell line.
      'gh evil',
      'gh co 12',
      'gh extension exec evil',
      'gh ext exec evil',
      'gh config set browser ./evil.sh',
      'gh "$WORD"',
      // oc runs `oc-<word>` or `kubectl-<word>` from PATH, and `oc observe … -- cmd` a command for each change.
      'oc evil',
      'oc observe services -- ./evil.sh',
    ]) {
      expect(await decisionOf(line), line).toBe(`ask naming ${noDelete.id}`);
    }
    for (const line of [
      'helm list',
      'helm ls -A',
      'helm -n ns list',
      'helm --namespace ns status x',
      'helm --debug list',
      'helm install x ./chart',
      'helm upgrade --install x ./chart -f values.yaml',
      'helm plugin list',
      'helm repo add x https://example.com/charts',
      'gh pr list',
      'gh pr checkout 12',
      'gh issue view 3',
      'gh api repos/o/r',
      'gh extension list',
      'gh config get editor',
      'oc get pods',
      'oc new-project x',
      'oc whoami',
      'oc -n ns get pods',
    ]) {
      expect(await decisionOf(line), line).toBe('ask');
    }
  });
  it('their forms that run nothing stay plain', async () => {
    for (const line of [
      'socat - TCP:example.com:80',
      'socat TCP-LISTEN:8080,fork,reuseaddr TCP:localhost:80',
      'socat - UNIX-CONNECT:/tmp/x.sock',
      'socat -u OPEN:in.txt,rdonly STDOUT',
      'socat - /tmp/fifo',
      'socat -d -d -T 5 -b 8192 - TCP:example.com:80',
      'gio info notes.txt',
      'gio list src',
      'pandoc -o out.html in.md',
      'pandoc -f markdown -t html in.md',
      'ip addr show',
      'ip -br link',
      'ip netns list',
      'ip route get 1.1.1.1',
      'podman ps',
      'docker images',
      'kubectl get pods',
      'pm2 list',
      'pm2 logs app',
      'pm2 stop all',
      'forever list',
      'pdflatex doc.tex',
      'pdflatex -interaction=nonstopmode -no-shell-escape doc.tex',
      'lualatex -synctex=1 doc.tex',
      'ts',
      'git commit',
      '/usr/bin/ls -la',
      '/bin/echo hi',
    ]) {
      expect(await decisionOf(line), line).toBe('ask');
    }
  });
});
