import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface StallingProxy extends AsyncDisposable {
  /** Where it listens: `http://127.0.0.1:PORT`. */
  url: string;
  port: number;
  /** Where its connections go from now on (`http://host:port`): until it is named, each is closed at once. */
  forwardTo(target: string): void;
  /** How many connections it has accepted. */
  readonly accepted: number;
  /**
   * Every connection open now stops passing bytes, either way, and stays open: a path that died without closing (a
   * dropped network, a frozen server). What the client sends from then on is held. Connections accepted later pass.
   * With `clientPort`, only the connection from that port of the client's.
   */
  stall(clientPort?: number): void;
  /**
   * The stalled connections deliver what their clients sent meanwhile, then close: what a frozen server reads from
   * its socket buffers when it wakes, after its clients have given up on it.
   */
  release(): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  stalled: boolean;
  held: Buffer[];
}

/**
 * A TCP proxy on 127.0.0.1, whose connections can be stalled: the path between a client and the server it names as
 * target. It passes the Host header on as the client sent it, naming the proxy: the server admits it once the proxy's
 * origin is among its allowed ones, and proves itself to the client for that address, the one the client dialed.
 */
export async function startStallingProxy(): Promise<StallingProxy> {
  let target: URL | undefined;
  const pairs = new Set<Pair>();
  let accepted = 0;
  const server = createServer((client) => {
    accepted++;
    if (target === undefined) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    const pair: Pair = { client, upstream, stalled: false, held: [] };
    pairs.add(pair);
    client.on('data', (data: Buffer) => {
      if (pair.stalled) pair.held.push(data);
      else upstream.write(data);
    });
    upstream.on('data', (data) => {
      if (!pair.stalled) client.write(data);
    });
    const end = () => {
      if (pair.stalled) return;
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const close = async () => {
    for (const { client, upstream } of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    forwardTo: (url) => {
      target = new URL(url);
    },
    get accepted() {
      return accepted;
    },
    stall: (clientPort) => {
      for (const pair of pairs) if (clientPort === undefined || pair.client.remotePort === clientPort) pair.stalled = true;
    },
    release: () => {
      for (const pair of pairs) {
        if (!pair.stalled) continue;
        pairs.delete(pair);
        pair.client.destroy();
        for (const data of pair.held.splice(0)) pair.upstream.write(data);
        pair.upstream.end();
      }
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
