import type { ConnectionState } from './connection-status';

const labels: Record<ConnectionState, string> = {
  connecting: 'Connecting…',
  connected: 'Connected',
  reconnecting: 'Reconnecting…',
  offline: 'Offline, retrying',
  unauthorized: 'Not authorized',
};

export function ConnectionIndicator({ state }: { state: ConnectionState }) {
  return (
    <span className="connection" data-state={state} role="status" aria-label={`Connection: ${labels[state]}`}>
      <span className="dot" aria-hidden="true" />
      {labels[state]}
    </span>
  );
}
