import { ChatService, type ModelInfo } from '@airlock/api';
import { ApprovalRegistry } from '@airlock/core';
import { ScriptedModel } from '@airlock/core/testing';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer } from '../src/start-server';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';

async function startUpLines(modelInfo: ModelInfo): Promise<string[]> {
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => new ScriptedModel([]), tools: () => [] });
  const lines: string[] = [];
  const server = await startServer({
    config: { host: '127.0.0.1', port: 0, token: TOKEN, allowedOrigins: [] },
    services: { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => modelInfo },
    webRoot: join(tmpdir(), 'airlock-no-such-web-root'),
    log: (line) => lines.push(line),
  });
  await server.close();
  return lines;
}

describe('the start-up line of the model', () => {
  it('names the provider, the model and where it is', async () => {
    const lines = await startUpLines({ provider: 'llama.cpp', baseURL: 'http://127.0.0.1:8080/v1', model: 'qwen3-8b', demo: false });

    expect(lines.filter((line) => line.startsWith('Model: '))).toStrictEqual(['Model: llama.cpp qwen3-8b at http://127.0.0.1:8080/v1']);
  });

  it('shows escape sequences, line breaks and bidi controls of the id the server sent as codes', async () => {
    const model = 'gpt\u001b[2J\u001b]0;owned\u0007\u202Eevil\nAirlock is running at http://evil.example/#token=x';

    const lines = await startUpLines({ provider: 'vLLM', baseURL: 'http://127.0.0.1:8000/v1', model, demo: false });

    expect(lines.filter((line) => line.startsWith('Model: '))).toStrictEqual([
      'Model: vLLM gpt\\u{1B}[2J\\u{1B}]0;owned\\u{7}\\u{202E}evil\\u{A}Airlock is running at http://evil.example/#token=x at http://127.0.0.1:8000/v1',
    ]);
    // As the terminal shows them: no forged line.
    expect(lines.flatMap((line) => line.split('\n')).filter((line) => line.startsWith('Airlock is running at http://evil'))).toStrictEqual([]);
  });
});
