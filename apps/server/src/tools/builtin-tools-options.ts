import { lookup } from 'node:dns/promises';
import type { HostLookup } from './pinned-hosts';
import { PROCESS_TIMERS, type ProcessClock } from './process-runner';
import { isRemotePublicAddress } from './public-address';
import { checkedMaxOpenFiles, checkedMaxProcesses, DEFAULT_MAX_OPEN_FILES, DEFAULT_MAX_PROCESSES } from './sandbox/process-limit';
import { checkedTmpfsMiB, DEFAULT_TMPFS_MIB } from './sandbox/tmpfs-size';
import type { SandboxMode, ToolSandbox } from './sandbox/tool-sandbox';

export interface BuiltinToolsOptions {
  /** Absolute folder the tools act in: the terminal's working directory and the only place files are read or written. */
  workspace: string;
  /** Values that must never appear in a child process's environment, e.g. the server's own access token. Default none. */
  secretValues?: readonly string[];
  /**
   * Environment from which child processes inherit allowlisted variables; its HOME, XDG_CONFIG_HOME and
   * XDG_CACHE_HOME also say where the browser profiles hidden from tools are. Default `process.env`.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Timeout of a command when the call context carries none. Default 120,000 ms. */
  defaultTimeoutMs?: number;
  /** The clock a command's timeout is counted on. Default the process's timers; a test's own, to move. */
  clock?: ProcessClock;
  /** Output of terminal and python kept, head and tail together. Default 64 KiB. */
  maxOutputBytes?: number;
  /** Time between SIGTERM and SIGKILL when stopping a command. Default 2,000 ms. */
  killGraceMs?: number;
  /**
   * How terminal and python are held: a mode (`auto` uses bubblewrap when it can start here, else runs without a
   * sandbox; `bubblewrap` refuses to run without it; `none`), or a sandbox already resolved. Default `auto`.
   */
  sandbox?: SandboxMode | ToolSandbox;
  /** Whether sandboxed calls reach the network; off needs bubblewrap. Default true. */
  network?: boolean;
  /**
   * Processes, threads included, one sandboxed terminal or python call may run at once; a fork over it fails.
   * Holds only in the bubblewrap sandbox, and not when this server runs as root. 16 to 4,194,304 (else
   * createBuiltinTools throws); default 1,024.
   */
  maxProcesses?: number;
  /**
   * Files each process of a sandboxed terminal or python call may have open at once (RLIMIT_NOFILE, soft and hard); an
   * open past it fails with EMFILE. Holds only in the bubblewrap sandbox. 16 to 1,048,576 (else createBuiltinTools
   * throws); default 1,024.
   */
  maxOpenFiles?: number;
  /**
   * MiB a sandboxed terminal or python call's /tmp and /dev/shm may each hold; a write past it fails with ENOSPC ("No
   * space left on device"). Needs bubblewrap 0.7.0 or later. 1 to 1,048,576 (else createBuiltinTools throws); default 512.
   */
  tmpfsMiB?: number;
  /** Folders and files a sandboxed call must not see (data dir, token and key files). Default none. */
  hiddenPaths?: readonly string[];
  /**
   * The files this server's output goes to now (`nohup.out`, a log), which hold its start-up link: hidden as the hidden
   * paths are, but looked up at each use and held to nothing, so a log rotated away is followed and refuses no call.
   * Default none.
   */
  outputFiles?: () => readonly string[];
  /** Bytes read_file returns at most. Default 1 MiB. */
  maxReadBytes?: number;
  /** Bytes read_file reads through, at most, looking for the line its offset names. Default 64 MiB. */
  maxScanBytes?: number;
  /** Bytes write_file accepts at most. Default 5 MiB. */
  maxWriteBytes?: number;
  /** Entries list_directory returns at most. Default 1,000. */
  maxDirectoryEntries?: number;
  /** Bytes of a response body web_fetch reads at most. Default 2 MiB. */
  maxFetchBytes?: number;
  /** Redirects web_fetch follows at most. Default 5. */
  maxRedirects?: number;
  /** Timeout of one web_fetch call, shortened by the call context's own. Default 30,000 ms. */
  fetchTimeoutMs?: number;
  /**
   * Resolves a host name in a web_fetch URL into all its addresses, once per call: they are checked with
   * `isFetchableAddress`, and the request connects only to them. Default node:dns `lookup` with `all: true`.
   */
  fetchLookup?: HostLookup;
  /**
   * Whether web_fetch may connect to an address a host name resolved to; a URL naming an IP address or `localhost`
   * is not checked (the person saw it). Default `isRemotePublicAddress`: public unicast only, and neither this
   * machine's own address nor one of its interfaces' networks.
   */
  isFetchableAddress?: (address: string) => boolean;
  /** Receives a line for each call refused for the server's own reasons (a hidden path moved). Default `console.warn`. */
  log?: (line: string) => void;
}

export type ResolvedToolsOptions = Required<BuiltinToolsOptions>;

export function resolveToolsOptions(options: BuiltinToolsOptions): ResolvedToolsOptions {
  return {
    workspace: options.workspace,
    secretValues: options.secretValues ?? [],
    env: options.env ?? process.env,
    defaultTimeoutMs: options.defaultTimeoutMs ?? 120_000,
    clock: options.clock ?? PROCESS_TIMERS,
    maxOutputBytes: options.maxOutputBytes ?? 64 * 1024,
    killGraceMs: options.killGraceMs ?? 2_000,
    sandbox: options.sandbox ?? 'auto',
    network: options.network ?? true,
    maxProcesses: checkedMaxProcesses(options.maxProcesses ?? DEFAULT_MAX_PROCESSES),
    maxOpenFiles: checkedMaxOpenFiles(options.maxOpenFiles ?? DEFAULT_MAX_OPEN_FILES),
    tmpfsMiB: checkedTmpfsMiB(options.tmpfsMiB ?? DEFAULT_TMPFS_MIB),
    hiddenPaths: options.hiddenPaths ?? [],
    outputFiles: options.outputFiles ?? (() => []),
    maxReadBytes: options.maxReadBytes ?? 1024 * 1024,
    maxScanBytes: options.maxScanBytes ?? 64 * 1024 * 1024,
    maxWriteBytes: options.maxWriteBytes ?? 5 * 1024 * 1024,
    maxDirectoryEntries: options.maxDirectoryEntries ?? 1_000,
    maxFetchBytes: options.maxFetchBytes ?? 2 * 1024 * 1024,
    maxRedirects: options.maxRedirects ?? 5,
    fetchTimeoutMs: options.fetchTimeoutMs ?? 30_000,
    fetchLookup: options.fetchLookup ?? ((hostname: string) => lookup(hostname, { all: true })),
    isFetchableAddress: options.isFetchableAddress ?? ((address: string) => isRemotePublicAddress(address)),
    log: options.log ?? ((line: string) => console.warn(line)),
  };
}

/** The timeout a call gets: the context's when it has a usable one, else the default. */
export function callTimeoutMs(contextTimeoutMs: number, fallbackMs: number): number {
  return Number.isFinite(contextTimeoutMs) && contextTimeoutMs > 0 ? contextTimeoutMs : fallbackMs;
}
