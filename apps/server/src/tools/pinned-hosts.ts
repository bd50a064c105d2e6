import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { untilAborted } from '../until-aborted';
import { isLoopbackAddress } from './public-address';

/** Resolves a host name into all its addresses. */
export type HostLookup = (hostname: string) => Promise<readonly LookupAddress[]>;

/** What `net.connect` calls to resolve a host (the shape of `dns.lookup`). */
export type ConnectLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/** A host name whose resolution includes an address that may not be reached by name. */
export interface RefusedHost {
  hostname: string;
  address: string;
}

/**
 * The addresses one web_fetch call may connect to. Each host name in a URL is resolved once and checked, and every
 * connection to it then goes to those addresses (`lookup`), whatever DNS answers later: checking an answer and
 * connecting through another lookup would let a name with a zero TTL answer a public address to the check and a
 * private one to the connection.
 */
export class PinnedHosts {
  readonly #pins = new Map<string, readonly LookupAddress[]>();

  constructor(
    private readonly lookupHost: HostLookup,
    private readonly isAllowed: (address: string) => boolean,
  ) {}

  /**
   * Resolves and pins the URL's host, unless it is an IP address (nothing to resolve). A name with an address that
   * is not allowed is refused; `localhost` and names under `.localhost` are allowed loopback addresses, and only those.
   */
  async pin(url: URL, signal: AbortSignal): Promise<RefusedHost | undefined> {
    const hostname = url.hostname.toLowerCase();
    if (isIP(bareHost(hostname)) !== 0 || this.#pins.has(hostname)) return undefined;
    const addresses = await untilAborted(this.lookupHost(hostname), signal);
    if (addresses.length === 0) throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
    // `localhost` names this machine plainly, so it may lead to its loopback, and only there: glibc sends
    // `name.localhost` to DNS, where a hosts file, a search domain or a hostile server can answer any address.
    const allowed = isLocalhost(hostname) ? isLoopbackAddress : this.isAllowed;
    const refused = addresses.find(({ address }) => !allowed(address));
    if (refused !== undefined) return { hostname, address: refused.address };
    this.#pins.set(hostname, addresses);
    return undefined;
  }

  /** For `net.connect`: answers only with the addresses pinned for the name, and never asks DNS. */
  readonly lookup: ConnectLookup = (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const addresses = (this.#pins.get(hostname.toLowerCase()) ?? []).filter((entry) => !family || entry.family === family);
    const first = addresses[0];
    if (first === undefined) {
      callback(Object.assign(new Error(`${hostname} was not resolved and checked before connecting`), { code: 'ENOTFOUND' }), []);
    } else if (options.all === true) {
      callback(null, addresses.map((entry) => ({ ...entry })));
    } else {
      callback(null, first.address, first.family);
    }
  };
}

function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

function isLocalhost(hostname: string): boolean {
  const name = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  return name === 'localhost' || name.endsWith('.localhost');
}
