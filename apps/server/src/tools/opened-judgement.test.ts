import type { OpenedPath, OpenedRefusal } from '@airlock/core';
import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { createBuiltinTools } from './index';
import { callContext, runTool, tempFolder, toolNamed } from './test-support';

/** A workspace with `src/x` (one name), `src/h` (another name of `other/h`), `src/d` and a link `src/l -> d`. */
async function fixture() {
  const folder = await tempFolder();
  const ws = folder.path;
  await mkdir(path.join(ws, 'src', 'd'), { recursive: true });
  await mkdir(path.join(ws, 'other'));
  await writeFile(path.join(ws, 'src', 'x'), 'plain\n');
  await writeFile(path.join(ws, 'other', 'h'), 'shared\n');
  await link(path.join(ws, 'other', 'h'), path.join(ws, 'src', 'h'));
  await writeFile(path.join(ws, 'src', 'd', 'ok.txt'), 'ok');
  await symlink('d', path.join(ws, 'src', 'l'));
  const tools = createBuiltinTools({ workspace: ws, sandbox: 'none' });
  return { ws, read: toolNamed(tools, 'read_file'), list: toolNamed(tools, 'list_directory'), [Symbol.asyncDispose]: () => folder[Symbol.asyncDispose]() };
}

/** A context whose rules note what they are asked about and answer `answer`. */
function judging(answer: OpenedRefusal | undefined) {
  const asked: OpenedPath[] = [];
  return { asked, context: callContext({ judgeOpened: async (opened) => (asked.push(opened), answer) }) };
}

describe('the file tools ask the rules about what they opened before reading it', () => {
  test('read_file gives the real path and the number of names of the file it holds', async () => {
    await using f = await fixture();
    const plain = judging(undefined);
    expect(await runTool(f.read, { path: 'src/x' }, plain.context)).toStrictEqual({ content: 'plain\n', isError: false });
    const shared = judging(undefined);
    expect(await runTool(f.read, { path: './src/../src/h' }, shared.context)).toStrictEqual({ content: 'shared\n', isError: false });
    expect([...plain.asked, ...shared.asked]).toStrictEqual([
      { real: path.join(f.ws, 'src', 'x'), links: 1 },
      { real: path.join(f.ws, 'src', 'h'), links: 2 },
    ]);
  });

  test('list_directory gives the real path of the folder it opened, through a link', async () => {
    await using f = await fixture();
    const judged = judging(undefined);
    expect(await runTool(f.list, { path: 'src/l' }, judged.context)).toStrictEqual({ content: 'src/d: 1 entry\nfile     ok.txt  (2 bytes)', isError: false });
    expect(judged.asked).toStrictEqual([{ real: path.join(f.ws, 'src', 'd') }]);
  });

  test('a refusal is the answer, and nothing of the file or folder is in it', async () => {
    await using f = await fixture();
    const denied = judging({ kind: 'denied', reason: 'Denied by a rule. Deny reading files matching `secret/**` everywhere.', fromWorkspaceFile: false });
    expect(await runTool(f.read, { path: 'src/x' }, denied.context)).toStrictEqual({
      content: 'Refused: "src/x" is covered by a deny rule as it was opened: Denied by a rule. Deny reading files matching `secret/**` everywhere. Nothing was read.',
      isError: true,
    });
    const fromFile = judging({ kind: 'denied', reason: 'Deny listing folders matching `src/**` everywhere', fromWorkspaceFile: true });
    expect(await runTool(f.list, { path: 'src/d' }, fromFile.context)).toStrictEqual({
      content:
        "Refused: \"src/d\" is covered by a deny rule as it was opened: Deny listing folders matching `src/**` everywhere. That rule comes from the workspace's rules file (.airlock/rules.json), not from the person. Nothing was listed.",
      isError: true,
    });
    const byRule = judging({ kind: 'changed', allowedBy: 'rule' });
    expect(await runTool(f.read, { path: 'src/h' }, byRule.context)).toStrictEqual({
      content: 'Refused: "src/h" changed since a rule allowed it: the rule does not cover it as it is now. Nothing was read. Call again to have it judged as it is.',
      isError: true,
    });
    const unasked = judging({ kind: 'changed', allowedBy: 'unasked', reason: 'A file with more than one name' });
    expect(await runTool(f.read, { path: 'src/h' }, unasked.context)).toStrictEqual({
      content: 'Refused: "src/h" changed since the rules judged it: as it is now, the person would be asked about it. A file with more than one name. Nothing was read. Call again to have them asked.',
      isError: true,
    });
  });
});
