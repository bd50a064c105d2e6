import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseStartupLink, resolveStartupLink, shownAddress, socketUrl } from './startup-link';

describe('parseStartupLink', () => {
  it('reads the endpoint and the token from the link the server prints', () => {
    expect(parseStartupLink('http://127.0.0.1:7700/#token=tok_abc%2Bdef')).toStrictEqual({ url: 'ws://127.0.0.1:7700/trpc', token: 'tok_abc+def' });
  });

  it('keeps https as wss and a ws endpoint as it is', () => {
    expect(parseStartupLink('https://airlock.example:8443/#token=t')).toStrictEqual({ url: 'wss://airlock.example:8443/trpc', token: 't' });
    expect(parseStartupLink(' ws://[::1]:7700/trpc#token=t ')).toStrictEqual({ url: 'ws://[::1]:7700/trpc', token: 't' });
  });

  it('adds the endpoint\'s path to a ws(s) address that names none, and keeps any other path (a proxy\'s)', () => {
    expect(socketUrl('ws://127.0.0.1:7700')).toBe('ws://127.0.0.1:7700/trpc');
    expect(socketUrl('wss://airlock.example/')).toBe('wss://airlock.example/trpc');
    expect(parseStartupLink('ws://127.0.0.1:7700/#code=AbC_-1')).toStrictEqual({ url: 'ws://127.0.0.1:7700/trpc', token: '', code: 'AbC_-1' });
    expect(socketUrl('wss://proxy.example/airlock/trpc')).toBe('wss://proxy.example/airlock/trpc');
  });

  it('connects to 127.0.0.1 for a link naming the run’s *.localhost origin, which Node does not resolve', () => {
    expect(parseStartupLink('http://airlock-abcdefghij234567.localhost:7700/#token=t')).toStrictEqual({ url: 'ws://127.0.0.1:7700/trpc', token: 't' });
    expect(parseStartupLink('ws://Airlock-X.LocalHost:7700/trpc')).toStrictEqual({ url: 'ws://127.0.0.1:7700/trpc', token: '' });
    expect(socketUrl('http://airlock-abcdefghij234567.localhost:7700')).toBe('ws://127.0.0.1:7700/trpc');
    // Only names under localhost: another name ending like it is left alone.
    expect(socketUrl('http://notlocalhost:7700')).toBe('ws://notlocalhost:7700/trpc');
  });

  it('reads the one-time code of the link the server prints, which carries no token', () => {
    expect(parseStartupLink('http://airlock-abcdefghij234567.localhost:7700/#code=AbC_-1')).toStrictEqual({ url: 'ws://127.0.0.1:7700/trpc', token: '', code: 'AbC_-1' });
  });

  it('answers an empty token when the link has none', () => {
    expect(parseStartupLink('http://localhost:7700/')).toStrictEqual({ url: 'ws://localhost:7700/trpc', token: '' });
  });
});

describe('socketUrl', () => {
  it('refuses what is not a web URL', () => {
    expect(() => socketUrl('file:///etc/passwd')).toThrow(/http\(s\) or ws\(s\)/);
    expect(() => socketUrl('not a url')).toThrow();
  });
});

describe('shownAddress', () => {
  it('hides the token of a start-up link, parsed or not', () => {
    expect(shownAddress('http://127.0.0.1:7700/#token=tok_SECRET')).toBe('http://127.0.0.1:7700/#token=<hidden>');
    expect(shownAddress('htp//127.0.0.1:47811/#token=SECRET')).toBe('htp//127.0.0.1:47811/#token=<hidden>');
    expect(shownAddress('http://host/#a=1&token=SECRET&b=2')).toBe('http://host/#a=1&token=<hidden>&b=2');
    expect(shownAddress('htp//127.0.0.1:47811/#code=SECRET')).toBe('htp//127.0.0.1:47811/#code=<hidden>');
  });

  it('hides a query parameter named token, and leaves other parameters and an address without one alone', () => {
    expect(shownAddress('ws://127.0.0.1:7700/trpc?token=SECRET')).toBe('ws://127.0.0.1:7700/trpc?token=<hidden>');
    expect(shownAddress('ws://h/trpc?x=1&Token=SECRET#token=OTHER')).toBe('ws://h/trpc?x=1&Token=<hidden>#token=<hidden>');
    expect(shownAddress('ws://h/trpc?tokens=1&mytoken=2')).toBe('ws://h/trpc?tokens=1&mytoken=2');
    expect(shownAddress('http://127.0.0.1:7700/')).toBe('http://127.0.0.1:7700/');
  });
});

describe('resolveStartupLink', () => {
  it('fails, saying so, when whatever holds the port accepts the connection and never answers the code’s exchange', async () => {
    const accepted = new Set<Socket>();
    const silent = createServer((socket) => accepted.add(socket));
    // Seen by this server once its loop gets to it, which a busy machine can put after the client's timer.
    const taken = once(silent, 'connection');
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    await using _silent = {
      [Symbol.asyncDispose]: async () => {
        for (const socket of accepted) socket.destroy();
        await new Promise((resolve) => silent.close(resolve));
      },
    };
    const { port } = silent.address() as AddressInfo;
    const link = `http://airlock-abcdefghij234567.localhost:${port}/#code=AbCdEfGhIjKlMnOpQrStUvWxYz0`;

    await expect(resolveStartupLink(link, { timeoutMs: 200 })).rejects.toThrow(
      new Error(`no answer from http://127.0.0.1:${port} within 0.2 s: whatever holds that port took the connection and answered nothing (a frozen server, or not Airlock)`),
    );
    await taken;
    expect(accepted.size).toBe(1);
  });
});
