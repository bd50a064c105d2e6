import type { RejectionReason } from '@airlock/client';

export type ConnectionStatus =
  | { state: 'connecting' }
  | { state: 'connected' }
  | { state: 'reconnecting' }
  | { state: 'offline' }
  /**
   * `reason`: "refused", the server refused the token; "unproven", it could not prove it is Airlock (nothing was sent);
   * "moved", the server was started again on a new address, which refuses this page's (the token may be the same).
   */
  | { state: 'unauthorized'; message: string; reason: RejectionReason | 'moved' };

export type ConnectionState = ConnectionStatus['state'];

/** A tiny external store for useSyncExternalStore: the WebSocket callbacks write, React reads. */
export class ConnectionStatusStore {
  private status: ConnectionStatus = { state: 'connecting' };
  private readonly listeners = new Set<() => void>();

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getSnapshot = (): ConnectionStatus => this.status;

  set(status: ConnectionStatus): void {
    if (this.status.state === 'unauthorized') return;
    if (status.state === this.status.state) return;
    this.status = status;
    for (const listener of this.listeners) listener();
  }
}
