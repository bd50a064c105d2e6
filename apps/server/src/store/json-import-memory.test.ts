import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempFolder } from './test-support';

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const MiB = 1024 * 1024;

describe('the one-time import of the former JSON session files', () => {
  // In a process with a 128 MiB heap: holding every file's chat at once, or reading an oversized file whole, runs out of it.
  it('holds one file at a time and reads no file over its limit, so a start with many large ones does not run out of memory', async () => {
    await using folder = await tempFolder();
    const sessions = Array.from({ length: 8 }, (_, index) => `chat-${index}`);
    for (const sessionId of sessions) {
      const session = { sessionId, title: sessionId, createdAt: 1, updatedAt: 2, messages: [{ role: 'user', content: 'x'.repeat(20 * MiB) }] };
      await writeFile(join(folder.path, `${Buffer.from(sessionId).toString('base64url')}.json`), JSON.stringify(session));
    }
    // Sparse: no disk space, but read whole it is a string of 300 Mi characters.
    await writeFile(join(folder.path, 'huge.json'), '');
    await truncate(join(folder.path, 'huge.json'), 300 * MiB);
    const fixture = fileURLToPath(new URL('./json-import-memory.fixture.ts', import.meta.url));
    const child = spawnSync(process.execPath, ['--max-old-space-size=128', '--import', tsx, fixture, folder.path], { encoding: 'utf8', timeout: 120_000 });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toStrictEqual({ imported: 8, skipped: [`larger than ${32 * MiB} bytes`] });
  }, 180_000);
});
