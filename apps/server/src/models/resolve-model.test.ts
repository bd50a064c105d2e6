import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelPart } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { startFakeOpenAIServer } from '../../test/support';
import { ConfigError } from '../config';
import { DemoModel } from './demo-model';
import { OpenAICompatibleModel } from './openai-compatible-model';
import { normaliseBaseURL, providerForURL, resolveChatModel } from './resolve-model';

const nothingFound = async () => undefined;

async function firstText(parts: AsyncIterable<ModelPart>): Promise<string> {
  let text = '';
  for await (const part of parts) if (part.type === 'text-delta') text += part.text;
  return text;
}

describe('resolveChatModel', () => {
  it('uses the configured URL and the first model the server lists', async () => {
    await using fake = await startFakeOpenAIServer({ models: ['first', 'second'] });
    fake.enqueue({ text: 'hi' });

    const resolved = await resolveChatModel({ modelUrl: `${fake.url}/` }, { probe: () => Promise.reject(new Error('must not probe')) });

    expect(resolved.info).toStrictEqual({ provider: 'OpenAI-compatible', baseURL: fake.url, model: 'first', demo: false });
    expect(resolved.model).toBeInstanceOf(OpenAICompatibleModel);
    expect(await firstText(resolved.model.stream({ messages: [{ role: 'user', content: 'x' }], tools: [] }, new AbortController().signal))).toBe('hi');
    expect(fake.requests[0]?.model).toBe('first');
  });

  it('keeps a configured model name and warns when the model list cannot be read', async () => {
    const server = createServer((_request, response) => response.writeHead(404).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      const named = await resolveChatModel({ modelUrl: url, model: 'mine' });
      const unnamed = await resolveChatModel({ modelUrl: url });

      expect(named.info).toStrictEqual({ provider: 'OpenAI-compatible', baseURL: url, model: 'mine', demo: false });
      expect(unnamed.info.model).toBe('default');
      expect(unnamed.info.warning).toBe(`could not list the models at ${url} (GET /models answered HTTP 404); using the model name "default". Set AIRLOCK_MODEL to choose one.`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('says nothing answered at a model URL where no server listens, with or without a model name, rather than to set one', async () => {
    await using fake = await startFakeOpenAIServer();
    const url = fake.url;
    await fake.close();

    const named = await resolveChatModel({ modelUrl: url, model: 'mine' });
    const unnamed = await resolveChatModel({ modelUrl: url });

    const said = `nothing answered at ${url} (connect ECONNREFUSED ${new URL(url).host}): chats fail until a model server answers there. Check that it runs, or set --model-url (AIRLOCK_MODEL_URL) to where one does.`;
    expect(named.info).toStrictEqual({ provider: 'OpenAI-compatible', baseURL: url, model: 'mine', demo: false, warning: said });
    expect(unnamed.info).toStrictEqual({ provider: 'OpenAI-compatible', baseURL: url, model: 'default', demo: false, warning: said });
  });

  it('warns, naming the models the server lists, when the configured model is not among them; an Ollama name without its tag is', async () => {
    const listed = ['qwen3:8b', 'llama3.2:latest', 'a\u202Eb', 'd', 'e', 'f', 'g'];
    await using fake = await startFakeOpenAIServer({ models: listed });
    const probe = () => Promise.reject(new Error('must not probe'));

    const missing = await resolveChatModel({ modelUrl: fake.url, model: 'qwen3:4b' }, { probe });
    const tagless = await resolveChatModel({ modelUrl: fake.url, model: 'llama3.2' }, { probe });
    const exact = await resolveChatModel({ modelUrl: fake.url, model: 'qwen3:8b' }, { probe });
    const asked: (string | undefined)[] = [];
    const found = await resolveChatModel(
      { model: 'mistral' },
      {
        probe: async (options) => {
          asked.push(options.model);
          return { baseURL: 'http://127.0.0.1:11434/v1', models: ['llama3.2:latest'], provider: 'Ollama' };
        },
      },
    );

    expect(missing.info).toStrictEqual({
      provider: 'OpenAI-compatible',
      baseURL: fake.url,
      model: 'qwen3:4b',
      demo: false,
      warning:
        `the model server at ${fake.url} does not list the model "qwen3:4b"; it lists "qwen3:8b", "llama3.2:latest", "a\u202Eb", "d", "e" and 2 more. ` +
        'Requests name "qwen3:4b" all the same: set AIRLOCK_MODEL to one it lists if the server refuses them.',
    });
    expect(tagless.info.warning).toBe(undefined);
    expect(exact.info.warning).toBe(undefined);
    expect(asked).toStrictEqual(['mistral']);
    expect(found.info.warning).toBe(
      'the Ollama server at http://127.0.0.1:11434/v1 does not list the model "mistral"; it lists "llama3.2:latest". Requests name "mistral" all the same: set AIRLOCK_MODEL to one it lists if the server refuses them.',
    );
  });

  it('uses the first local server the probe finds', async () => {
    const resolved = await resolveChatModel({}, { probe: async () => ({ baseURL: 'http://127.0.0.1:11434/v1', models: ['llama3.2:latest'], provider: 'Ollama' }) });

    expect(resolved.info).toStrictEqual({ provider: 'Ollama', baseURL: 'http://127.0.0.1:11434/v1', model: 'llama3.2:latest', demo: false });
    expect(resolved.model.name).toBe('Ollama llama3.2:latest');
  });

  it.each([
    ['no model URL', {}],
    ['a model URL set but empty', { modelUrl: '  ' }],
  ])('with an API key and %s, stops with an error naming --model-url and never probes', async (_, url) => {
    let probed = false;
    const probe = async () => {
      probed = true;
      return { baseURL: 'http://127.0.0.1:8080/v1', models: ['m'], provider: 'llama.cpp' };
    };

    const resolving = resolveChatModel({ ...url, apiKey: 'sk-secret-value-1234' }, { probe });

    await expect(resolving).rejects.toStrictEqual(
      new ConfigError(
        '--model-url',
        'is needed with an API key (--api-key-file, AIRLOCK_API_KEY_FILE or AIRLOCK_API_KEY): without it Airlock looks for a model server on ports ' +
          '8080, 11434, 1234 and 8000 of this machine, and would send the key to any program listening there',
      ),
    );
    expect(probed).toBe(false);
  });

  it('sends an API key to the configured server', async () => {
    await using fake = await startFakeOpenAIServer();
    fake.enqueue({ text: 'hi' });

    const resolved = await resolveChatModel({ modelUrl: fake.url, apiKey: 'sk-secret-value-1234' }, { probe: () => Promise.reject(new Error('must not probe')) });

    expect(await firstText(resolved.model.stream({ messages: [{ role: 'user', content: 'x' }], tools: [] }, new AbortController().signal))).toBe('hi');
    expect(fake.authorizations).toStrictEqual(['Bearer sk-secret-value-1234']);
  });

  it('falls back to the offline demo model when nothing answers', async () => {
    const resolved = await resolveChatModel({}, { probe: nothingFound });

    expect(resolved.info).toStrictEqual({ provider: 'demo', baseURL: '', model: 'Demo model (offline)', demo: true });
    expect(resolved.model).toBeInstanceOf(DemoModel);
  });
});

describe('normaliseBaseURL and providerForURL', () => {
  it('adds /v1 to a bare host and drops trailing slashes', () => {
    expect(normaliseBaseURL('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/v1');
    expect(normaliseBaseURL('http://127.0.0.1:8080/v1/')).toBe('http://127.0.0.1:8080/v1');
    expect(normaliseBaseURL('https://example.test/api/openai')).toBe('https://example.test/api/openai');
    expect(() => normaliseBaseURL('ftp://example.test')).toThrow('must start with http');
    expect(() => normaliseBaseURL('not a url')).toThrow('not a valid URL');
    expect(() => normaliseBaseURL('http://me:secret@example.test/v1')).toThrow('must not contain a user or password');
  });

  it('names well-known local servers by their default port', () => {
    expect(providerForURL('http://localhost:11434/v1')).toBe('Ollama');
    expect(providerForURL('http://127.0.0.1:8080/v1')).toBe('llama.cpp');
    expect(providerForURL('http://10.0.0.5:8080/v1')).toBe('OpenAI-compatible');
  });
});
