import { describe, expect, it } from 'vitest';
import { RequestGuard } from './request-guard';
import { freshRunHostname } from './run-hostname';

const PORT = 7700;

describe('RequestGuard and the run’s own name', () => {
  it('accepts the run’s name as Host and as Origin', () => {
    const name = freshRunHostname();
    const guard = new RequestGuard({ port: PORT, runHostname: name });

    expect(guard.check({ host: `${name}:${PORT}` })).toStrictEqual({ allowed: true });
    expect(guard.check({ host: `${name}:${PORT}`, origin: `http://${name}:${PORT}` })).toStrictEqual({ allowed: true });
    // A page on the run's origin reaching the server through a loopback name, as the Node clients do.
    expect(guard.check({ host: `127.0.0.1:${PORT}`, origin: `http://${name}:${PORT}` })).toStrictEqual({ allowed: true });
  });

  it('refuses another *.localhost name, as Host and as Origin, and the run’s name on another port', () => {
    const name = freshRunHostname();
    const other = freshRunHostname();
    const guard = new RequestGuard({ port: PORT, runHostname: name });

    expect(guard.check({ host: `${other}:${PORT}` })).toStrictEqual({ allowed: false, reason: 'Host not allowed' });
    expect(guard.check({ host: `x.localhost:${PORT}` })).toStrictEqual({ allowed: false, reason: 'Host not allowed' });
    expect(guard.check({ host: `${name}:${PORT + 1}` })).toStrictEqual({ allowed: false, reason: 'Host not allowed' });
    expect(guard.check({ host: `127.0.0.1:${PORT}`, origin: `http://${other}:${PORT}` })).toStrictEqual({ allowed: false, reason: 'Origin not allowed' });
    expect(guard.check({ host: `${name}:${PORT}`, origin: `http://sub.${name}:${PORT}` })).toStrictEqual({ allowed: false, reason: 'Origin not allowed' });
  });

  it('still accepts the loopback names, for Node clients and a token pasted on http://127.0.0.1', () => {
    const guard = new RequestGuard({ port: PORT, runHostname: freshRunHostname() });

    expect(guard.check({ host: `127.0.0.1:${PORT}`, origin: `http://127.0.0.1:${PORT}` })).toStrictEqual({ allowed: true });
    expect(guard.check({ host: `localhost:${PORT}`, origin: `http://localhost:${PORT}` })).toStrictEqual({ allowed: true });
    expect(guard.check({ host: `[::1]:${PORT}` })).toStrictEqual({ allowed: true });
  });
});

describe('freshRunHostname', () => {
  it('is a valid DNS label under .localhost holding 80 random bits in lower-case base32, new each run', () => {
    const names = Array.from({ length: 50 }, () => freshRunHostname());

    for (const name of names) expect(name).toMatch(/^airlock-[a-z2-7]{16}\.localhost$/);
    expect(new Set(names).size).toBe(names.length);
    expect(names.every((name) => name.split('.')[0]!.length <= 63 && new URL(`http://${name}:${PORT}/`).hostname === name)).toBe(true);
  });
});
