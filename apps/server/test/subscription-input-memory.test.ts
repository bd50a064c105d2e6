import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

describe('a subscription whose input carries what its procedure does not keep', () => {
  // In a process of its own, started with --expose-gc, so that a collection there answers what is still reachable.
  it('is not kept whole while the subscription lives: a watch given junk and a run stream given an unknown key (found in review)', () => {
    // Before, the raw input of each subscription stayed in memory until it ended: up to a message's size (1 MiB) per
    // subscription, 32 per connection.
    const fixture = fileURLToPath(new URL('./subscription-input-memory.fixture.ts', import.meta.url));
    const child = spawnSync(process.execPath, ['--expose-gc', '--import', tsx, fixture], { encoding: 'utf8', timeout: 120_000 });
    expect(child.stderr).toBe('');
    expect(JSON.parse(child.stdout)).toStrictEqual({ started: [1, 2], held: { q: false, z: false } });
  });
});
