import { createServer, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** For tests: a server on 127.0.0.1 that answers every request with `headers` and `chunks`, each written on its own. */
export async function serving(headers: OutgoingHttpHeaders, chunks: readonly string[]) {
  const server = createServer((_request, response) => {
    response.writeHead(200, headers);
    for (const chunk of chunks) response.write(chunk);
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    [Symbol.asyncDispose]: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
