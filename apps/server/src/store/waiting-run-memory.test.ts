import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempFolder } from './test-support';

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

describe('a run waiting on a decision in a long chat', () => {
  // In a process of its own, started with --expose-gc, so that a collection there answers what is still reachable.
  it('holds none of the conversation while its call waits, nor after a restart resumed it; the model then reads the whole of it, as before', async () => {
    await using folder = await tempFolder();
    const fixture = fileURLToPath(new URL('./waiting-run-memory.fixture.ts', import.meta.url));
    const child = spawnSync(process.execPath, ['--expose-gc', '--import', tsx, fixture, join(folder.path, 'data')], { encoding: 'utf8', timeout: 120_000 });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toStrictEqual({ whileWaiting: 0, afterRestart: 0, firstRequest: true, nextRequest: true, nextRequestLength: 303 });
  });
});
