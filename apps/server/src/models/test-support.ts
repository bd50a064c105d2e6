import { ModelError, type ModelPart } from '@airlock/core';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';

/** Reads `stream` until it fails, pushing each part it gave before to `parts`; answers the ModelError it failed with. */
export async function failure(stream: AsyncIterable<ModelPart>, parts: ModelPart[] = []): Promise<ModelError> {
  try {
    for await (const part of stream) parts.push(part);
  } catch (error) {
    expect(error).toBeInstanceOf(ModelError);
    return error as ModelError;
  }
  throw new Error('the stream did not fail');
}

/** A model server on 127.0.0.1 that answers every request with `body` as `contentType`, status 200. */
export async function answeringServer(contentType: string, body: string): Promise<{ url: string } & AsyncDisposable> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': contentType });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    [Symbol.asyncDispose]: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
