import { lookup as systemLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { connect, Socket } from 'node:net';
import type { Agent, fetch as undiciFetch, RequestInfo as UndiciRequestInfo, RequestInit as UndiciRequestInit } from 'undici';

/** The loopback addresses a `localhost` name stands for, in the order they are tried. */
const LOOPBACKS = ['127.0.0.1', '::1'] as const;
export type LoopbackAddress = (typeof LOOPBACKS)[number];

/** Whether `hostname` (as a URL gives it) is a name that stands for this machine: `localhost` and `*.localhost`. */
export function isLoopbackName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/u, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/** Whether something accepts a TCP connection at `address`:`port` (refused, unreachable or slow: no). */
export type Answers = (address: LoopbackAddress, port: number) => Promise<boolean>;

/** How long a loopback address may take to accept: one that answers at all does so at once. */
const ANSWER_TIMEOUT_MS = 1_000;

const answersOnLoopback: Answers = (address, port) =>
  new Promise((resolve) => {
    const socket = connect({ host: address, port, noDelay: true });
    const done = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(ANSWER_TIMEOUT_MS, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
/** The shape of `dns.lookup` that `net.connect` calls (with `all` when it tries several addresses). */
export type LookupFunction = (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback) => void;

/**
 * Where requests to a server named `localhost` (or `*.localhost`) on `port` go: to the one loopback address the
 * server holds, never to both. Such a name stands for 127.0.0.1 and ::1, tried in the resolver's order (::1 first on a
 * stock Debian or Ubuntu), and a local model server usually holds only 127.0.0.1 (Ollama's and llama.cpp's default):
 * a tool call with the network can hold the other one on the same port, and the request — the API key, the chat, an
 * MCP server's headers — would go to it. The address is the first that accepts a connection, 127.0.0.1 first, found
 * once and kept (looked for again while neither answers, meanwhile 127.0.0.1). Other names resolve as usual.
 */
export class LoopbackPin {
  #pinned: Promise<LoopbackAddress> | undefined;

  constructor(
    private readonly port: number,
    private readonly answers: Answers = answersOnLoopback,
  ) {}

  /** The address the name stands for now (see the class). */
  address(): Promise<LoopbackAddress> {
    this.#pinned ??= this.#find().then((found) => {
      if (found === undefined) this.#pinned = undefined;
      return found ?? '127.0.0.1';
    });
    return this.#pinned;
  }

  /** A `lookup` for `net.connect` (and undici's `connect` options): loopback names to the pinned address. */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    if (!isLoopbackName(hostname)) {
      systemLookup(hostname, options as LookupAllOptions, callback as never);
      return;
    }
    this.address().then(
      (address) => {
        const family = address.includes(':') ? 6 : 4;
        if (options.all === true) callback(null, [{ address, family }]);
        else callback(null, address, family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, ''),
    );
  };

  async #find(): Promise<LoopbackAddress | undefined> {
    for (const address of LOOPBACKS) if (await this.answers(address, this.port)) return address;
    return undefined;
  }
}

/** The pin for `url` when its host is a loopback name; undefined for any other host (an address is its own pin). */
export function loopbackPinFor(url: string | URL, answers?: Answers): LoopbackPin | undefined {
  const parsed = typeof url === 'string' ? new URL(url) : url;
  if (!isLoopbackName(parsed.hostname)) return undefined;
  const port = parsed.port === '' ? (DEFAULT_PORTS[parsed.protocol] ?? 80) : Number(parsed.port);
  return new LoopbackPin(port, answers);
}

/** The port a URL of each scheme means when it names none. */
const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443, 'postgres:': 5432, 'postgresql:': 5432 };

/**
 * A fetch whose requests to a `localhost` host reach the one loopback address it holds (see LoopbackPin); undefined
 * for a URL with any other host, for which the global fetch does. Undici's own fetch: the global one cannot take this
 * dispatcher, being an older undici inside Node.
 */
export function loopbackPinnedFetch(url: string | URL, answers?: Answers, options: { findNow?: boolean } = {}): typeof fetch | undefined {
  const pin = loopbackPinFor(url, answers);
  if (pin === undefined) return undefined;
  // Looked for at once rather than at the first request, which may come after a call that could hold the address.
  if (options.findNow === true) void pin.address();
  // undici is imported at the first request, not at start-up.
  let client: Promise<{ send: typeof undiciFetch; dispatcher: Agent }> | undefined;
  const pinned = async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    client ??= import('undici').then((undici) => ({ send: undici.fetch, dispatcher: new undici.Agent({ connect: { lookup: pin.lookup } }) }));
    const { send, dispatcher } = await client;
    return await send(input as UndiciRequestInfo, { ...init, dispatcher } as UndiciRequestInit);
  };
  // Needed where the web app's browser tests type-check this file: there Response is the DOM's, not undici's.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  return pinned as unknown as typeof fetch;
}

/**
 * For a client that takes a socket rather than a `lookup` (node-postgres's `stream`): a socket whose `connect(port,
 * host)` to a loopback name goes to the address `pin` holds. The name stays the client's: a `.pgpass` line for
 * `localhost` still matches, and TLS still checks the name.
 */
export function loopbackPinnedSocket(pin: LoopbackPin): Socket {
  const socket = new Socket();
  const connect = socket.connect.bind(socket) as (...args: unknown[]) => Socket;
  socket.connect = ((...args: unknown[]) => {
    const [port, host] = args;
    if (typeof port === 'number' && typeof host === 'string' && isLoopbackName(host)) return connect({ port, host, lookup: pin.lookup });
    return connect(...args);
  });
  return socket;
}
