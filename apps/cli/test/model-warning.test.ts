import { startFakeOpenAIServer, startServerProcess } from '@airlock/server/testing';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runChat } from '../src/chat-command';

const TOKEN = 'model-warning-token-0123456789abcdef';

describe('airlock chat against a server started with a model its model server does not list', () => {
  it('warns as it connects, naming the models the server lists, as the server said at its start', async () => {
    await using fake = await startFakeOpenAIServer({ models: ['qwen3:8b', 'llama3.2:latest'] });
    const cleanups: (() => Promise<void>)[] = [];
    const folder = await mkdtemp(path.join(tmpdir(), 'airlock-model-warning-'));
    try {
      const server = await startServerProcess(
        ['--workspace', folder, '--data-dir', path.join(folder, 'data'), '--model-url', fake.url, '--model', 'qwen3:4b', '--tool-sandbox', 'none'],
        { AIRLOCK_TOKEN: TOKEN },
        cleanups,
      );
      const warning =
        `the model server at ${fake.url} does not list the model "qwen3:4b"; it lists "qwen3:8b", "llama3.2:latest". ` +
        'Requests name "qwen3:4b" all the same: set AIRLOCK_MODEL to one it lists if the server refuses them.';
      expect(server.output()).toContain(`Model warning: ${warning}`);

      const input = Object.assign(new PassThrough(), { isTTY: true });
      const output = Object.assign(new PassThrough(), { isTTY: true, columns: 300 });
      let written = '';
      output.on('data', (chunk: Buffer) => (written += chunk.toString()));
      const exited = runChat({ input, output, env: { NO_COLOR: '1' }, address: { url: server.wsUrl, token: TOKEN }, sessionId: 'c1' });
      await expect.poll(() => stripVTControlCharacters(written), { timeout: 20_000, interval: 20 }).toContain('you›');
      input.end();
      expect(await exited).toBe(0);

      const lines = stripVTControlCharacters(written).split('\n');
      const connected = lines.findIndex((line) => line.startsWith('Connected to '));
      expect(lines[connected]).toBe(`Connected to ${server.wsUrl}, model qwen3:4b.`);
      expect(lines[connected + 1]).toBe(`⚠ ${warning}`);
    } finally {
      for (const cleanup of cleanups.reverse()) await cleanup();
      await rm(folder, { recursive: true, force: true });
    }
  }, 90_000);
});
