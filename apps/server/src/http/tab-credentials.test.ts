import { describe, expect, it } from 'vitest';
import { TabCredentials } from './tab-credentials';

function clocked(options: ConstructorParameters<typeof TabCredentials>[0] = {}) {
  const clock = { now: 1_000_000 };
  const credentials = new TabCredentials<string>({ graceMs: 30_000, ...options, now: () => clock.now });
  return { clock, credentials };
}

describe('TabCredentials', () => {
  it('re-opens a tab once, only after its connection closed', () => {
    const { credentials } = clocked();
    const credential = credentials.issue('conn-1');
    expect(credentials.redeem(credential)).toStrictEqual({ kind: 'open' });
    credentials.closed('conn-1');
    expect(credentials.redeem(credential)).toStrictEqual({ kind: 'redeemed' });
    expect(credentials.redeem(credential)).toStrictEqual({ kind: 'unknown' });
  });

  it('is taken for a connection that is closing, whose close is yet to be seen', () => {
    const { credentials } = clocked();
    const credential = credentials.issue('conn-1');
    expect(credentials.redeem(credential, () => true)).toStrictEqual({ kind: 'open' });
    expect(credentials.redeem(credential, () => false)).toStrictEqual({ kind: 'redeemed' });
    credentials.closed('conn-1');
    expect(credentials.size).toBe(0);
  });

  it('is worth nothing once the grace after its connection closed is over', () => {
    const { clock, credentials } = clocked();
    const credential = credentials.issue('conn-1');
    clock.now += 3_600_000;
    credentials.closed('conn-1');
    clock.now += 30_000;
    expect(credentials.redeem(credential)).toStrictEqual({ kind: 'unknown' });
    expect(credentials.size).toBe(0);
  });

  it('keeps one credential per connection: a new one replaces the last, and a revoked one is gone', () => {
    const { credentials } = clocked();
    const first = credentials.issue('conn-1');
    const second = credentials.issue('conn-1');
    credentials.closed('conn-1');
    expect(credentials.redeem(first)).toStrictEqual({ kind: 'unknown' });
    const third = credentials.issue('conn-2');
    credentials.revoke(second);
    credentials.revoke(third);
    credentials.closed('conn-2');
    expect(credentials.redeem(second)).toStrictEqual({ kind: 'unknown' });
    expect(credentials.redeem(third)).toStrictEqual({ kind: 'unknown' });
    expect(credentials.size).toBe(0);
  });

  it('keeps at most maxClosed credentials of closed connections, forgetting the oldest', () => {
    const { credentials } = clocked({ maxClosed: 4 });
    const issued = Array.from({ length: 100 }, (_, index) => {
      const credential = credentials.issue(`conn-${index}`);
      credentials.closed(`conn-${index}`);
      return credential;
    });
    expect(credentials.size).toBe(4);
    expect(credentials.redeem(issued[95]!)).toStrictEqual({ kind: 'unknown' });
    expect(credentials.redeem(issued[99]!)).toStrictEqual({ kind: 'redeemed' });
  });

  it('refuses junk over the rate, and still takes a credential that may be redeemed', () => {
    const { clock, credentials } = clocked({ rate: { attempts: 3, windowMs: 60_000 } });
    const credential = credentials.issue('conn-1');
    for (let attempt = 0; attempt < 3; attempt++) expect(credentials.redeem(`junk-${attempt}`)).toStrictEqual({ kind: 'unknown' });
    expect(credentials.redeem('A'.repeat(43))).toStrictEqual({ kind: 'too-many' });
    expect(credentials.redeem(credential)).toStrictEqual({ kind: 'too-many' });
    credentials.closed('conn-1');
    expect(credentials.redeem(credential)).toStrictEqual({ kind: 'redeemed' });
    clock.now += 60_000;
    expect(credentials.redeem('junk')).toStrictEqual({ kind: 'unknown' });
  });
});
