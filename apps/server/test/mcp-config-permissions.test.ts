import { chmod, chown, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { startOrExit } from './support/server-process';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A folder of its own holding `mcp.json`, whose one stdio server would leave the file `started` in the folder. */
async function mcpFile(): Promise<{ folder: string; file: string; args: string[] }> {
  const root = await mkdtemp(join(tmpdir(), 'airlock-mcp-permissions-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const folder = join(root, 'config');
  await mkdir(folder, { mode: 0o755 });
  const file = join(folder, 'mcp.json');
  await writeFile(file, JSON.stringify({ mcpServers: { probe: { command: '/bin/sh', args: ['-c', `: > ${join(folder, 'started')}`] } } }), { mode: 0o644 });
  await mkdir(join(root, 'ws'));
  return { folder, file, args: ['--mcp-config', file, '--workspace', join(root, 'ws'), '--data-dir', join(root, 'data')] };
}

describe('an MCP servers file other users may change is refused, before any server starts', () => {
  test('a file with group or other write permission: the flag, the file, its mode and the fix', async () => {
    for (const mode of [0o664, 0o646]) {
      const { folder, file, args } = await mcpFile();
      await chmod(file, mode);

      const { exitCode, output } = await startOrExit(args, {}, cleanups);

      expect(exitCode).toBe(1);
      expect(output).toContain(
        `airlock: --mcp-config: invalid MCP config ${file}: other users may change it (mode ${mode.toString(8).padStart(4, '0')}), and so choose the commands Airlock starts as you: chmod go-w ${file}\n`,
      );
      await expect(stat(join(folder, 'started'))).rejects.toThrow(/ENOENT/);
    }
  }, 120_000);

  test('a file in a folder other users may change (no sticky bit), where they could put their own in its place', async () => {
    const { folder, file, args } = await mcpFile();
    await chmod(folder, 0o777);

    const { exitCode, output } = await startOrExit(args, {}, cleanups);

    expect(exitCode).toBe(1);
    expect(output).toContain(
      `airlock: --mcp-config: invalid MCP config ${file}: other users may change its folder ${folder} (mode 0777), and so put a file of their own in its place: chmod go-w ${folder}\n`,
    );
    await expect(stat(join(folder, 'started'))).rejects.toThrow(/ENOENT/);
  }, 120_000);

  // Only root can give a file to another user.
  test.runIf(process.getuid?.() === 0)('a file of another user, who may change it at will', async () => {
    const { folder, file, args } = await mcpFile();
    await chown(file, 65534, 65534);

    const { exitCode, output } = await startOrExit(args, {}, cleanups);

    expect(exitCode).toBe(1);
    expect(output).toContain(`airlock: --mcp-config: invalid MCP config ${file}: is owned by another user (user 65534, Airlock runs as 0), who may change it and so choose the commands Airlock starts as you\n`);
    await expect(stat(join(folder, 'started'))).rejects.toThrow(/ENOENT/);
  }, 120_000);

  test('a file only its owner may change, in a folder others may write with the sticky bit (as /tmp), is taken', async () => {
    const { folder, file, args } = await mcpFile();
    await chmod(folder, 0o1777);

    const { exitCode, output } = await startOrExit(args, {}, cleanups);

    expect({ exitCode, refused: output.includes(`invalid MCP config ${file}`) }).toStrictEqual({ exitCode: null, refused: false });
  }, 120_000);
});
