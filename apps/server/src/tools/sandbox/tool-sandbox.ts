import { probeBubblewrap, type NamespaceProbe } from './probe-bubblewrap';

/** How terminal and python calls are held: `auto` uses bubblewrap when it can start here, else runs without a sandbox. */
export type SandboxMode = 'auto' | 'bubblewrap' | 'none';

/** The sandbox chosen for this server's calls; `unsizedTmpfs`, `unshare` and `unbounded`: see BubblewrapProbe. */
export type ToolSandbox = ({ kind: 'bubblewrap'; bwrap: string; network: boolean; unsizedTmpfs?: true } & NamespaceProbe) | { kind: 'none'; reason: string };

/** A sandbox was required (mode `bubblewrap`, or the network turned off) and cannot start here. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
  constructor(readonly reason: string) {
    super(`the tool sandbox cannot start: ${reason}`);
  }
}

export interface ResolveSandboxOptions {
  mode: SandboxMode;
  /** Whether calls may reach the network; off needs bubblewrap. */
  network: boolean;
}

/** Picks the sandbox for a mode; bubblewrap is probed once per process. Throws SandboxUnavailableError when a required one cannot start. */
export async function resolveToolSandbox({ mode, network }: ResolveSandboxOptions): Promise<ToolSandbox> {
  if (mode === 'none') {
    if (!network) throw new SandboxUnavailableError('turning the network off needs the bubblewrap sandbox, which is turned off');
    return { kind: 'none', reason: 'the sandbox is turned off (--tool-sandbox none)' };
  }
  const probe = await probeBubblewrap(network);
  if (probe.available) {
    return { kind: 'bubblewrap', bwrap: probe.bwrap, network, ...(probe.unsizedTmpfs ? { unsizedTmpfs: true } : {}), ...('unshare' in probe ? { unshare: probe.unshare, ...(probe.ipcUnbounded === undefined ? {} : { ipcUnbounded: probe.ipcUnbounded }) } : { unbounded: probe.unbounded }) };
  }
  if (mode === 'bubblewrap' || !network) throw new SandboxUnavailableError(probe.reason);
  return { kind: 'none', reason: probe.reason };
}
