import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateRules, type RuleContext } from './evaluate-rules';
import { prefix, terminal } from './rule-fixtures';

describe('an exact rule for python -m X while the folder it runs in holds an X of its own', () => {
  let workspace = '';
  let context: RuleContext;
  beforeAll(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'airlock-python-module-'));
    // The probe's plant: a `pip/` package whose __main__ runs instead of the installed pip.
    mkdirSync(path.join(workspace, 'pip'));
    writeFileSync(path.join(workspace, 'pip', '__main__.py'), 'open("MARKER", "w")\n');
    writeFileSync(path.join(workspace, 'black.py'), 'open("MARKER", "w")\n');
    mkdirSync(path.join(workspace, 'clean'));
    context = { sessionId: 'chat-1', workspace };
  });
  afterAll(() => rmSync(workspace, { recursive: true, force: true }));

  const decided = async (command: string, tokens = command) => (await evaluateRules(terminal(command), [prefix(tokens, { exact: true })], context)).decision;

  it('is covered by no rule: Python runs the folder’s module first', async () => {
    expect(await decided('python3 -m pip --version')).toBe('ask');
    expect(await decided('python3 -mpip --version')).toBe('ask');
    expect(await decided('python3 -u -m pip --version')).toBe('ask');
    expect(await decided('python3 -W error -m pip list')).toBe('ask');
    expect(await decided('python3.11 -m pip.__main__ --version')).toBe('ask');
    expect(await decided('python -m black --check .')).toBe('ask');
  });

  it('stays covered where the folder holds no such module, or Python does not look there', async () => {
    expect(await decided('python3 -m pytest -q')).toBe('allow');
    // Judged in the folder a `cd` before it leads to.
    const inClean = await evaluateRules(terminal('cd clean && python3 -m pip --version'), [prefix('cd'), prefix('python3 -m pip --version', { exact: true })], context);
    expect(inClean.decision).toBe('allow');
    expect(await decided('python3 -I -m pip --version')).toBe('allow');
    expect(await decided('python3 -P -m pip --version')).toBe('allow');
    expect(await decided('python3 -c pass')).toBe('allow');
  });
});
