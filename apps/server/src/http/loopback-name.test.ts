import { createServer, type Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isLoopbackName, LoopbackPin, loopbackPinFor, loopbackPinnedFetch, type LoopbackAddress } from './loopback-name';

/** The address a pin's lookup gives `hostname`, as `net.connect` asks for it (all addresses). */
function lookUp(pin: LoopbackPin, hostname: string): Promise<{ address: string; family: number }[]> {
  return new Promise((resolve, reject) =>
    pin.lookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses as { address: string; family: number }[]))),
  );
}

/** An `answers` that says yes for `holding`, counting what it was asked. */
function holding(...addresses: LoopbackAddress[]) {
  const asked: string[] = [];
  const answers = (address: LoopbackAddress, port: number) => {
    asked.push(`${address}:${port}`);
    return Promise.resolve(addresses.includes(address));
  };
  return { answers, asked };
}

async function listen(server: Server, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
  return (server.address() as { port: number }).port;
}

describe('isLoopbackName', () => {
  it('is localhost and *.localhost, in any case, with or without the final dot; not names that only contain it', () => {
    for (const name of ['localhost', 'LocalHost', 'localhost.', 'model.localhost', 'a.b.LOCALHOST']) expect(isLoopbackName(name)).toBe(true);
    for (const name of ['localhost.example.com', 'notlocalhost', 'localhost-model', '127.0.0.1', '[::1]', 'example.com']) expect(isLoopbackName(name)).toBe(false);
  });
});

describe('LoopbackPin', () => {
  it('sends a localhost name to the one loopback address that answers, 127.0.0.1 first, found once', async () => {
    const only6 = holding('::1');
    const pin6 = new LoopbackPin(8080, only6.answers);
    expect(await lookUp(pin6, 'localhost')).toStrictEqual([{ address: '::1', family: 6 }]);
    expect(await lookUp(pin6, 'model.localhost')).toStrictEqual([{ address: '::1', family: 6 }]);
    expect(only6.asked).toStrictEqual(['127.0.0.1:8080', '::1:8080']);

    const both = holding('127.0.0.1', '::1');
    const pin = new LoopbackPin(11434, both.answers);
    expect(await lookUp(pin, 'localhost')).toStrictEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(await lookUp(pin, 'localhost')).toStrictEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(both.asked).toStrictEqual(['127.0.0.1:11434']);
  });

  it('while neither address answers, tries 127.0.0.1 and looks again at the next request', async () => {
    const none = holding();
    const pin = new LoopbackPin(1234, none.answers);
    expect(await lookUp(pin, 'localhost')).toStrictEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(await lookUp(pin, 'localhost')).toStrictEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(none.asked).toStrictEqual(['127.0.0.1:1234', '::1:1234', '127.0.0.1:1234', '::1:1234']);
  });

  it('gives one address when asked for one, and leaves other names to the system resolver', async () => {
    const pin = new LoopbackPin(80, holding('::1').answers);
    const one = await new Promise<[string, number | undefined]>((resolve, reject) =>
      pin.lookup('localhost', {}, (error, address, family) => (error ? reject(error) : resolve([address as string, family]))),
    );
    expect(one).toStrictEqual(['::1', 6]);
    expect(await lookUp(pin, '127.0.0.1')).toStrictEqual([{ address: '127.0.0.1', family: 4 }]);
  });

  it('is made only for a URL whose host is a loopback name, on its port or the scheme’s', () => {
    expect(loopbackPinFor('http://127.0.0.1:8080/v1')).toBeUndefined();
    expect(loopbackPinFor('https://api.example.com/v1')).toBeUndefined();
    const asked: number[] = [];
    const answers = (_address: LoopbackAddress, port: number) => {
      asked.push(port);
      return Promise.resolve(true);
    };
    void loopbackPinFor('http://localhost/v1', answers)?.address();
    void loopbackPinFor('https://localhost/v1', answers)?.address();
    void loopbackPinFor('http://LOCALHOST:11434/v1', answers)?.address();
    void loopbackPinFor('postgres://a@localhost/db', answers)?.address();
    expect(asked).toStrictEqual([80, 443, 11434, 5432]);
  });
});

describe('loopbackPinnedFetch, against real servers on both loopback addresses', () => {
  it('reaches the server on 127.0.0.1, not another process holding [::1] on the same port', async () => {
    const real = createServer((_req, res) => res.end('real'));
    const port = await listen(real, '127.0.0.1');
    const impostor = createServer((_req, res) => res.end('impostor'));
    await new Promise<void>((resolve, reject) => impostor.once('error', reject).listen({ port, host: '::1', ipv6Only: true }, resolve));
    try {
      // The system resolver is not asked for localhost: the answer is the pin's whatever the hosts file says.
      const pinned = loopbackPinnedFetch(`http://localhost:${port}/`);
      if (pinned === undefined) throw new Error('no pin for a localhost URL');
      const response = await pinned(`http://localhost:${port}/`);
      expect(await response.text()).toBe('real');
    } finally {
      real.close();
      impostor.close();
    }
  });
});
