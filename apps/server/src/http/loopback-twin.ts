import type { Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';

/** Listens `server` on `host`:`port`; rejects with the listen error (its `code` says why). */
export type ListenTwin = (server: NetServer, port: number, host: string) => Promise<void>;

/** Another process holds the twin address on this port. */
export class TwinAddressInUseError extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
  ) {
    super(`port ${port} on ${host} is already in use`);
    this.name = 'TwinAddressInUseError';
  }
}

/**
 * The other loopback address of a server bound to one: a browser resolves `localhost` and `*.localhost` names to both,
 * trying [::1] first (Chromium), so whoever holds the other one on the same port gets the page. Undefined for any
 * other address.
 */
export function loopbackTwin(address: string): string | undefined {
  if (address === '127.0.0.1') return '::1';
  if (address === '::1') return '127.0.0.1';
  return undefined;
}

/**
 * The loopback address a server bound to `address` must hold besides it, for the same reason: the twin of a loopback
 * address, and [::1] for 0.0.0.0, which takes in 127.0.0.1 but no IPv6 address. `::` takes in both (Node binds it
 * dual-stack). Undefined for any other address.
 */
export function loopbackToHold(address: string): string | undefined {
  return address === '0.0.0.0' ? '::1' : loopbackTwin(address);
}

/**
 * Holds `host`:`port` too and hands each connection it accepts to `httpServer`, which serves it as one of its own: one
 * request handler, one count of connections, the same deadlines. Undefined when this machine has no such address (no
 * IPv6: nobody else can hold it either). Throws TwinAddressInUseError when another process holds it.
 */
export async function holdLoopbackTwin(httpServer: HttpServer, host: string, port: number, listen: ListenTwin = listenOn): Promise<NetServer | undefined> {
  const twin = createNetServer({ noDelay: true });
  twin.on('connection', (socket) => httpServer.emit('connection', socket));
  try {
    await listen(twin, port, host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRNOTAVAIL' || code === 'EAFNOSUPPORT') return undefined;
    if (code === 'EADDRINUSE') throw new TwinAddressInUseError(host, port);
    throw error;
  }
  return twin;
}

async function listenOn(server: NetServer, port: number, host: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // ipv6Only: [::1] alone, never also the IPv4 side.
    server.listen({ port, host, ipv6Only: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
