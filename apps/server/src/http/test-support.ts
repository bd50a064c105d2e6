import dns from 'node:dns';
import { vi } from 'vitest';

/**
 * Makes `dns.lookup` answer for `localhost` as a stock Debian or Ubuntu hosts file does — `::1` first, then 127.0.0.1 —
 * whatever this machine's says; other names as before. Returns the restore.
 */
export function resolveLocalhostAsStock(): () => void {
  const system = dns.lookup;
  const lookup = vi.spyOn(dns, 'lookup').mockImplementation(((hostname: string, options: unknown, callback: (...args: unknown[]) => void) => {
    if (hostname !== 'localhost') return (system as (...args: unknown[]) => void)(hostname, options, callback);
    if (typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true) callback(null, [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }]);
    else callback(null, '::1', 6);
  }) as unknown as typeof dns.lookup);
  return () => lookup.mockRestore();
}
