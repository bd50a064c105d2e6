import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { collectGarbage } from '../../test/support/collect-garbage';
import { stoppableFetch } from './stoppable-fetch';

interface Heard {
  url: string;
  /** Settles when the request's connection closes. */
  closed: Promise<void>;
}

let server: Server | undefined;

/** A server doing `answer` with each request; `heard` settles at the first, once it is answered so far. */
async function serve(answer: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ url: string; heard: Promise<Heard> }> {
  let hear!: (heard: Heard) => void;
  const heard = new Promise<Heard>((resolve) => (hear = resolve));
  server = createServer((request, response) => {
    request.resume();
    const closed = new Promise<void>((resolve) => request.socket.once('close', () => resolve()));
    answer(request, response);
    hear({ url: request.url ?? '', closed });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, heard };
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

const stallAfterOnePiece = (_request: IncomingMessage, response: ServerResponse) => {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.write('data: one\n\n');
};

// Each case collects garbage with the request under way. Node 20's own fetch then loses the signal of a request that
// refuses redirects (without stoppableFetch, the first row's stalled bodies never end, by an abort or a timeout); the
// other rows hold the fetches Airlock calls, and whichever undici comes next, to the same.
describe.each([
  ["Node's fetch, redirects refused", fetch, 'error'],
  ["Node's fetch, redirects returned", fetch, 'manual'],
  ["undici's fetch, redirects returned", undiciFetch as unknown as typeof fetch, 'manual'],
] as const)('stoppableFetch over %s, with collections during the request', (_name, send, redirect) => {
  it('an abort ends a body that stalls, and closes its connection', async () => {
    const { url, heard } = await serve(stallAfterOnePiece);
    const controller = new AbortController();
    const response = await stoppableFetch(send)(url, { signal: controller.signal, redirect });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value as Uint8Array)).toBe('data: one\n\n');
    const { closed } = await heard;
    await collectGarbage();

    const reason = new Error('stopped by the person');
    controller.abort(reason);
    await expect(reader.read()).rejects.toBe(reason);
    await closed;
  });

  it('an abort ends the wait for headers that never come, with the reason fetch gives', async () => {
    const { url, heard } = await serve(() => undefined);
    const controller = new AbortController();
    const answer = stoppableFetch(send)(url, { signal: controller.signal, redirect });
    await heard;
    await collectGarbage();

    controller.abort();
    await expect(answer).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a timeout signal ends a body that stalls', async () => {
    const { url, heard } = await serve(stallAfterOnePiece);
    const response = await stoppableFetch(send)(url, { signal: AbortSignal.timeout(300), redirect });
    const reader = response.body!.getReader();
    await reader.read();
    await heard;
    await collectGarbage();

    await expect(reader.read()).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});

describe('stoppableFetch', () => {
  it('hands an answer on whole: status, headers and every byte, and lets go of the signal at its end', async () => {
    const { url } = await serve((_request, response) => {
      response.writeHead(201, 'Made', { 'x-kind': 'whole' });
      response.write('first ');
      response.end('second');
    });
    const controller = new AbortController();
    const response = await stoppableFetch(fetch)(url, { signal: controller.signal });
    expect([response.status, response.statusText, response.headers.get('x-kind')]).toStrictEqual([201, 'Made', 'whole']);
    expect(await response.text()).toBe('first second');
    // Read to its end, the body has no more use for the signal: an abort now fails nothing.
    controller.abort();
  });

  it('refuses at once on a signal aborted before the request', async () => {
    const { url } = await serve(stallAfterOnePiece);
    const reason = new Error('already stopped');
    let sent = false;
    const send = (async (...args: Parameters<typeof fetch>) => {
      sent = true;
      return await fetch(...args);
    }) as typeof fetch;
    await expect(stoppableFetch(send)(url, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(sent).toBe(false);
  });

  it('cancelling the body it hands on cancels the one underneath', async () => {
    const { url, heard } = await serve(stallAfterOnePiece);
    const response = await stoppableFetch(fetch)(url, { signal: new AbortController().signal });
    const { closed } = await heard;
    await response.body!.cancel();
    await closed;
  });

  it('passes a request without a signal through untouched', async () => {
    const { url } = await serve((_request, response) => response.end('plain'));
    const answered = await fetch(url);
    let passed: Response | undefined;
    const send = (async () => (passed = answered)) as unknown as typeof fetch;
    expect(await stoppableFetch(send)(url)).toBe(passed);
  });
});
