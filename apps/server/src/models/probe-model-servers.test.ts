import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startFakeOpenAIServer } from '../../test/support';
import { collectGarbage } from '../../test/support/collect-garbage';
import { LOCAL_MODEL_SERVERS, listModels, probeLocalModelServers } from './probe-model-servers';

interface TestServer extends AsyncDisposable {
  baseURL: string;
  seen: IncomingMessage[];
}

async function startServer(handler: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>): Promise<TestServer> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    seen.push(req);
    void handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    seen,
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function closedPortURL(): Promise<string> {
  const server = await startServer(() => undefined);
  const url = server.baseURL;
  await server[Symbol.asyncDispose]();
  return url;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

describe('probeLocalModelServers', () => {
  it('checks llama.cpp, Ollama, LM Studio and vLLM on their default ports, in that order', () => {
    expect(LOCAL_MODEL_SERVERS).toStrictEqual([
      { baseURL: 'http://127.0.0.1:8080/v1', provider: 'llama.cpp' },
      { baseURL: 'http://127.0.0.1:11434/v1', provider: 'Ollama' },
      { baseURL: 'http://127.0.0.1:1234/v1', provider: 'LM Studio' },
      { baseURL: 'http://127.0.0.1:8000/v1', provider: 'vLLM' },
    ]);
  });

  it('returns the first candidate in order that lists models, skipping closed ports and non-model servers', async () => {
    await using notFound = await startServer((_req, res) => json(res, 404, { error: 'no' }));
    await using notAList = await startServer((_req, res) => json(res, 200, { hello: 'world' }));
    await using html = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html></html>');
    });
    await using first = await startFakeOpenAIServer({ models: ['qwen3-8b', 'llama-3.2-3b'] });
    await using second = await startFakeOpenAIServer({ models: ['other'] });

    const found = await probeLocalModelServers({
      candidates: [
        { baseURL: await closedPortURL(), provider: 'closed' },
        { baseURL: notFound.baseURL, provider: 'not found' },
        { baseURL: notAList.baseURL, provider: 'not a list' },
        { baseURL: html.baseURL, provider: 'html' },
        { baseURL: `${first.url}/`, provider: 'llama.cpp' },
        { baseURL: second.url, provider: 'Ollama' },
      ],
    });

    expect(found).toStrictEqual({ baseURL: first.url, models: ['qwen3-8b', 'llama-3.2-3b'], provider: 'llama.cpp' });
    expect(notFound.seen.map((req) => req.url)).toStrictEqual(['/v1/models']);
  });

  it('prefers an earlier candidate even when a later one answers first', async () => {
    let laterAsked!: () => void;
    const laterWasAsked = new Promise<void>((resolve) => (laterAsked = resolve));
    await using earlier = await startServer(async (_req, res) => {
      await laterWasAsked;
      json(res, 200, { object: 'list', data: [{ id: 'slow-but-preferred' }] });
    });
    await using later = await startServer((_req, res) => {
      laterAsked();
      json(res, 200, { object: 'list', data: [{ id: 'fast' }] });
    });

    const found = await probeLocalModelServers({
      candidates: [
        { baseURL: earlier.baseURL, provider: 'first' },
        { baseURL: later.baseURL, provider: 'second' },
      ],
    });

    expect(found).toStrictEqual({ baseURL: earlier.baseURL, models: ['slow-but-preferred'], provider: 'first' });
  });

  it('prefers, for a model asked for, the first candidate that lists it to one before it that does not; with none, the first that answers', async () => {
    await using llama = await startFakeOpenAIServer({ models: ['llama-3.2-3b.gguf'] });
    await using ollama = await startFakeOpenAIServer({ models: ['qwen3:8b', 'llama3.2:latest'] });
    const candidates = [
      { baseURL: llama.url, provider: 'llama.cpp' },
      { baseURL: ollama.url, provider: 'Ollama' },
    ];

    const listed = await probeLocalModelServers({ candidates, model: 'qwen3:8b' });
    const tagless = await probeLocalModelServers({ candidates, model: 'llama3.2' });
    const nowhere = await probeLocalModelServers({ candidates, model: 'mistral' });

    expect(listed).toStrictEqual({ baseURL: ollama.url, models: ['qwen3:8b', 'llama3.2:latest'], provider: 'Ollama' });
    expect(tagless?.provider).toBe('Ollama');
    expect(nowhere).toStrictEqual({ baseURL: llama.url, models: ['llama-3.2-3b.gguf'], provider: 'llama.cpp' });
  });

  it('gives up on a candidate that does not answer within the timeout', async () => {
    await using silent = await startServer(() => undefined);
    await using answering = await startFakeOpenAIServer();

    const found = await probeLocalModelServers({
      // Long enough for the answering server to answer on a loaded machine (200 ms was not, in a clean clone at load
      // 7); the silent one is given up on only when it runs out.
      timeoutMs: 3_000,
      candidates: [
        { baseURL: silent.baseURL, provider: 'silent' },
        { baseURL: answering.url, provider: 'answering' },
      ],
    });

    expect(found).toStrictEqual({ baseURL: answering.url, models: ['fake-model'], provider: 'answering' });
    expect(silent.seen).toHaveLength(1);
  });

  it('returns undefined when nothing answers', async () => {
    const found = await probeLocalModelServers({ candidates: [{ baseURL: await closedPortURL(), provider: 'closed' }] });

    expect(found).toBeUndefined();
  });
});

describe('listModels', () => {
  it('sends the API key and returns the listed ids, ignoring entries without one', async () => {
    await using server = await startServer((_req, res) => json(res, 200, { object: 'list', data: [{ id: 'a' }, { name: 'no id' }, 7, { id: 'b' }] }));

    const models = await listModels(server.baseURL, 'sk-test');

    expect(models).toStrictEqual(['a', 'b']);
    expect(server.seen[0]?.headers.authorization).toBe('Bearer sk-test');
  });

  it('leaves out an id longer than a model name may be configured (256 characters), which would be the name sent and shown', async () => {
    await using server = await startServer((_req, res) => json(res, 200, { object: 'list', data: [{ id: 'x'.repeat(100_000) }, { id: 'y'.repeat(257) }, { id: 'z'.repeat(256) }, { id: 'b' }] }));

    expect(await listModels(server.baseURL)).toStrictEqual(['z'.repeat(256), 'b']);
  });

  it('refuses an answer that is too large to be a model list', async () => {
    await using server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"data": [], "padding": "${'x'.repeat(2 * 1024 * 1024)}"}`);
    });

    await expect(listModels(server.baseURL)).rejects.toThrow(/larger than/);
  });

  it('gives up at its time limit on a list that stalls after its headers, whatever the garbage collector does meanwhile', async () => {
    // Node's fetch, refusing redirects, lost its time limit at a collection: Airlock's start waited on this for good.
    let headersSent!: () => void;
    const sent = new Promise<void>((resolve) => (headersSent = resolve));
    await using server = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data": [');
      headersSent();
    });

    let settled = false;
    const failure = listModels(server.baseURL, undefined, { timeoutMs: 500 })
      .then(() => undefined, (error: unknown) => error)
      .finally(() => (settled = true));
    await sent;
    while (!settled) await collectGarbage(1);

    expect(await failure).toMatchObject({ name: 'TimeoutError' });
  });

  it('reports the HTTP status of a failed listing', async () => {
    await using server = await startServer((_req, res) => json(res, 401, { error: { message: 'bad key' } }));

    await expect(listModels(server.baseURL)).rejects.toThrow('GET /models answered HTTP 401');
  });
});
