import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

export interface StallingProxy extends AsyncDisposable {
  /** The port it listens on, 127.0.0.1. */
  port: number;
  /** How many connections it has accepted. */
  readonly accepted: number;
  /**
   * Every connection open now stops passing bytes, either way, and stays open: a path that died without closing (a
   * dropped network, a frozen server). What reaches it from then on is dropped. Connections accepted later pass.
   */
  stall(): void;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 to `target`, whose connections can be stalled. */
export async function startStallingProxy(target: { host: string; port: number }): Promise<StallingProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket; stalled: boolean }>();
  let accepted = 0;
  const server = createServer((client) => {
    accepted++;
    const upstream = connect(target.port, target.host);
    const pair = { client, upstream, stalled: false };
    pairs.add(pair);
    client.on('data', (data) => {
      if (!pair.stalled) upstream.write(data);
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
  const close = async () => {
    for (const { client, upstream } of pairs) {
      client.destroy();
      upstream.destroy();
    }
    pairs.clear();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    port: (server.address() as AddressInfo).port,
    get accepted() {
      return accepted;
    },
    stall: () => {
      for (const pair of pairs) pair.stalled = true;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
