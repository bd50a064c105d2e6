import { useNow } from '../lib/use-now';

export function Countdown({ expiresAt }: { expiresAt: number | null }) {
  const now = useNow(1000, expiresAt !== null);
  if (expiresAt === null) return <span className="countdown">No time limit</span>;
  const left = expiresAt - now;
  return (
    <span className="countdown" role="timer" data-urgent={left < 30_000}>
      {left > 0 ? `Times out in ${formatDuration(left)}` : 'Timing out…'}
    </span>
  );
}

export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}
