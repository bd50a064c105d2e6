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
    ]) {
      expect(await decisionOf(line), line).toBe('ask');
    }
  });
});
