import { ModelError, type ModelPart } from '@airlock/core';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';
import { resolveChatModel } from '../src/models';
import { collectGarbage } from './support/collect-garbage';

async function load(argv: string[], env: Record<string, string> = {}) {
  const path = await realpath(await mkdtemp(join(tmpdir(), 'airlock-model-limits-')));
  try {
    return loadConfig(argv, env, path);
  } finally {
    await rm(path, { recursive: true, force: true });
  }
}

describe('model time limits in the configuration', () => {
  it('default to 10 minutes to the first piece, 5 between pieces and 2 hours a turn', async () => {
    const { capacity } = await load([]);
    expect([capacity.modelTimeoutMs, capacity.modelIdleTimeoutMs, capacity.modelTurnTimeoutMs]).toStrictEqual([600_000, 300_000, 7_200_000]);
  });

  it('are read from flags and variables, and refused out of range naming the setting', async () => {
    const { capacity } = await load(['--model-timeout-ms', '1200000', '--model-turn-timeout-ms', '86400000'], { AIRLOCK_MODEL_IDLE_TIMEOUT_MS: '60000' });
    expect([capacity.modelTimeoutMs, capacity.modelIdleTimeoutMs, capacity.modelTurnTimeoutMs]).toStrictEqual([1_200_000, 60_000, 86_400_000]);

    await expect(load(['--model-idle-timeout-ms', '10'])).rejects.toThrow(new ConfigError('--model-idle-timeout-ms', 'must be a whole number from 1000 to 86400000'));
  });

  it('reach the model: a configured idle limit ends a stream that stalls after one piece', async () => {
    const server = createServer((request, response) => {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Hel' } }] })}\n\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const modelUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      // Collections all along, as a busy server has them: one once cost the listing its time limit, and this test its run.
      const parts: ModelPart[] = [];
      let settled = false;
      const ended = (async () => {
        const { model } = await resolveChatModel({ modelUrl, model: 'm', idleTimeoutMs: 200 });
        try {
          for await (const part of model.stream({ messages: [{ role: 'user', content: 'hello' }], tools: [] }, new AbortController().signal)) parts.push(part);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })().finally(() => (settled = true));
      while (!settled) await collectGarbage(1);
      const error = await ended;

      expect(error).toBeInstanceOf(ModelError);
      expect((error as ModelError).message).toMatch(/sent no further part of the answer for 200 ms; .*--model-idle-timeout-ms/);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
