import { describe, expect, it } from 'vitest';
import { relativeTime } from './relative-time';

const now = Date.UTC(2026, 5, 15, 12, 0, 0);

describe('relativeTime', () => {
  it('counts minutes, hours and days', () => {
    expect(relativeTime(now - 10_000, now)).toBe('just now');
    expect(relativeTime(now - 3 * 60_000, now)).toBe('3 min ago');
    expect(relativeTime(now - 2 * 3_600_000 - 5, now)).toBe('2 h ago');
    expect(relativeTime(now - 30 * 3_600_000, now)).toBe('yesterday');
    expect(relativeTime(now - 5 * 86_400_000, now)).toBe('5 days ago');
  });

  it('gives a date past a week, and never a time in the future', () => {
    expect(relativeTime(now - 30 * 86_400_000, now)).toMatch(/2026/);
    expect(relativeTime(now + 60_000, now)).toBe('just now');
  });
});
