import { describe, expect, it } from 'vitest';
import { createBuiltinTools } from './index';
import { tempFolder, toolNamed } from './test-support';

// Found from outside: terminal {"command": "echo safe\u0000; touch X"} was put up for a decision, and after Allow failed
// with "The argument 'args[51]' must be a string without null bytes": a call that could never run, and an error naming
// the sandbox's own command line.
describe('a NUL in what a tool passes to a process to run', () => {
  it('is refused before a card, for terminal and python, saying what to send instead; a written-out \\0 passes', async () => {
    await using workspace = await tempFolder();
    const tools = createBuiltinTools({ workspace: workspace.path });
    const calls: [string, Record<string, unknown>, string][] = [
      ['terminal', { command: 'echo safe\u0000; touch PWNED_NUL' }, 'the command'],
      ['python', { code: 'print(1)\u0000\nimport os' }, 'the code'],
    ];
    for (const [name, args, field] of calls) {
      const checked = toolNamed(tools, name).parameters.safeParse(args);
      expect({ name, success: checked.success }).toStrictEqual({ name, success: false });
      expect(checked.error?.issues.map((issue) => issue.message)).toStrictEqual([
        `${field} holds a NUL character (U+0000), which a process cannot be given: it could not run as shown. Send it without the NUL (write \\0 or \\x00 in the command or code if the program should produce one).`,
      ]);
    }
    const fine: [string, Record<string, unknown>][] = [
      ['terminal', { command: "printf 'a\\0b' | od -c" }],
      ['python', { code: 'print("a\\x00b")' }],
      ['write_file', { path: 'data.bin', content: 'a\u0000b' }],
    ];
    for (const [name, args] of fine) expect({ name, success: toolNamed(tools, name).parameters.safeParse(args).success }).toStrictEqual({ name, success: true });
  });
});
