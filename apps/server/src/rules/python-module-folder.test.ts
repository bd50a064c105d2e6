import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateRules, type RuleContext } from './evaluate-rules';
import { prefix, rule, terminal } from './rule-fixtures';
import { PYTHON_FOLDER_ENTRIES } from './python-module-folder';

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

  it('nor while it holds a module of the standard library, which the module run may import in turn', async () => {
    writeFileSync(path.join(workspace, 'clean', 'argparse.py'), '');
    const inClean = await evaluateRules(terminal('cd clean && python3 -m pytest -q'), [prefix('cd'), prefix('python3 -m pytest -q', { exact: true })], context);
    rmSync(path.join(workspace, 'clean', 'argparse.py'));
    expect(inClean.decision).toBe('ask');
  });

  it('nor while it holds any module, which the module run may import in turn (pytest imports pluggy)', async () => {
    mkdirSync(path.join(workspace, 'other'));
    const inOther = async (command: string) => (await evaluateRules(terminal(`cd other && ${command}`), [prefix('cd'), prefix(command, { exact: true })], context)).decision;
    expect(await inOther('python3 -m pytest --version')).toBe('allow');
    for (const plant of ['pluggy.py', 'idna.cpython-311-x86_64-linux-gnu.so', '_sha2.py', 'binhex.pyc', 'é.py']) {
      writeFileSync(path.join(workspace, 'other', plant), '');
      expect(await inOther('python3 -m pytest --version'), plant).toBe('ask');
      rmSync(path.join(workspace, 'other', plant));
    }
    // A package, or a folder that may be part of a namespace package (`google/protobuf/…`).
    mkdirSync(path.join(workspace, 'other', 'google', 'protobuf'), { recursive: true });
    expect(await inOther('python3 -m pytest --version')).toBe('ask');
    rmSync(path.join(workspace, 'other', 'google'), { recursive: true });
    // What Python cannot import by any name: a name that is no identifier, a folder with nothing to import.
    for (const name of ['my-tool.py', '1st.py', 'notes.txt', 'Makefile']) writeFileSync(path.join(workspace, 'other', name), '');
    mkdirSync(path.join(workspace, 'other', 'data', 'plain'), { recursive: true });
    mkdirSync(path.join(workspace, 'other', '.venv', 'lib'), { recursive: true });
    writeFileSync(path.join(workspace, 'other', '.venv', 'lib', 'x.py'), '');
    writeFileSync(path.join(workspace, 'other', 'data', 'README'), '');
    expect(await inOther('python3 -m pytest --version')).toBe('ask');
    rmSync(path.join(workspace, 'other', 'data', 'plain'), { recursive: true });
    expect(await inOther('python3 -m pytest --version')).toBe('allow');
    // Code read from standard input, with no script named.
    writeFileSync(path.join(workspace, 'other', 'pluggy.py'), '');
    for (const command of ['python3', 'python3 -', 'python3 -u', 'python3 -- -']) expect(await inOther(command), command).toBe('ask');
    for (const command of ['python3 tool.py', 'python3 --version', 'python3 -V', 'python3 -I']) expect(await inOther(command), command).toBe('allow');
    rmSync(path.join(workspace, 'other'), { recursive: true });
  });

  it('stays covered where the folder holds no such module, or Python does not look there', async () => {
    // Judged in the folder a `cd` before it leads to.
    const inClean = await evaluateRules(terminal('cd clean && python3 -m pip --version'), [prefix('cd'), prefix('python3 -m pip --version', { exact: true })], context);
    expect(inClean.decision).toBe('allow');
    expect(await decided('python3 -I -m pip --version')).toBe('allow');
    expect(await decided('python3 -P -m pip --version')).toBe('allow');
    expect(await decided('python3 -c pass')).toBe('ask');
    expect((await evaluateRules(terminal('cd clean && python3 -m pytest -q'), [prefix('cd'), prefix('python3 -m pytest -q', { exact: true })], context)).decision).toBe('allow');
  });
});

describe('an exact rule for python -c CODE while the folder it runs in holds a module the code may import', () => {
  let workspace = '';
  let context: RuleContext;
  beforeAll(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'airlock-python-code-'));
    // A project's own scripts, which the code does not import, but a module it imports may.
    writeFileSync(path.join(workspace, 'setup.py'), '');
    writeFileSync(path.join(workspace, 'manage.py'), '');
    mkdirSync(path.join(workspace, 'planted'));
    mkdirSync(path.join(workspace, 'clean'));
    mkdirSync(path.join(workspace, 'data', 'json'), { recursive: true });
    context = { sessionId: 'chat-1', workspace };
  });
  afterAll(() => rmSync(workspace, { recursive: true, force: true }));

  /** Under rules for `cd` and for the call's exact words: `python3`, its options, then the code, single-quoted on the line. */
  const decided = async (words: readonly string[], folder = '') => {
    const command = words.map((word, index) => (index === words.length - 1 ? `'${word}'` : word)).join(' ');
    const rules = [prefix('cd'), rule({ match: { kind: 'command-prefix', tokens: [...words], exact: true } })];
    return (await evaluateRules(terminal(folder === '' ? command : `cd ${folder} && ${command}`), rules, context)).decision;
  };

  it('a planted json.py runs in place of the standard library’s under a rule for python3 -c "import json …"', async () => {
    writeFileSync(path.join(workspace, 'planted', 'json.py'), 'open("MARKER", "w")\n');
    expect(await decided(['python3', '-c', 'import json; print(json.dumps(1))'], 'planted')).toBe('ask');
    expect(await decided(['python3', '-W', 'error', '-c', 'import json'], 'planted')).toBe('ask');
    expect(await decided(['python3', '-uc', 'import json'], 'planted')).toBe('ask');
    // A module of the standard library the code's imports import in turn (`subprocess` imports `selectors`).
    writeFileSync(path.join(workspace, 'clean', 'selectors.py'), '');
    expect(await decided(['python3', '-c', 'import subprocess'], 'clean')).toBe('ask');
    rmSync(path.join(workspace, 'clean', 'selectors.py'));
    // A name of the code that is no module of the standard library, as a package or a compiled module.
    mkdirSync(path.join(workspace, 'planted', 'yaml'));
    writeFileSync(path.join(workspace, 'planted', 'yaml', '__init__.py'), '');
    expect(await decided(['python3', '-c', 'import yaml'], 'planted')).toBe('ask');
    writeFileSync(path.join(workspace, 'clean', 'requests.cpython-311-x86_64-linux-gnu.so'), '');
    expect(await decided(['python3', '-c', '__import__("requests")'], 'clean')).toBe('ask');
    rmSync(path.join(workspace, 'clean', 'requests.cpython-311-x86_64-linux-gnu.so'));
  });

  it('stays covered where no module of the folder may be imported, or Python does not look there', async () => {
    expect(await decided(['python3', '-c', 'import json; print(json.dumps(1))'])).toBe('ask');
    expect(await decided(['python3', '-c', 'import json; print(json.dumps(1))'], 'clean')).toBe('allow');
    expect(await decided(['python3', '-c', 'import json'], 'clean')).toBe('allow');
    // A folder named as a module but holding no `__init__` is found only after the installed one.
    expect(await decided(['python3', '-c', 'import json'], 'data')).toBe('allow');
    expect(await decided(['python3', '-I', '-c', 'import json'], 'planted')).toBe('allow');
    expect(await decided(['python3', '-P', '-c', 'import json'], 'planted')).toBe('allow');
  });
});

describe('an exact rule for python -m X in a folder too large to list while judging', () => {
  let workspace = '';
  beforeAll(() => {
    workspace = mkdtempSync(path.join(tmpdir(), 'airlock-python-large-'));
    // Nothing Python may import, but more entries (the folder's and its folders') than one judging reads.
    for (let i = 0; i < PYTHON_FOLDER_ENTRIES / 2; i += 1) writeFileSync(path.join(workspace, `data-${i}.csv`), '');
    for (let i = 0; i < 10; i += 1) {
      mkdirSync(path.join(workspace, `batch${i}`));
      for (let j = 0; j < PYTHON_FOLDER_ENTRIES / 10; j += 1) writeFileSync(path.join(workspace, `batch${i}`, `row-${j}.csv`), '');
    }
  });
  afterAll(() => rmSync(workspace, { recursive: true, force: true }));

  it('is asked: the listing stops at its bound (it held every other client while it read the whole tree), and a module past it may be there', async () => {
    const decided = await evaluateRules(terminal('python3 -m pytest -q'), [prefix('python3 -m pytest -q', { exact: true })], { sessionId: 'chat-1', workspace });
    expect(decided.decision).toBe('ask');
    // Within the bound, the same folder is read to its end and found to hold nothing Python may import.
    for (let i = 0; i < 10; i += 1) rmSync(path.join(workspace, `batch${i}`), { recursive: true });
    expect((await evaluateRules(terminal('python3 -m pytest -q'), [prefix('python3 -m pytest -q', { exact: true })], { sessionId: 'chat-1', workspace })).decision).toBe('allow');
  });
});
