import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isExactOnlyCommand, MemoryStore } from '@airlock/api';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempFolder } from '../tools/test-support';
import { readCommandLine } from './command-line-reader';
import { commandPathInside } from './command-path-inside';
import { evaluateRules } from './evaluate-rules';
import { context, prefix, rule, SESSION, terminal } from './rule-fixtures';
import { RuleBook } from './rule-book';
import { recordingTerminal } from './test-chat';

beforeAll(() => readCommandLine('true'));

// The sandbox lets a call read what the server's user can, the home folder included: under a rule for `cat`,
// `cat ~/.ssh/id_rsa` ran unasked and put the person's private key in the model's context.
describe('a program that prints the files it reads, named one outside the workspace', () => {
  const rules = [prefix('cat'), prefix('head'), prefix('grep'), prefix('diff'), prefix('ls'), prefix('wc'), prefix('cd')];
  const decide = async (command: string) => (await evaluateRules(terminal(command), rules, context)).decision;

  it.each([
    'cat ~/.ssh/id_rsa',
    'cat /etc/shadow',
    'cat $HOME/.ssh/id_rsa',
    'cat "$X"',
    'cat README.md ~/.ssh/id_rsa',
    'cat ../other/.env',
    'cat ~/.s*/id_rsa',
    'head -n 5 ../other/.env',
    'grep -r key ~/.aws',
    'grep --file=/home/me/patterns src',
    'diff /etc/shadow README.md',
    'cd sub && cat ../../x',
    // After `--` every word is a file, one that starts with a dash too (found in review).
    'cat -- -x/../../../etc/shadow',
    'grep -r -- key -d/../../../home/me/.aws',
  ])('asks about %j (found in review)', async (command) => {
    expect(await decide(command)).toBe('ask');
  });

  it.each(['cat README.md', 'cat -- -notes.md', 'cat src/a.ts src/b.ts', 'cat src/*.md', 'head -n 5 README.md', 'grep -rn TODO src', 'diff a.txt b.txt', 'ls ~/.ssh', 'wc -l ~/.bashrc'])(
    'allows %j',
    async (command) => {
      expect(await decide(command)).toBe('allow');
    },
  );

  it('says which word leads out', async () => {
    expect(await evaluateRules(terminal('cat ~/.ssh/id_rsa'), rules, context)).toMatchObject({ decision: 'ask', within: rules[0], leadsOut: { kind: 'named', text: '~/.ssh/id_rsa' } });
  });

  it('with links looked up, a path through a link that leads out is asked about, as the file it leads to', async () => {
    await using folder = await tempFolder();
    const workspace = path.join(folder.path, 'ws');
    const home = path.join(folder.path, 'home');
    await mkdir(path.join(workspace, 'docs'), { recursive: true });
    await mkdir(path.join(home, '.ssh'), { recursive: true });
    await writeFile(path.join(workspace, 'docs', 'a.md'), 'a\n');
    await writeFile(path.join(home, '.ssh', 'id_rsa'), 'key\n');
    await symlink('../home/.ssh', path.join(workspace, 'keys'));
    const judge = async (command: string) => (await evaluateRules(terminal(command), rules, { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace) })).decision;
    expect(await judge('cat keys/id_rsa')).toBe('ask');
    expect(await judge('grep -r BEGIN keys')).toBe('ask');
    expect(await judge('cat docs/a.md')).toBe('allow');
    expect(await judge('cat docs/*.md')).toBe('allow');
  });

  describe('more programs that print, pack or split the files they are named (found in review)', () => {
    const more = ['shuf', 'look', 'bat', 'hexyl', 'gzip', 'xz', 'zstd', 'zip', 'unzip', '7z', 'split', 'uuencode', 'ugrep', 'bzgrep', 'colordiff', 'dd', 'yq', 'highlight', 'pygmentize', 'enscript', 'dos2unix', 'gojq', 'jaq'].map((name) => prefix(name));
    const judge = async (command: string) => (await evaluateRules(terminal(command), more, context)).decision;

    it.each([
      'shuf /etc/shadow',
      'look root /etc/shadow',
      'bat ~/.ssh/id_rsa',
      'hexyl ~/.ssh/id_rsa',
      'gzip -c ~/.ssh/id_rsa',
      'gzip -k ~/.bashrc',
      'xz -dc ../other/x.xz',
      'zstd -c ~/.ssh/id_rsa',
      'zip - ~/.ssh/id_rsa',
      'zip -r keys.zip ~/.ssh',
      'unzip -p ../other/x.zip',
      '7z a keys.7z ~/.ssh',
      'split -b 1k ~/.ssh/id_rsa part',
      'uuencode ~/.ssh/id_rsa key',
      'ugrep -r key ~/.aws',
      'bzgrep key /var/backups/x.bz2',
      'colordiff ~/.ssh/id_rsa README.md',
      'dd if=/etc/shadow',
      'dd if=~/.ssh/id_rsa of=key',
      'dd if=$HOME/.ssh/id_rsa',
      'dd bs=1 if=../other/.env',
      // dd writes its `of=` file, over one of the person's too (found in review).
      'dd if=x of=/home/me/.bashrc',
      'dd if=data.bin of=~/.ssh/authorized_keys conv=notrunc',
      'dd of=../other/x',
      'dd if=data.bin of=$HOME/.profile',
      'dd if=data.bin of=/dev/sda',
      'yq . ~/.kube/config',
      `yq -n 'load_str("/etc/shadow")'`,
      `yq '.a = load("x.yaml")' b.yaml`,
      'yq --from-file=q.yq a.yaml',
      'highlight ~/.ssh/id_rsa',
      'pygmentize ~/.ssh/id_rsa',
      'enscript -p - ~/.ssh/id_rsa',
      'dos2unix -n ~/.ssh/id_rsa key',
      "gojq -n --rawfile k /etc/shadow '$k'",
      "jaq -n --rawfile k ~/.ssh/id_rsa '$k'",
      'gojq . ~/.aws/x.json',
    ])('asks about %j (failing before)', async (command) => {
      expect(await judge(command)).toBe('ask');
    });

    it.each(['shuf -n 1 words.txt', 'bat README.md', 'gzip -c build/app.js', 'zip -r out.zip src', 'unzip -l dist.zip', 'split -b 1k big.log part', 'ugrep -rn TODO src', 'dd if=data.bin bs=1 count=4', 'dd if=data.bin of=/dev/null', 'dd if=data.bin of=out/copy.bin', 'dd if=data.bin of=/dev/stdout', "yq '.a.b' config.yaml", 'gojq .name package.json', 'jaq -r .version package.json', 'pygmentize src/a.py'])(
      'allows %j',
      async (command) => {
        expect(await judge(command)).toBe('allow');
      },
    );
  });

  // yq's lexer takes `load` under other spellings, its alias before or after (`strload`, `xml_load`, `loadxml`), and
  // its system operator runs a command once an option enables it.
  describe('yq loading a file or running a command under its other spellings (found in review)', () => {
    const judge = async (command: string) => (await evaluateRules(terminal(command), [prefix('yq')], context)).decision;

    it.each([
      `yq -n 'strload("/etc/shadow")'`,
      `yq -n 'loadstr("/etc/shadow")'`,
      `yq -n 'str_load("/etc/shadow")'`,
      `yq -n 'xml_load("/etc/shadow")'`,
      `yq -n 'xmlload("/etc/shadow")'`,
      `yq -n 'loadxml("/etc/shadow")'`,
      `yq -n 'loadbase64("/etc/shadow")'`,
      `yq -n 'load_props ("/etc/shadow")'`,
      `yq -n 'LOAD("/etc/shadow")'`,
      `yq -n 'eval("lo" + "ad_str(\\"/etc/shadow\\")")'`,
      `yq --security-enable-system-operator -n 'system("sh"; ["-c","id"])'`,
      `yq --security-enable-system-operator=true -n 'system("id")'`,
      `yq --security-enable-sys -n 'system("id")'`,
      // `-s`/`--split-exp` writes each result to a file the expression names, anywhere (found in review).
      `yq -s '"/home/me/.config/gh/hosts"' x.yaml`,
      `yq -Ps '"../other/x"' x.yaml`,
      `yq --split-exp '.name' x.yaml`,
      `yq --split-exp='.name' x.yaml`,
    ])('asks about %j (failing before)', async (command) => {
      expect(await judge(command)).toBe('ask');
    });

    // The yq that wraps jq hands it the options it does not know: `-L/tmp/x` and an import's search path loaded
    // /tmp/x/data.json into the output (found in review, with the real program).
    it.each([
      `yq -n -L/home/me 'import "data" as $d; $d'`,
      `yq -n 'import "data" as $d {search: "/home/me"}; $d'`,
      `yq -n 'include "x"; .'`,
      'yq -n -f q.jq',
    ])('asks about %j, as jq would be (failing before)', async (command) => {
      expect(await judge(command)).toBe('ask');
    });

    it.each([`yq -ojson '.a' config.yaml`, `yq -pcsv '.a' data.csv`, `yq -o json -P '.a' config.yaml`, `yq '.downloads[0]' config.yaml`, `yq -n '"a" | length'`, `yq '.a | select(.b)' x.yaml`])('allows %j', async (command) => {
      expect(await judge(command)).toBe('allow');
    });
  });

  // A list of names is read from a file or the program's input, whose text the rule cannot see: `xz -c --files=names.txt
  // | xz -dc` printed the private key names.txt named.
  describe('a list of the names to read, from a file or the input (found in review)', () => {
    const listing = ['xz', 'zstd', 'strings', 'ar', '7z', 'ack', 'tar', 'bsdtar', 'pax', 'cpio', 'echo'].map((name) => prefix(name));
    const judge = async (command: string) => (await evaluateRules(terminal(command), listing, context)).decision;

    it.each([
      'xz -c --files=names.txt',
      'xz -c --files0=names.txt',
      'xz -c --files names.txt',
      'echo /home/me/.ssh/id_rsa | xz -c --files | xz -dc',
      'zstd -c --filelist names.txt',
      'zstd -c --filelist=names.txt',
      'strings @args.txt',
      'ar rc keys.a @args.txt',
      '7z a out.7z @names.txt',
      "7z a out.7z '-ir!/home/me/.ssh/id_rsa'",
      '7z a -so x.7z -i!/home/me/.ssh/id_rsa',
      "7z a -so x.7z '-xr0!../other'",
      '7z a -so x.7z -i@names.txt',
      '7z a -so x.7z -IR@names.txt',
      'ack --files-from=names.txt .',
      'ack --files-f names.txt key',
      'ack -x key',
      'tar -cf - -T names.txt',
      'tar -cf - --files-from=names.txt',
      'tar cfT - names.txt',
      'bsdtar -cf - -T names.txt',
      'bsdtar -cf - ~/.ssh',
      'pax -w /home/me/.ssh',
      'pax -w',
      'pax -rw . out',
      'cpio -o',
      'cpio -i',
    ])('asks about %j (failing before)', async (command) => {
      expect(await judge(command)).toBe('ask');
    });

    it.each(['xz -c notes.txt', 'zstd -c --fast notes.txt', 'strings a.out', 'ar t lib.a', '7z a out.7z src', "7z a out.7z '-ir!src/*.ts'", 'ack -i todo src', 'tar -cf - src', 'pax -f out.pax', 'cpio -it'])(
      'allows %j',
      async (command) => {
        expect(await judge(command)).toBe('allow');
      },
    );
  });

  it('7z extracting into a folder outside the workspace, named attached to -o, is asked about (found in review)', async () => {
    // `7z x a.7z -o/home/me/.ssh` writes what the archive holds there, over the person's files too.
    const judge = async (command: string) => (await evaluateRules(terminal(command), [prefix('7z')], context)).decision;
    for (const command of ['7z x a.7z -o/home/me/.ssh', '7z x a.7z -O../other', '7z e a.7z -o~']) {
      expect(await judge(command), command).toBe('ask');
    }
    expect(await judge('7z x a.7z -oout')).toBe('allow');
  });

  // A file a short option names, attached (`-o/home/me/.bashrc`) or the next word, is read or written as an operand
  // is: `pygmentize -o/home/me/.bashrc README.md` wrote over the person's file under a rule for pygmentize.
  describe('a file a short option names, attached (found in review)', () => {
    const programs = ['pygmentize', 'enscript', 'a2ps', 'highlight', 'grep', 'zgrep', 'rg', 'ugrep', 'iconv', 'uudecode', 'shuf', 'sdiff', 'csplit', 'ptx', 'hexdump', 'zstd', 'brotli', 'unzip', 'xsv', 'glow'];
    const judge = async (command: string) => (await evaluateRules(terminal(command), programs.map((name) => prefix(name)), context)).decision;

    it.each([
      'pygmentize -o/home/me/.bashrc README.md',
      'pygmentize -f html -o -/../../x README.md',
      'pygmentize -f html -O full,cssfile=/home/me/.bashrc -o out.html README.md',
      'pygmentize -f html -Ofull=1,cssfile=/home/me/.bashrc -o out.html README.md',
      "pygmentize -f html -P 'cssfile=../other/x.css' README.md",
      'enscript -p/home/me/.bashrc README.md',
      'enscript -qp/home/me/.bashrc README.md',
      'enscript -o../other/out.ps README.md',
      'a2ps -o/home/me/.bashrc README.md',
      'highlight -o/home/me/.bashrc README.md',
      'highlight -i/home/me/.ssh/id_rsa',
      'highlight -e/home/me/.ssh/id_rsa README.md',
      'highlight -c/home/me/.bashrc README.md',
      'highlight -d/home/me README.md',
      'grep -f/home/me/.ssh/id_rsa README.md',
      'grep -rf/home/me/patterns src',
      'zgrep -f/home/me/patterns x.gz',
      'rg -f/home/me/patterns src',
      'ugrep -f/home/me/patterns src',
      'iconv -f utf-8 -t ascii -o/home/me/.bashrc README.md',
      'uudecode -o/home/me/.bashrc x.uu',
      'shuf -o/home/me/.bashrc words.txt',
      'sdiff -o/home/me/.bashrc a.txt b.txt',
      'csplit -f/home/me/.bash x.txt 2',
      'ptx -i/home/me/.ssh/id_rsa x.txt',
      'hexdump -f/home/me/.ssh/id_rsa README.md',
      'zstd -D/home/me/dict x',
      'zstd x -o/home/me/.bashrc',
      'brotli -o/home/me/.bashrc x',
      'unzip x.zip -d/home/me',
      'unzip -qd/home/me x.zip',
      'xsv select a x.csv -o/home/me/.bashrc',
      'glow -s/home/me/.ssh/id_rsa README.md',
    ])('asks about %j (failing before)', async (command) => {
      expect(await judge(command)).toBe('ask');
    });

    it.each([
      'pygmentize -o out.html -f html README.md',
      'pygmentize -oout.html README.md',
      'pygmentize -f html -O full,style=monokai,cssfile=out.css -o out.html README.md',
      'enscript -pout.ps README.md',
      'grep -e/etc/ -f patterns.txt src',
      'grep -m5 -rn TODO src',
      'rg -e/home/x -rfoo src',
      'iconv -f utf-8 -t ascii -o out.txt README.md',
      'shuf -n1 -o out.txt words.txt',
      'csplit -fpart x.txt 2',
      'unzip -o x.zip -d out',
    ])('allows %j', async (command) => {
      expect(await judge(command)).toBe('allow');
    });
  });

  // An option that takes the next word as its value takes it whatever it starts with: `xmllint --output
  // -x/../../out.xml` wrote one folder above where it ran (checked with the real program), and `grep --file -x/../…`
  // read its patterns there.
  describe("an option's value in the next word, starting with a dash (found in review)", () => {
    const programs = ['xmllint', 'grep', 'highlight', 'iconv', 'cat'];
    const judge = async (command: string) => (await evaluateRules(terminal(command), programs.map((name) => prefix(name)), context)).decision;

    it.each([
      'xmllint --output -/../../home/me/.bashrc data.xml',
      'xmllint -o -x/../../../home/me/.bashrc data.xml',
      'xmllint --format --output -x/../../other/out.xml data.xml',
      'grep --file -/../../../etc/shadow src',
      'grep -r --file --/../../../home/me/.ssh/id_rsa src',
      'highlight --output -/../../home/me/.bashrc README.md',
      'highlight --style-infile -x/../../../home/me/.ssh/id_rsa README.md',
      'iconv -f utf-8 -t ascii --output -/../../home/me/.bashrc README.md',
    ])('asks about %j (failing before)', async (command) => {
      expect(await judge(command)).toBe('ask');
    });

    it.each(['xmllint --format --output out.xml data.xml', 'xmllint --output -x/out.xml data.xml', 'grep --file -patterns.txt src', 'grep -rn --color=never -e TODO src', 'cat -n -- -notes.md', 'iconv -f utf-8 -t ascii --output out.txt README.md'])(
      'allows %j',
      async (command) => {
        expect(await judge(command)).toBe('allow');
      },
    );
  });

  // The binary tools dump any file: `objdump -s -b binary ~/.ssh/id_rsa` printed the key in hex and text, `objcopy
  // -I binary -O binary` copied it, an `@file` of arguments printed its words in the errors of `nm` and `size`, and
  // `objdump -S` printed the lines of whatever file an object of the workspace names as its source (checked with
  // the real programs).
  describe('the binary dumpers (found in review)', () => {
    const programs = ['objdump', 'readelf', 'nm', 'objcopy', 'strip', 'addr2line', 'size', 'c++filt', 'llvm-objdump', 'llvm-readelf', 'llvm-nm', 'eu-readelf'];
    const judge = async (command: string) => (await evaluateRules(terminal(command), programs.map((name) => prefix(name)), context)).decision;

    it.each([
      'objdump -s -b binary /home/me/.ssh/id_rsa',
      'objdump -d ../other/a.o',
      'readelf -x .data /home/me/bin/tool',
      'nm /home/me/bin/tool',
      'nm @args.txt',
      'objcopy -I binary -O binary /home/me/.ssh/id_rsa key.bin',
      'objcopy --add-section .k=/home/me/.ssh/id_rsa a.o b.o',
      'objcopy --dump-section=.text=/home/me/.bashrc a.o',
      'strip -o/home/me/.bashrc a.o',
      'addr2line -e/home/me/bin/tool 0x10',
      'size @args.txt',
      'c++filt @args.txt',
      'objdump -S build/a.o',
      'objdump -dS build/a.o',
      'objdump --source-comment build/a.o',
      'objdump --sou build/a.o',
      'objdump -d *',
      'llvm-objdump -s /home/me/.ssh/id_rsa',
      'llvm-objdump --source build/a.o',
      'llvm-readelf -x .data ../other/a.o',
      'llvm-nm @args.txt',
      'eu-readelf -x .data /home/me/bin/tool',
    ])('asks about %j (failing before)', async (command) => {
      expect(await judge(command)).toBe('ask');
    });

    it.each([
      'objdump -d build/a.o',
      'objdump -dj.text build/a.o',
      'objdump -d build/*.o',
      'objdump -h -j .Sdata build/a.o',
      'readelf -h a.out',
      'nm -C build/lib.a',
      'objcopy -O binary build/a.elf build/a.bin',
      'objcopy --add-section .note=build/note.bin a.o b.o',
      'strip -o build/a.stripped build/a.o',
      'size /usr/bin/ls',
      'c++filt _Z1fv',
    ])('allows %j', async (command) => {
      expect(await judge(command)).toBe('allow');
    });
  });

  // A workspace XML file's entities, XInclude elements, DTD or schema name any file, which these options have xmllint
  // load and print (`<!ENTITY s SYSTEM "/etc/shadow">` with `--noent`; checked with the real program), and `--shell`
  // reads commands from the input (`load`, `write`).
  describe('xmllint options that load what a document names, and xsltproc, whose stylesheet reads and writes any file (found in review)', () => {
    const judge = async (command: string) => (await evaluateRules(terminal(command), [prefix('xmllint')], context)).decision;

    it.each([
      'xmllint --noent data.xml',
      'xmllint -noent data.xml',
      'xmllint data.xml --noent',
      'xmllint --xinclude data.xml',
      'xmllint --noxincludenode data.xml',
      'xmllint --loaddtd data.xml',
      'xmllint --noout --dtdattr data.xml',
      'xmllint --valid --noout data.xml',
      'xmllint --postvalid data.xml',
      'xmllint --dtdvalid data.dtd data.xml',
      "xmllint --dtdvalidfpi '-//X//DTD//EN' data.xml",
      'xmllint --catalogs data.xml',
      'xmllint --schema data.xsd data.xml',
      'xmllint --relaxng data.rng data.xml',
      'xmllint --schematron data.sch data.xml',
      'xmllint --c14n data.xml',
      'xmllint --c14n11 data.xml',
      'xmllint --exc-c14n data.xml',
      'xmllint --shell data.xml',
    ])('asks about %j (failing before)', async (command) => {
      expect(await judge(command)).toBe('ask');
    });

    it.each(['xmllint --noout data.xml', 'xmllint --format --output out.xml data.xml', "xmllint --xpath 'count(a)' data.xml", 'xmllint --noout src/*.xml', 'xmllint --html --noout page.html'])(
      'allows %j',
      async (command) => {
        expect(await judge(command)).toBe('allow');
      },
    );

    it('xsltproc, whose stylesheet reads any file (document()) and writes one (exsl:document), is exact-only', async () => {
      expect(isExactOnlyCommand('xsltproc')).toBe(true);
      expect(() => prefix('xsltproc')).toThrow(/must be exact/);
      const stored = { ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: ['xsltproc'], exact: false } };
      expect((await evaluateRules(terminal('xsltproc page.xsl data.xml'), [stored], context)).decision).toBe('ask');
      expect((await evaluateRules(terminal('xsltproc page.xsl data.xml'), [prefix('xsltproc page.xsl data.xml', { exact: true })], context)).decision).toBe('allow');
    });
  });

  // A cross build installs the binary tools under its target's name (`x86_64-linux-gnu-objdump`, `arm-none-eabi-nm`):
  // the same programs, which dumped a key and loaded a plugin under a rule for that name.
  it('the binary tools under a cross build target name are judged as the tools are (found in review)', async () => {
    const judge = async (rule: string, command: string) => (await evaluateRules(terminal(command), [prefix(rule)], context)).decision;
    expect(await judge('x86_64-linux-gnu-objdump', 'x86_64-linux-gnu-objdump -s -b binary /home/me/.ssh/id_rsa')).toBe('ask');
    expect(await judge('x86_64-linux-gnu-nm', 'x86_64-linux-gnu-nm --plugin ./p.so a.o')).toBe('ask');
    expect(await judge('arm-none-eabi-strings', 'arm-none-eabi-strings @args.txt')).toBe('ask');
    expect(await judge('x86_64-linux-gnu-gcc-ar', 'x86_64-linux-gnu-gcc-ar --plugin ./p.so rc lib.a a.o')).toBe('ask');
    expect(await judge('x86_64-linux-gnu-objdump', 'x86_64-linux-gnu-objdump -d build/a.o')).toBe('allow');
    expect(await judge('arm-none-eabi-nm', 'arm-none-eabi-nm -C build/app.elf')).toBe('allow');
  });

  // `ug` is ugrep reading a `.ugrep` config of the working folder (or the home folder) by itself, whose `filter=`,
  // `pager=` and `view=` lines run commands: a call may have written one in the workspace just before.
  it('ug and ug+, which load a .ugrep config by themselves, are exact-only, and ugrep+ is judged as ugrep (found in review)', async () => {
    for (const name of ['ug', 'ug+']) {
      expect(isExactOnlyCommand(name), name).toBe(true);
      expect(() => prefix(name), name).toThrow(/must be exact/);
    }
    const stored = { ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: ['ug'], exact: false } };
    expect((await evaluateRules(terminal('ug -rn TODO src'), [stored], context)).decision).toBe('ask');
    expect((await evaluateRules(terminal('ug -rn TODO src'), [prefix('ug -rn TODO src', { exact: true })], context)).decision).toBe('allow');
    // ugrep+ is ugrep with filters for documents: judged as ugrep is.
    const plus = async (command: string) => (await evaluateRules(terminal(command), [prefix('ugrep+')], context)).decision;
    for (const command of ['ugrep+ -r key /home/me/.aws', 'ugrep+ --pager=less TODO src', 'ugrep+ -f/home/me/patterns src']) {
      expect(await plus(command), command).toBe('ask');
    }
    expect(await plus('ugrep+ -rn TODO src')).toBe('allow');
  });

  // fx runs the words after the file as JavaScript: `fx data.json 'x => require("fs").readFileSync("/etc/shadow", "utf8")'`.
  it('fx, which runs its arguments as JavaScript, is exact-only (found in review)', async () => {
    expect(isExactOnlyCommand('fx')).toBe(true);
    expect(() => prefix('fx')).toThrow(/must be exact/);
    const stored = { ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: ['fx'], exact: false } };
    const code = `fx data.json 'x => require("fs").readFileSync("/etc/shadow", "utf8")'`;
    expect((await evaluateRules(terminal(code), [stored], context)).decision).toBe('ask');
    expect((await evaluateRules(terminal('fx data.json .name'), [stored], context)).decision).toBe('ask');
    expect((await evaluateRules(terminal('fx data.json .name'), [prefix('fx data.json .name', { exact: true })], context)).decision).toBe('allow');
  });

  // Being exact-only decides fx and qsv before the files a call reads are judged, so neither is among the programs
  // judged as cat is: a prefix rule for either covers no call, whatever it reads or writes, and an exact rule the one
  // call it names, wherever its files lie (the same before they were taken out of that list).
  it('fx and qsv are decided by being exact-only, before any file they are given is judged', async () => {
    const stored = (token: string) => ({ ...prefix('ls'), match: { kind: 'command-prefix' as const, tokens: [token], exact: false } });
    for (const [token, command] of [
      ['fx', 'fx data.json .name'],
      ['fx', 'fx /home/me/.aws/credentials .name'],
      ['qsv', 'qsv stats data.csv'],
      ['qsv', 'qsv stats -o /home/me/.bashrc data.csv'],
      ['qsv', 'qsv stats -o/home/me/.bashrc data.csv'],
      ['qsv', 'qsv cat rows /home/me/secrets.csv'],
    ] as const) {
      expect((await evaluateRules(terminal(command), [stored(token)], context)).decision, command).toBe('ask');
    }
    for (const command of ['fx data.json .name', 'fx /etc/hosts .name', 'qsv stats -o out.csv data.csv', 'qsv stats -o/tmp/out.csv data.csv']) {
      expect((await evaluateRules(terminal(command), [prefix(command, { exact: true })], context)).decision, command).toBe('allow');
    }
  });

  it('a rule that names the file outside covers it', async () => {
    expect((await evaluateRules(terminal('cat /etc/hosts'), [prefix('cat /etc/hosts')], context)).decision).toBe('allow');
  });

  // `ls`, `wc`, `du`, `date` and the checksums show names, sizes, times and hashes only, and stay covered wherever, but
  // for options that read a file and print what it holds (checked with GNU coreutils 9.1): `date -f ~/secret` printed
  // each line in an "invalid date" error, `wc --files0-from=/etc/passwd` and `du --files0-from=…` the whole file as a
  // name they could not open, `md5sum -c` and its kin the names a checksum list holds.
  describe('options of the programs covered wherever that print a file they read (found in review)', () => {
    const covered = ['date', 'wc', 'du', 'md5sum', 'sha256sum', 'b2sum', 'cksum', 'sort'].map((name) => prefix(name));
    const judge = async (command: string) => (await evaluateRules(terminal(command), covered, context)).decision;

    it.each([
      'date -f ~/secret',
      'date -f/home/me/secret',
      'date -uf /etc/shadow',
      'date --file=~/.ssh/id_rsa',
      'date --file ~/.ssh/id_rsa',
      'date --fi=/etc/shadow',
      'date -f "$X"',
      'wc --files0-from=/etc/passwd',
      'wc --files0-from /x',
      'wc -l --files0=../x',
      'wc --files0-from "$X"',
      'du --files0-from=../x',
      'du -s --files0-from ~/list',
      'md5sum -c /home/me/SHA256SUMS',
      'sha256sum --check ../other/SHA256SUMS',
      'b2sum -wc ~/sums',
      'cksum -c /etc/sums',
      // sort prints the files the list names: one in the workspace may name any.
      'sort --files0-from=names0',
      'sort --files0-from names0',
      'sort --fil=-',
    ])('asks about %j (failing before)', async (command) => {
      expect(await judge(command)).toBe('ask');
    });

    it.each([
      'date',
      'date -f -',
      'date -f dates.txt',
      'date --file=dates.txt',
      'date -r ~/.bashrc',
      'date -d tomorrow +%F',
      'wc -l ~/.bashrc',
      'wc --files0-from=names0',
      'wc --files0-from=-',
      'du -sh ~/.cache',
      'du --files0-from names0',
      'du -X /etc/excludes .',
      'md5sum ~/.bashrc',
      'sha256sum -c SHA256SUMS',
      'sha256sum --check -',
      'cksum /etc/hostname',
    ])('allows %j', async (command) => {
      expect(await judge(command)).toBe('allow');
    });

    it('says which word leads out', async () => {
      expect(await evaluateRules(terminal('date -f ~/secret'), covered, context)).toMatchObject({ decision: 'ask', leadsOut: { kind: 'named', text: '~/secret' } });
    });
  });

  // Checked with file 5.44: `file -f ~/.git-credentials` printed each line as a name it could not open, `file -m FILE`
  // (and `-C -m FILE`) each line of FILE in a warning, of each file of a list (`-m a:FILE`) or of a folder, links
  // followed. tree 2.1's `--fromfile` prints the lines of the files it is given as paths, `--hintro` and `--houtro`
  // copy a file into its HTML, and an `--infofile`'s comments are printed beside the names they match.
  describe('file and tree: options that print a file they read (found in review)', () => {
    const covered = [prefix('file'), prefix('tree')];
    const judge = async (command: string) => (await evaluateRules(terminal(command), covered, context)).decision;

    it.each([
      'file -f /home/me/.git-credentials',
      'file -f/home/me/.git-credentials',
      'file -bf ~/.git-credentials',
      'file --files-from /home/me/.git-credentials',
      'file --files-from=../x',
      'file --files=/home/me/x',
      'file -m /home/me/.git-credentials README.md',
      'file -m/home/me/x README.md',
      'file --magic-file=/home/me/x README.md',
      'file --mag ~/x README.md',
      'file -C -m /home/me/x',
      'file -Cm /home/me/x',
      'file -m README.md:/home/me/.git-credentials README.md',
      'file -m "$X" README.md',
      'file "$X" README.md',
      'tree --fromfile /home/me/list',
      'tree --fromfile list.txt ~/.git-credentials',
      'tree --fromtabfile ../x',
      'tree --fromfile -a -- /home/me/x',
      'tree -H . --hintro ~/.ssh/id_rsa',
      'tree -H . --houtro=/etc/shadow',
      // tree takes a word that starts with the option's name for it, its value in the next word unless an `=` follows the name.
      'tree -H . --hintroX ~/.ssh/id_rsa',
      'tree -H . --hintroX=a ~/.ssh/id_rsa',
      'tree --info --infofile /home/me/.netrc',
    ])('asks about %j (failing before)', async (command) => {
      expect(await judge(command)).toBe('ask');
    });

    it.each([
      'file README.md',
      'file /etc/hostname ~/.bashrc',
      'file -f names.txt',
      'file -f -',
      'file -m magic/mine.magic README.md',
      'file -m magic:more.magic README.md',
      'file -C -m magic/mine.magic',
      'file -P bytes=4096 -e soft -F : /bin/ls',
      'file --mime-type -b ~/x.png',
      'tree',
      'tree -L 2 ~/.config',
      'tree --fromfile list.txt',
      'tree --fromfile',
      "tree -P '*.ts' -I node_modules src",
      'tree -H . src',
      'tree --charset ascii --sort=name --filelimit 100 src',
      'tree --info src',
    ])('allows %j', async (command) => {
      expect(await judge(command)).toBe('allow');
    });

    it('file reads every file of a magic folder, links followed: one that leads out is asked about', async () => {
      await using root = await tempFolder();
      const workspace = path.join(root.path, 'ws');
      await mkdir(path.join(workspace, 'magic'), { recursive: true });
      await mkdir(path.join(workspace, 'other'));
      await writeFile(path.join(root.path, 'secret'), 'https://me:s3cret@example.com\n');
      await writeFile(path.join(workspace, 'magic', 'mine'), '0 string x X\n');
      const decide = async (command: string) => (await evaluateRules(terminal(command), covered, { sessionId: SESSION, workspace, leadsInside: commandPathInside(workspace) })).decision;
      expect(await decide('file -m magic README.md')).toBe('allow');
      await symlink(path.join(root.path, 'secret'), path.join(workspace, 'magic', 'key'));
      expect(await decide('file -m magic README.md')).toBe('ask');
      expect(await decide('file -m other:magic README.md')).toBe('ask');
      expect(await decide('file -m other README.md')).toBe('allow');
    });
  });
});

// `tar -xf vendor.tar && cat link`, the archive holding `link -> ~/.ssh/id_rsa`: the rules "Always allow" proposes for
// `tar -xf vendor.tar` and `cat README.md` covered the line, its operands judged as the file system is before the line
// runs, and cat printed the key (found in review). tar -x, unzip, cp -a, mv, a checkout leave links no rule saw, and
// cannot print a file themselves.
describe('a program that prints the files it is named, after a command on the line that may have changed the file system (found in review)', () => {
  it('the rules proposed for `tar -xf vendor.tar` and `cat README.md` do not cover `tar -xf vendor.tar && cat link`', async () => {
    await using root = await tempFolder();
    const workspace = path.join(root.path, 'ws');
    const staging = path.join(root.path, 'staging');
    await mkdir(workspace);
    await mkdir(staging);
    await writeFile(path.join(root.path, 'id_rsa'), 'PRIVATE KEY\n');
    await writeFile(path.join(workspace, 'README.md'), 'hi\n');
    await symlink(path.join(root.path, 'id_rsa'), path.join(staging, 'link'));
    execFileSync('tar', ['-cf', path.join(workspace, 'vendor.tar'), 'link'], { cwd: staging });
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
    const tool = recordingTerminal([]);
    const proposed = [];
    for (const command of ['tar -xf vendor.tar', 'cat README.md']) {
      const { draft } = await rules.propose(SESSION, { toolName: 'terminal', arguments: { command } }, 'workspace', tool);
      proposed.push(draft.match);
      await rules.add(draft);
    }
    expect(proposed).toStrictEqual([
      { kind: 'command-prefix', tokens: ['tar', '-xf', 'vendor.tar'], exact: true },
      { kind: 'command-prefix', tokens: ['cat'], exact: false },
    ]);
    const evaluate = async (command: string) => (await rules.evaluate(SESSION, { id: 'c', name: 'terminal', arguments: { command } }, tool))?.effect;
    for (const line of ['tar -xf vendor.tar && cat link', 'tar -xf vendor.tar; cat link', 'tar -xf vendor.tar | cat link']) expect(await evaluate(line), line).toBe('ask');
    expect(await evaluate('tar -xf vendor.tar && cat README.md')).toBe('ask');
    expect(await evaluate('cat README.md')).toBe('allow');
    expect(await evaluate('tar -xf vendor.tar')).toBe('allow');
  });

  const rules = [
    ...['tar -xf vendor.tar', './build.sh'].map((line) => prefix(line, { exact: true })),
    ...['unzip', 'cp', 'mv', 'git checkout', 'cat', 'head', 'tail', 'grep', 'diff', 'dd', 'date', 'wc', 'ls', 'npm test', 'npm run build', 'make test', 'pytest', 'cargo test', 'go test'].map((words) => prefix(words)),
  ];
  const decide = async (command: string) => (await evaluateRules(terminal(command), rules, context)).decision;

  it.each([
    'tar -xf vendor.tar && cat link',
    'tar -xf vendor.tar; cat link',
    'tar -xf vendor.tar | cat link',
    'unzip x.zip && cat link',
    'tar -xf vendor.tar && head link',
    'tar -xf vendor.tar && tail -n 5 link',
    'tar -xf vendor.tar && grep -r . link',
    'tar -xf vendor.tar && grep -r key src',
    'tar -xf vendor.tar && diff a/notes c/notes',
    'tar -xf vendor.tar && dd if=link',
    'cp -a vendor/. . && cat link',
    'mv vendor/link . && cat link',
    'git checkout other && cat link',
    // The options of the programs covered wherever that print a file they read.
    'tar -xf vendor.tar && date -f link',
    'tar -xf vendor.tar && wc --files0-from=link',
    // One that runs while it does: in its pipeline, or after it in the background.
    'cat link | tar -xf vendor.tar',
    'cat link & tar -xf vendor.tar',
    // A command that runs code of the project's could have read the file itself; tar after it could not.
    'npm test && tar -xf vendor.tar && cat link',
    'npm test; cat link | tar -xf vendor.tar',
  ])('asks about %j (allowed before)', async (command) => {
    expect(await decide(command)).toBe('ask');
  });

  it.each([
    'cat a.txt && cat b.txt',
    'grep x a.txt | head',
    'ls && cat README.md',
    // A command that runs code of the project's (a test runner, a make target, a package script, a program of the
    // workspace) could have read and printed any file itself: what is printed after it is judged as it is now.
    'npm test 2>&1 | tail -n 20',
    'npm test && cat log',
    'npm run build && head -n 5 dist/out.txt',
    'make test && cat out.txt',
    'pytest | grep passed',
    'cargo test 2>&1 | tail -n 20',
    'go test ./... | grep FAIL',
    './build.sh && wc --files0-from=list',
  ])('allows %j', async (command) => {
    expect(await decide(command)).toBe('allow');
  });
});

// A rule for tee covered `echo x | tee ~/.bashrc`: tee reads nothing it is named, but writes there, as dd's `of=`
// does (found in review).
describe('tee, which writes the files it is named', () => {
  const rules = ['tee', 'echo'].map((words) => prefix(words));
  const decide = async (command: string) => (await evaluateRules(terminal(command), rules, context)).decision;

  it.each(['echo x | tee ~/.bashrc', 'echo x | tee /home/me/.profile', 'echo x | tee -a ../other/log', 'echo x | tee -- -x/../../../etc/x', 'echo x | tee "$X"'])(
    'asks about %j (allowed before)',
    async (command) => {
      expect(await decide(command)).toBe('ask');
    },
  );

  it.each(['echo x | tee log.txt', 'echo x | tee -a out/log /dev/stderr', 'echo x | tee /dev/null', 'echo x | tee'])('allows %j', async (command) => {
    expect(await decide(command)).toBe('allow');
  });
});

// Found in review: lines whose earlier command cannot leave a link were asked after a7b2e5b4. touch and truncate make
// or change regular files only, and `timeout 60 npm test` runs the project's code as `npm test` does, in the same
// folder and environment; a wrapper that may change either (`env -C sub`, `env PATH=…`, `stdbuf`) is not seen through.
describe('a program that prints the files it is named, after a command that cannot leave a link or runs the project code behind a wrapper', () => {
  const rules = [
    ...['timeout 60 npm test', 'nice -n 5 npm test', 'nohup npm test', 'time npm test', 'timeout 60 nice npm test', 'timeout 60 tar -xf vendor.tar', 'env -C sub npm test', 'env PATH=/tmp/bin npm test', 'stdbuf -oL npm test', 'tar -xf vendor.tar', "sed -i '1e ln -s ../id_rsa link' a.txt"].map((line) =>
      prefix(line, { exact: true }),
    ),
    ...['touch', 'truncate', 'ln', 'unzip', 'cp', 'cat', 'tail', 'npm test'].map((words) => prefix(words)),
  ];
  const decide = async (command: string) => (await evaluateRules(terminal(command), rules, context)).decision;

  it.each([
    'touch x && cat README.md',
    'touch -c -d 2020-01-01 a.txt && cat a.txt',
    'truncate -s 0 out.txt && cat README.md',
    'touch a.txt b.txt && cat a.txt b.txt',
    'timeout 60 npm test && cat out.txt',
    'timeout 60 npm test; tail -n 20 log.txt',
    'time npm test && cat out.txt',
    'nice -n 5 npm test && cat out.txt',
    'nohup npm test && cat out.txt',
    'timeout 60 nice npm test && cat out.txt',
  ])('allows %j (asked before)', async (command) => {
    expect(await decide(command)).toBe('allow');
  });

  it.each([
    'tar -xf vendor.tar && cat link',
    'touch x && tar -xf vendor.tar && cat link',
    'tar -xf vendor.tar && touch x && cat link',
    'unzip x.zip && cat link',
    'cp -a vendor/. . && cat link',
    'ln -s ~/.ssh/id_rsa l && cat l',
    'touch x && ln -s ../id_rsa link && cat link',
    'timeout 60 tar -xf vendor.tar && cat link',
    'env -C sub npm test && cat link',
    'env PATH=/tmp/bin npm test && cat link',
    'stdbuf -oL npm test && cat link',
    // sed's `e` command and `s///e` run a shell command, which may make a link.
    "sed -i '1e ln -s ../id_rsa link' a.txt && cat link",
  ])('asks about %j', async (command) => {
    expect(await decide(command)).toBe('ask');
  });
});

// The cost of the case above: git and find counted as commands that may change the file system, so lines an agent
// writes all day (`git log --oneline | head -20`, `find . -name '*.ts' | head -n 5`) were asked about under the rules
// "Always allow" proposes for their parts. git's commands that only read the repository, with no option that runs a
// program or writes a file and no global option that names another repository or config, and find without an action
// that writes or runs (`-delete`, `-exec`, `-fprint` …), change nothing a path may lead through.
describe('a program that prints the files it is named, after a command that only reads (git log, git status, find without an action)', () => {
  it('the rules "Always allow" proposes for the parts cover the lines', async () => {
    await using root = await tempFolder();
    const workspace = root.path;
    execFileSync('git', ['init', '-q'], { cwd: workspace });
    await writeFile(path.join(workspace, 'README.md'), 'hi\n');
    const rules = await RuleBook.open({ store: new MemoryStore(), workspace, log: () => undefined });
    const tool = recordingTerminal([]);
    const proposed = [];
    for (const command of ['git log --oneline', 'git diff', 'git status', 'head -20 README.md', 'tail -n 5 README.md', 'grep fix README.md', 'wc -l README.md', 'cat README.md', "find . -name '*.ts'", 'find src -type f']) {
      const { draft } = await rules.propose(SESSION, { toolName: 'terminal', arguments: { command } }, 'workspace', tool);
      proposed.push(draft.match);
      await rules.add(draft);
    }
    expect(proposed).toStrictEqual([
      { kind: 'command-prefix', tokens: ['git', 'log'], exact: false },
      { kind: 'command-prefix', tokens: ['git', 'diff'], exact: false },
      { kind: 'command-prefix', tokens: ['git', 'status'], exact: false },
      ...['head', 'tail', 'grep', 'wc', 'cat'].map((name) => ({ kind: 'command-prefix', tokens: [name], exact: false })),
      { kind: 'command-prefix', tokens: ['find', '.', '-name', '*.ts'], exact: true },
      { kind: 'command-prefix', tokens: ['find', 'src', '-type', 'f'], exact: true },
    ]);
    const evaluate = async (command: string) => (await rules.evaluate(SESSION, { id: 'c', name: 'terminal', arguments: { command } }, tool))?.effect;
    for (const line of [
      'git log --oneline | head -20',
      'git log | grep fix',
      'git diff | head -n 50',
      'git status && cat README.md',
      "find . -name '*.ts' | head -n 5",
      'find src -type f | wc -l',
    ]) {
      expect(await evaluate(line), line).toBe('allow');
    }
  });

  const rules = [
    ...[
      'git log --output=out.txt', 'git diff --ext-diff', 'git -c core.pager=cat log', 'git --git-dir=other/.git log', 'git -C sub log',
      'find . -delete', 'find . -name x -exec cp -a vendor/. . ;', 'find . -name x -execdir cp -a vendor/. . ;', 'find . -ok cp -a vendor/. . ;',
      'find . -okdir cp -a vendor/. . ;', 'find . -fprint f', 'find . -fprint0 f', 'find . -fprintf f %p', 'find . -fls f', 'find . -name -delete',
      'find src -type f', 'find . -maxdepth 2 -type d -print0', 'git branch -a', 'git remote -v', 'xargs cp -a vendor/. .',
    ].map((line) => prefix(line, { exact: true })),
    rule({ match: { kind: 'command-prefix', tokens: ['find', '.', '-name', '*.ts'], exact: true } }),
    ...[
      'git checkout', 'git apply', 'git stash', 'git log', 'git diff', 'git status', 'git show', 'git rev-parse', 'git ls-files', 'git blame',
      'git shortlog', 'git describe', 'git grep', 'cp', 'unzip', 'cat', 'head', 'tail', 'grep', 'egrep', 'wc',
    ].map((words) => prefix(words)),
  ];
  const decide = async (command: string) => (await evaluateRules(terminal(command), rules, context)).decision;

  it.each([
    'git log --oneline | head -20',
    'git log | grep fix',
    'git log -n 5 --format=%s | grep -c fix',
    'git diff | head -n 50',
    'git diff --stat HEAD~1 | tail -n 3',
    'git status && cat README.md',
    'git status --porcelain | wc -l',
    'git show HEAD --stat | head -n 30',
    'git rev-parse HEAD && cat README.md',
    'git ls-files | grep test',
    'git blame src/a.ts | head',
    'git shortlog -sn | head -5',
    'git describe --tags && cat CHANGELOG.md',
    'git grep -n TODO | head',
    'git branch -a && cat README.md',
    'git remote -v && cat README.md',
    "find . -name '*.ts' | head -n 5",
    'find src -type f | wc -l',
    'find . -maxdepth 2 -type d -print0 | wc -c',
    'git status; find src -type f | wc -l && cat README.md',
  ])('allows %j (asked before)', async (command) => {
    expect(await decide(command)).toBe('allow');
  });

  it.each([
    'git checkout x && cat link',
    'git checkout x | cat link',
    'git apply p && cat link',
    'git stash pop && cat link',
    'git log --output=out.txt && cat link',
    'git diff --ext-diff && cat link',
    'git -c core.pager=cat log && cat link',
    'git --git-dir=other/.git log && cat link',
    'git -C sub log && cat link',
    'git log && git checkout x && cat link',
    'find . -delete | cat link',
    'find . -name x -exec cp -a vendor/. . \\; && cat link',
    'find . -name x -execdir cp -a vendor/. . \\; && cat link',
    'find . -ok cp -a vendor/. . \\; && cat link',
    'find . -okdir cp -a vendor/. . \\; && cat link',
    'find . -fprint f && cat f',
    'find . -fprint0 f && cat f',
    'find . -fprintf f %p && cat f',
    'find . -fls f && cat f',
    'find . -name -delete && cat link',
    // What find prints may be handed to a program that changes the file system.
    'find . -name x | xargs cp -a vendor/. . && cat link',
  ])('asks about %j', async (command) => {
    expect(await decide(command)).toBe('ask');
  });

  // After a command that may change the file system (unzip), a reader named no file reads only its input: its counts
  // and its pattern are no path (`unzip x.zip | tail -n 5` was asked about, its `5` judged as a link that may lead out).
  it.each([
    'unzip x.zip | tail -n 5',
    'unzip x.zip | tail -n +3',
    'unzip x.zip | tail -c5',
    'unzip x.zip | tail --lines=5',
    'unzip x.zip | head -20',
    'unzip x.zip | head -q -n 20',
    'unzip x.zip 2>&1 | grep -c inflating',
    'unzip x.zip | grep -iv error',
    "unzip x.zip | egrep --color=never 'a|b'",
    'unzip x.zip | grep error | tail -n 3',
  ])('allows %j (asked before)', async (command) => {
    expect(await decide(command)).toBe('allow');
  });

  it.each([
    'unzip x.zip | tail -n 5 link',
    'unzip x.zip | tail -n 5 -- link',
    'unzip x.zip | tail -n link',
    'unzip x.zip | head -20 link',
    'unzip x.zip | head --lin=5 link',
    'unzip x.zip | grep key link',
    'unzip x.zip | grep -r key',
    'unzip x.zip | grep -R key',
    'unzip x.zip | grep -ir key',
    'unzip x.zip | grep --rec key',
    'unzip x.zip | grep -d recurse key',
    'unzip x.zip | grep --directories=recurse key',
    'unzip x.zip | grep -f link',
    'unzip x.zip | grep --file=link',
    'unzip x.zip | grep -e key link',
    'unzip x.zip | grep -- key link',
    'unzip x.zip | grep key "$X"',
    'unzip x.zip | grep key *',
  ])('asks about %j', async (command) => {
    expect(await decide(command)).toBe('ask');
  });
});
