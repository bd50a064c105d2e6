import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluateRules } from './evaluate-rules';
import { gitLayoutWrite } from './git-layout-write';
import { rule, SESSION } from './rule-fixtures';
import { createBuiltinTools } from '../tools';
import { runTool, tempFolder, toolNamed } from '../tools/test-support';

/**
 * The probe's split repository: `src/y` holds the config git runs, objects and refs but no HEAD; `src/x` holds a HEAD
 * and a `commondir` naming `../y`. Neither folder alone is a repository; together `src/x` is one.
 */
const SPLIT = [
  ['src/y/config', '[remote "origin"]\n\turl = .\n\tuploadpack = "touch PWNED; git-upload-pack"\n'],
  ['src/y/objects/info/keep', ''],
  ['src/y/refs/heads/keep', ''],
  ['src/x/HEAD', 'ref: refs/heads/main\n'],
  ['src/x/commondir', '../y\n'],
] as const;

function orders<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, index) => orders([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]));
}

const sources = rule({ tool: 'write_file', match: { kind: 'path-glob', glob: 'src/**' } });

async function decide(workspace: string, relative: string): Promise<string> {
  const call = { tool: 'write_file', arguments: { path: relative, content: 'x\n' } };
  return (await evaluateRules(call, [sources], { sessionId: SESSION, workspace, gitLayoutWrite: gitLayoutWrite(workspace) })).decision;
}

describe('a write rule does not cover a Git directory split across folders by `commondir`', () => {
  it.each(orders(SPLIT).map((order) => [order.map(([relative]) => relative).join(', '), order] as const))(
    'writes %s under `src/**`: at least one is asked',
    async (_, order) => {
      await using folder = await tempFolder();
      const workspace = folder.path;
      const write = toolNamed(createBuiltinTools({ workspace, sandbox: 'none' }), 'write_file');
      const decisions: string[] = [];
      for (const [relative, content] of order) {
        decisions.push(await decide(workspace, relative));
        expect(await runTool(write, { path: relative, content })).toMatchObject({ isError: false });
      }
      expect(decisions).toContain('ask');
    },
  );

  it('asks about the HEAD or commondir that completes a folder, and about a config beside objects and refs', async () => {
    await using folder = await tempFolder();
    const workspace = folder.path;
    await mkdir(path.join(workspace, 'src', 'x'), { recursive: true });
    await writeFile(path.join(workspace, 'src', 'x', 'HEAD'), 'ref: refs/heads/main\n');
    await mkdir(path.join(workspace, 'src', 'w'), { recursive: true });
    await writeFile(path.join(workspace, 'src', 'w', 'commondir'), '../y\n');
    await mkdir(path.join(workspace, 'src', 'y', 'objects'), { recursive: true });
    await mkdir(path.join(workspace, 'src', 'y', 'refs'), { recursive: true });
    const asked = ['src/x/commondir', 'src/w/HEAD', 'src/w/Head', 'src/y/config'];
    const allowed = ['src/x/README.md', 'src/x/config', 'src/w/config', 'src/y/README.md', 'src/z/commondir', 'src/z/config'];
    const answers = await Promise.all([...asked, ...allowed].map(async (relative) => [relative, await decide(workspace, relative)] as const));
    expect(Object.fromEntries(answers)).toStrictEqual(Object.fromEntries([...asked.map((relative) => [relative, 'ask']), ...allowed.map((relative) => [relative, 'allow'])]));
  });
});
