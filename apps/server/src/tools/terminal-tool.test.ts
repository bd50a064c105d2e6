import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { createBuiltinTools } from './index';
import { callContext, isRunning, runTool, tempFolder, toolNamed } from './test-support';

afterEach(() => {
  vi.unstubAllEnvs();
});

async function terminal(workspace: string, secretValues: string[] = []) {
  return toolNamed(createBuiltinTools({ workspace, secretValues, killGraceMs: 500 }), 'terminal');
}

describe('terminal tool', () => {
  test('runs in the workspace and reports the exit code', async () => {
    await using workspace = await tempFolder();
    const result = await runTool(await terminal(workspace.path), { command: 'pwd; echo "$PWD"' });
    expect(result).toStrictEqual({ content: `${workspace.path}\n${workspace.path}\nexit code: 0`, isError: false });
  });

  test('a non-zero exit is an error result', async () => {
    await using workspace = await tempFolder();
    const result = await runTool(await terminal(workspace.path), { command: 'echo failing >&2; exit 3' });
    expect(result).toStrictEqual({ content: 'failing\nexit code: 3', isError: true });
  });

  test('env shows no secret: neither secret-looking names nor the server token value', async () => {
    await using workspace = await tempFolder();
    vi.stubEnv('FOO_API_KEY', 'foo-api-key-value');
    vi.stubEnv('GITHUB_TOKEN', 'github-token-value');
    vi.stubEnv('DB_PASSWORD', 'db-password-value');
    vi.stubEnv('MY_SECRET', 'my-secret-value');
    vi.stubEnv('TZ', 'server-token-0123456789');
    vi.stubEnv('LANG', 'C.UTF-8');
    const result = await runTool(await terminal(workspace.path, ['server-token-0123456789']), { command: 'env' });
    expect(result.isError).toBe(false);
    for (const leaked of ['FOO_API_KEY', 'GITHUB_TOKEN', 'DB_PASSWORD', 'MY_SECRET', '-value', 'server-token-0123456789']) {
      expect(result.content).not.toContain(leaked);
    }
    expect(result.content).toContain('LANG=C.UTF-8');
    expect(result.content).toContain('PATH=');
  });

  test('a timeout kills the command and everything it started', async () => {
    await using workspace = await tempFolder();
    const result = await runTool(await terminal(workspace.path), { command: 'sleep 300 & echo $!; sleep 300; wait' }, callContext({ timeoutMs: 300 }));
    const background = Number.parseInt(result.content, 10);
    expect(result.isError).toBe(true);
    expect(result.content.endsWith('killed by SIGTERM (timed out after 300 ms)')).toBe(true);
    expect(await isRunning(background)).toBe(false);
  });

  test('the call signal kills the command and everything it started', async () => {
    await using workspace = await tempFolder();
    const controller = new AbortController();
    const marker = `${workspace.path}/started`;
    const running = runTool(await terminal(workspace.path), { command: `sleep 300 & echo $! > ${marker}; sleep 300; wait` }, callContext({ signal: controller.signal }));
    const background = await vi.waitFor(async () => {
      const pid = Number.parseInt(await readFile(marker, 'utf8'), 10);
      expect(pid).toBeGreaterThan(0);
      return pid;
    });
    controller.abort(new Error('cancelled by the person'));
    const result = await running;
    expect(result).toStrictEqual({ content: '(no output)\nkilled by SIGTERM (stopped: cancelled by the person)', isError: true });
    expect(await isRunning(background)).toBe(false);
  });

  test('stdin is closed, so a command waiting for input returns at once', async () => {
    await using workspace = await tempFolder();
    const result = await runTool(await terminal(workspace.path), { command: 'cat' });
    expect(result).toStrictEqual({ content: '(no output)\nexit code: 0', isError: false });
  });

  test('says when it stopped background processes left running', async () => {
    await using workspace = await tempFolder();
    const result = await runTool(await terminal(workspace.path), { command: 'sleep 300 & echo $!' });
    expect(result.content.split('\n').slice(1)).toStrictEqual(['exit code: 0', 'background processes still running when it exited were stopped']);
    expect(await isRunning(Number.parseInt(result.content, 10))).toBe(false);
  });

  test('is annotated as executing code', async () => {
    await using workspace = await tempFolder();
    const tool = await terminal(workspace.path);
    expect([tool.annotations, tool.source]).toStrictEqual([{ executesCode: true, destructive: true }, 'builtin']);
  });
});
