import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { createBuiltinTools, type BuiltinToolsOptions } from './index';
import { runTool, SANDBOX_KINDS, tempFolder, toolNamed } from './test-support';

// The system interpreter first: a version-manager shim found earlier on PATH can take seconds to start.
const PATH = ['/usr/bin', '/bin', process.env.PATH].join(':');

describe.each(SANDBOX_KINDS)('python tool (sandbox: %s)', (sandbox) => {
  function python(options: BuiltinToolsOptions) {
    return toolNamed(createBuiltinTools({ env: { PATH, HOME: process.env.HOME }, sandbox, ...options }), 'python');
  }

  test('runs code in the workspace; its modules import once the code puts the folder on the path', async () => {
    await using workspace = await tempFolder();
    await writeFile(path.join(workspace.path, 'helper.py'), 'def twice(x):\n    return 2 * x\n');
    const code = 'import os, sys\nsys.path.insert(0, ".")\nimport helper\nprint(os.getcwd())\nprint(helper.twice(21))';
    const result = await runTool(python({ workspace: workspace.path }), { code });
    expect(result).toStrictEqual({ content: `${workspace.path}\n42\nexit code: 0`, isError: false });
  });

  test('runs isolated: a sitecustomize.py, a usercustomize.py or a module in the workspace, PYTHONPATH and PYTHONSTARTUP run nothing', async () => {
    await using workspace = await tempFolder();
    const trap = 'open("/dev/stdout", "w").write("TRAP RAN\\n")\n';
    for (const name of ['sitecustomize.py', 'usercustomize.py', 'startup.py', 'json.py']) await writeFile(path.join(workspace.path, name), trap);
    const env = { PATH, HOME: workspace.path, PYTHONPATH: workspace.path, PYTHONSTARTUP: path.join(workspace.path, 'startup.py'), PYTHONUSERBASE: workspace.path };
    const code = 'import json, sys\nprint(json.dumps([p for p in sys.path if p in ("", ".") or p.startswith(' + JSON.stringify(workspace.path) + ')]))';
    const result = await runTool(python({ workspace: workspace.path, env }), { code });
    expect(result).toStrictEqual({ content: '[]\nexit code: 0', isError: false });
  });

  test('an exception is an error result with its traceback', async () => {
    await using workspace = await tempFolder();
    const result = await runTool(python({ workspace: workspace.path }), { code: 'print("before")\nraise ValueError("boom")' });
    expect(result.isError).toBe(true);
    expect(result.content).toContain('before\nTraceback');
    expect(result.content).toContain('ValueError: boom');
    expect(result.content.endsWith('exit code: 1')).toBe(true);
  });

  test('sees only the filtered environment', async () => {
    await using workspace = await tempFolder();
    const env = { PATH, HOME: process.env.HOME, OPENAI_API_KEY: 'sk-should-not-leak', EXTRA: 'x' };
    const code = 'import os\nprint(sorted(k for k in os.environ if k in ("OPENAI_API_KEY", "EXTRA", "PATH")))';
    const result = await runTool(python({ workspace: workspace.path, env }), { code });
    expect(result.content).toBe("['PATH']\nexit code: 0");
  });

  test('without python3 on PATH the result says so clearly', async () => {
    await using workspace = await tempFolder();
    const emptyBin = path.join(workspace.path, 'bin');
    await mkdir(emptyBin);
    const result = await runTool(python({ workspace: workspace.path, env: { PATH: emptyBin } }), { code: 'print(1)' });
    expect(result).toStrictEqual({ content: `Error: python3 was not found on PATH (${emptyBin}), so the code was not run.`, isError: true });
  });
});
