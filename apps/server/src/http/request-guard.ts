import type { IncomingHttpHeaders } from 'node:http';

export interface RequestGuardOptions {
  /** The port the server actually listens on (not 0). */
  port: number;
  /**
   * Host names (without port) accepted besides 127.0.0.1, localhost and [::1]: the configured bind host,
   * or the machine's addresses when it binds every interface. IPv6 addresses go in brackets. Default none.
   */
  extraHostnames?: readonly string[];
  /**
   * This run's own name (`airlock-<random>.localhost`, see `freshRunHostname`), accepted as Host and in Origin like
   * the loopback names: the start-up link names it. Default none (a server beyond loopback).
   */
  runHostname?: string;
  /** Exact origins (`https://chat.example.test`) whose pages may connect besides the server's own. Default none. */
  allowedOrigins?: readonly string[];
}

export type GuardVerdict = { allowed: true } | { allowed: false; reason: string };

const LOOPBACK_HOSTNAMES = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * Host and Origin checks run on every HTTP request and WebSocket upgrade. The Host check closes DNS
 * rebinding (a rebinding page sends `Host: evil.test:PORT`); the Origin check closes cross-site WebSocket
 * hijacking, since browsers let any page open a WebSocket to 127.0.0.1 and always send its Origin.
 */
export class RequestGuard {
  private readonly hosts = new Set<string>();
  private readonly origins = new Set<string>();

  constructor(options: RequestGuardOptions) {
    const hostnames = [
      ...LOOPBACK_HOSTNAMES,
      ...(options.runHostname === undefined ? [] : [options.runHostname]),
      ...(options.extraHostnames ?? []),
    ].map((name) => name.toLowerCase());
    for (const hostname of hostnames) {
      this.hosts.add(`${hostname}:${options.port}`);
      // Browsers leave the default port out of Host.
      if (options.port === 80) this.hosts.add(hostname);
      this.origins.add(new URL(`http://${hostname}:${options.port}`).origin);
    }
    for (const origin of options.allowedOrigins ?? []) {
      const url = new URL(origin);
      this.origins.add(url.origin);
      // A page on an allowed origin may reach the server through a proxy that keeps that Host.
      this.hosts.add(url.host);
    }
  }

  /**
   * `rawHeaders` (the request's, as sent) refuses a request naming its host twice: Node keeps the first Host, and a
   * proxy in front may act on the last.
   */
  check(headers: IncomingHttpHeaders, rawHeaders: readonly string[] = []): GuardVerdict {
    const host = headers.host;
    if (host === undefined || host === '') return { allowed: false, reason: 'missing Host header' };
    if (countHeader(rawHeaders, 'host') > 1) return { allowed: false, reason: 'more than one Host header' };
    if (!this.hosts.has(host.toLowerCase())) return { allowed: false, reason: 'Host not allowed' };
    const origin = headers.origin;
    // No Origin: not a browser page (curl, a Node client); the Host check above still applies.
    if (origin === undefined) return { allowed: true };
    if (!this.origins.has(origin)) return { allowed: false, reason: 'Origin not allowed' };
    return { allowed: true };
  }
}

/** How often a header is given in Node's `rawHeaders` (names and values alternate). */
function countHeader(rawHeaders: readonly string[], name: string): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) count++;
  return count;
}
