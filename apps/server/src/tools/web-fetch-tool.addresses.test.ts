import { ApprovalRegistry, argumentIssues, runToolLoop, type LoopEvent } from '@airlock/core';
import { collectRun, ScriptedModel, textStep, toolCallStep } from '@airlock/core/testing';
import { spawn } from 'node:child_process';
import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { createBuiltinTools, type BuiltinToolsOptions } from './index';
import { isPublicAddress } from './public-address';
import { callContext, runTool, toolNamed } from './test-support';

interface CountingServer extends AsyncDisposable {
  port: number;
  /** Connections accepted, whether or not a request followed. */
  connections: number;
  /** The Host header of each request. */
  hosts: string[];
}

/** A real HTTP server on `host` that counts what reaches it; `/chain` redirects three times on the same origin. */
async function countingServer(host: string, port = 0): Promise<CountingServer> {
  const server: Server = createServer((request, response) => {
    counting.hosts.push(request.headers.host ?? '');
    const url = new URL(request.url ?? '/', 'http://placeholder');
    const hop = Number(url.searchParams.get('hop') ?? '0');
    // A fresh connection for every request: each hop has to look the name up again.
    response.setHeader('connection', 'close');
    if (url.pathname === '/chain' && hop < 3) {
      response.writeHead(302, { location: `/chain?hop=${hop + 1}` }).end();
    } else {
      response.writeHead(200, { 'content-type': 'text/plain' }).end(`served by ${host} after ${hop} redirects`);
    }
  });
  server.on('connection', () => {
    counting.connections += 1;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const counting: CountingServer = {
    port: (server.address() as AddressInfo).port,
    connections: 0,
    hosts: [],
    [Symbol.asyncDispose]: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return counting;
}

/** Two servers on one port, at 127.0.0.1 (standing for a public address) and at 127.0.0.2 (a private one). */
async function publicAndPrivate(): Promise<{ publicServer: CountingServer; privateServer: CountingServer }> {
  for (let attempt = 0; ; attempt += 1) {
    const publicServer = await countingServer('127.0.0.1');
    try {
      return { publicServer, privateServer: await countingServer('127.0.0.2', publicServer.port) };
    } catch (error) {
      await publicServer[Symbol.asyncDispose]();
      if (attempt === 5) throw error;
    }
  }
}

function v4(address: string): LookupAddress {
  return { address, family: 4 };
}

/** A resolver answering from a table of names, one answer per call in turn (the last one repeats); it records each name asked. */
function fakeDns(answers: Record<string, readonly (readonly LookupAddress[])[]>) {
  const asked: string[] = [];
  const lookup = (hostname: string): Promise<readonly LookupAddress[]> => {
    const calls = asked.filter((name) => name === hostname).length;
    asked.push(hostname);
    const table = Object.hasOwn(answers, hostname) ? answers[hostname] : undefined;
    const answer = table?.[Math.min(calls, table.length - 1)];
    if (answer === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
    return Promise.resolve(answer);
  };
  return { asked, lookup };
}

/** Treats 127.0.0.1 as if it were public, so a test can stand a "public" server on it; every other address is judged as usual. */
const loopbackOneIsPublic = (address: string) => address === '127.0.0.1' || isPublicAddress(address);

function webFetch(options: Partial<BuiltinToolsOptions> = {}) {
  return toolNamed(createBuiltinTools({ workspace: '/tmp', ...options }), 'web_fetch');
}

function refusal(hostname: string, address: string, direct: string): string {
  return (
    `Refused: ${hostname} resolves to ${address}, which is not a public address (it is on this machine, its network, ` +
    `or a special-purpose block). The person approved ${hostname}, not ${address}, so nothing was fetched. ` +
    `To read that address, call web_fetch with it in the URL (${direct}), so the person sees it.`
  );
}

describe('web_fetch reaches only what the card names', () => {
  test('refuses a name that resolves to 127.0.0.1, and nothing connects', async () => {
    await using server = await countingServer('127.0.0.1');
    const dns = fakeDns({ 'docs.example.test': [[v4('127.0.0.1')]] });
    const result = await runTool(webFetch({ fetchLookup: dns.lookup }), { url: `http://docs.example.test:${server.port}/page` });
    expect(result).toStrictEqual({
      content: refusal('docs.example.test', '127.0.0.1', `http://127.0.0.1:${server.port}/page`),
      isError: true,
    });
    expect([dns.asked, server.connections]).toStrictEqual([['docs.example.test'], 0]);
  });

  test('refuses a name whose answer mixes a public address with a private one, and nothing connects', async () => {
    await using server = await countingServer('127.0.0.1');
    const privates: readonly LookupAddress[] = [
      v4('169.254.169.254'),
      v4('10.1.2.3'),
      v4('100.64.0.1'),
      { address: 'fd00::1', family: 6 },
      { address: '::ffff:192.168.1.1', family: 6 },
    ];
    for (const [index, inside] of privates.entries()) {
      // The private address first or last: any one of them refuses the name.
      const answer = index % 2 === 0 ? [v4('127.0.0.1'), inside] : [inside, v4('127.0.0.1')];
      const dns = fakeDns({ 'mixed.test': [answer] });
      const tool = webFetch({ fetchLookup: dns.lookup, isFetchableAddress: loopbackOneIsPublic });
      // The address to call with is named as the URL check accepts it: ::ffff:192.168.1.1 as 192.168.1.1.
      const direct = `http://${inside.address.replace('::ffff:', '').replace('fd00::1', '[fd00::1]')}:${server.port}/`;
      expect(await runTool(tool, { url: `http://mixed.test:${server.port}/` })).toStrictEqual({
        content: refusal('mixed.test', inside.address, direct),
        isError: true,
      });
    }
    expect(server.connections).toBe(0);
  });

  test('fetches a name that resolves to a public address through that address, with the name as Host', async () => {
    await using server = await countingServer('127.0.0.1');
    const dns = fakeDns({ 'public.test': [[v4('127.0.0.1')]] });
    const tool = webFetch({ fetchLookup: dns.lookup, isFetchableAddress: loopbackOneIsPublic });
    const url = `http://public.test:${server.port}/page`;
    expect(await runTool(tool, { url })).toStrictEqual({
      content: `URL: ${url}\nStatus: 200 OK\nContent-Type: text/plain\n\nserved by 127.0.0.1 after 0 redirects`,
      isError: false,
    });
    expect([dns.asked, server.hosts]).toStrictEqual([['public.test'], [`public.test:${server.port}`]]);
  });

  test('fetches an IP address in the URL as before, without looking anything up', async () => {
    await using server = await countingServer('127.0.0.1');
    const dns = fakeDns({});
    const url = `http://127.0.0.1:${server.port}/page`;
    expect(await runTool(webFetch({ fetchLookup: dns.lookup }), { url })).toStrictEqual({
      content: `URL: ${url}\nStatus: 200 OK\nContent-Type: text/plain\n\nserved by 127.0.0.1 after 0 redirects`,
      isError: false,
    });
    expect([dns.asked, server.connections]).toStrictEqual([[], 1]);
  });

  test('fetches localhost, which names this machine plainly, through the address it was resolved to once', async () => {
    await using server = await countingServer('127.0.0.1');
    const dns = fakeDns({ localhost: [[v4('127.0.0.1')]] });
    const url = `http://localhost:${server.port}/chain`;
    const result = await runTool(webFetch({ fetchLookup: dns.lookup }), { url });
    expect([result.isError, result.content.endsWith('\n\nserved by 127.0.0.1 after 3 redirects')]).toStrictEqual([false, true]);
    expect([dns.asked, server.connections]).toStrictEqual([['localhost'], 4]);
  });

  test('refuses a name under .localhost that DNS answers with an address other than loopback (169.254.169.254, a LAN one)', async () => {
    await using server = await countingServer('127.0.0.1');
    for (const address of ['169.254.169.254', '10.0.0.5', '::ffff:a9fe:a9fe']) {
      const dns = fakeDns({ 'metadata.localhost': [[address.includes(':') ? { address, family: 6 } : v4(address)]] });
      const result = await runTool(webFetch({ fetchLookup: dns.lookup }), { url: `http://metadata.localhost:${server.port}/` });
      expect(result.isError, address).toBe(true);
      expect(result.content, address).toContain(`Refused: metadata.localhost resolves to ${address}`);
    }
    const loopback = fakeDns({ 'app.localhost': [[v4('127.0.0.1'), { address: '::1', family: 6 }]] });
    expect((await runTool(webFetch({ fetchLookup: loopback.lookup }), { url: `http://app.localhost:${server.port}/` })).isError).toBe(false);
    expect(server.connections).toBe(1);
  });

  test('a name that answers a public address first and a private one after never reaches the private server, across redirects', async () => {
    const { publicServer, privateServer } = await publicAndPrivate();
    await using _public = publicServer;
    await using _private = privateServer;
    const dns = fakeDns({ 'rebind.test': [[v4('127.0.0.1')], [v4('127.0.0.2')]] });
    const tool = webFetch({ fetchLookup: dns.lookup, isFetchableAddress: loopbackOneIsPublic });
    const url = `http://rebind.test:${publicServer.port}/chain`;
    const result = await runTool(tool, { url });
    expect(result).toStrictEqual({
      content: `URL: http://rebind.test:${publicServer.port}/chain?hop=3\nStatus: 200 OK\nContent-Type: text/plain\n\nserved by 127.0.0.1 after 3 redirects`,
      isError: false,
    });
    expect([dns.asked, publicServer.connections, privateServer.connections]).toStrictEqual([['rebind.test'], 4, 0]);
  });

  test('refuses a name resolving to an IPv4 address in IPv6 form or to 0.0.0.0, naming the plain address, which a call may then use', async () => {
    await using server = await countingServer('127.0.0.1');
    const answers: [LookupAddress, string][] = [
      [{ address: '::ffff:127.0.0.1', family: 6 }, '127.0.0.1'],
      [{ address: '::ffff:a9fe:a9fe', family: 6 }, '169.254.169.254'],
      [v4('0.0.0.0'), '127.0.0.1'],
      [{ address: '::', family: 6 }, '[::1]'],
    ];
    for (const [answer, plain] of answers) {
      const dns = fakeDns({ 'inside.test': [[answer]] });
      const direct = `http://${plain}:${server.port}/x`;
      const result = await runTool(webFetch({ fetchLookup: dns.lookup }), { url: `http://inside.test:${server.port}/x` });
      expect([result, argumentIssues(webFetch(), { url: direct })]).toStrictEqual([
        { content: refusal('inside.test', answer.address, direct), isError: true },
        [],
      ]);
    }
    expect(server.connections).toBe(0);
  });

  test("refuses a name that resolves to this machine's own public address or to another in its interfaces' networks, and nothing connects", async (context) => {
    // In a network namespace of its own (a user namespace's, as any user may make), where this machine has the public
    // addresses 1.2.3.4/24 and 2606:4700:10::1/64 and a server listens at each: a VPS's own address, a home network's
    // IPv6 prefix. The lookup answers the machine's addresses and a neighbour's; the defaults judge them.
    const tools = JSON.stringify(fileURLToPath(new URL('./index.ts', import.meta.url)));
    const code = `
      import { createServer } from 'node:http';
      import { createBuiltinTools } from ${tools};
      const connections = [];
      const servers = await Promise.all(['1.2.3.4', '2606:4700:10::1'].map((host) => new Promise((resolve) => {
        const server = createServer((request, response) => response.end('a service of this machine'));
        server.on('connection', () => connections.push(host));
        server.listen(8080, host, () => resolve(server));
      })));
      const results = [];
      for (const address of ['1.2.3.4', '2606:4700:10::1', '1.2.3.99', '2606:4700:10::99', '::ffff:1.2.3.4']) {
        const lookup = async () => [{ address, family: address.includes(':') ? 6 : 4 }];
        const tool = createBuiltinTools({ workspace: '/tmp', fetchLookup: lookup, fetchTimeoutMs: 2000 }).find((each) => each.name === 'web_fetch');
        const result = await tool.execute({ url: 'http://site.test:8080/' }, { signal: new AbortController().signal, timeoutMs: 2000, sessionId: 's' });
        results.push([address, result.content.startsWith('Refused: site.test resolves to ' + address + ', which is not a public address')]);
      }
      for (const server of servers) server.close();
      console.log(JSON.stringify({ results, connections }));
    `;
    const setUp = 'ip link set lo up && ip addr add 1.2.3.4/24 dev lo && ip addr add 2606:4700:10::1/64 dev lo nodad && exec "$@"';
    const child = spawn('unshare', ['-rn', 'sh', '-c', setUp, 'sh', process.execPath, '--import', 'tsx', '--input-type=module', '-e', code], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const exitCode = await new Promise<number | null>((resolve) => {
      child.once('exit', resolve);
      child.once('error', () => resolve(null));
    });
    if (exitCode !== 0 && output === '') return context.skip(`this system does not let a process make a network namespace with addresses of its own (${errors.trim().split('\n')[0] ?? ''})`);
    expect(JSON.parse(output)).toStrictEqual({
      results: [
        ['1.2.3.4', true],
        ['2606:4700:10::1', true],
        ['1.2.3.99', true],
        ['2606:4700:10::99', true],
        ['::ffff:1.2.3.4', true],
      ],
      connections: [],
    });
  }, 30_000);

  test('a lookup that never answers ends with the call timeout', async () => {
    const tool = webFetch({ fetchLookup: () => new Promise(() => {}), fetchTimeoutMs: 200 });
    expect(await runTool(tool, { url: 'http://slow.test/' })).toStrictEqual({
      content: 'Error: fetching http://slow.test/ timed out after 200 ms.',
      isError: true,
    });
  });

  test('a name that does not resolve is reported as before', async () => {
    const dns = fakeDns({});
    expect(await runTool(webFetch({ fetchLookup: dns.lookup }), { url: 'http://nowhere.test/' })).toStrictEqual({
      content: 'Error: fetching http://nowhere.test/ failed: ENOTFOUND (getaddrinfo ENOTFOUND nowhere.test)',
      isError: true,
    });
    expect(dns.asked).toStrictEqual(['nowhere.test']);
  });
});

describe('web_fetch shows on the card the address it fetches', () => {
  test('an address written another way goes back to the model without a card, naming the plain form; that form is asked about and fetched', async () => {
    await using server = await countingServer('127.0.0.1');
    const spellings = ['2130706433', '0x7f.0.0.1', '017700000001', '127.1'];
    const disguised = spellings.map((host) => `http://${host}:${server.port}/healthz`);
    const plain = `http://127.0.0.1:${server.port}/healthz`;
    const model = new ScriptedModel([
      toolCallStep(...disguised.map((url) => ({ name: 'web_fetch', arguments: { url } }))),
      toolCallStep({ name: 'web_fetch', arguments: { url: plain } }),
      textStep('done'),
    ]);
    const registry = new ApprovalRegistry();
    const asked: unknown[] = [];
    const run = runToolLoop({ model, messages: [{ role: 'user', content: 'check it' }], tools: [webFetch()], registry, sessionId: 's' });
    const { events } = await collectRun(run, (event) => {
      if (event.type !== 'tool-start' || !event.awaitingConfirmation) return;
      asked.push(event.arguments);
      registry.resolve(event.approvalId, 'allow', { sessionId: 's' });
    });
    model.assertConsumed();
    const ends = events.filter((event): event is Extract<LoopEvent, { type: 'tool-end' }> => event.type === 'tool-end');
    expect(asked).toStrictEqual([{ url: plain }]);
    expect(ends.map(({ outcome, result }) => [outcome, result])).toStrictEqual([
      ...spellings.map((host) => [
        'error',
        `Error: invalid arguments for "web_fetch": url: the host is written as "${host}:${server.port}" ` +
          `but reached as 127.0.0.1:${server.port} (the same IP address, written another way); write the URL as ${plain}, so the card shows where it goes. ` +
          'Fix them and call again.',
      ]),
      ['executed', `URL: ${plain}\nStatus: 200 OK\nContent-Type: text/plain\n\nserved by 127.0.0.1 after 0 redirects`],
    ]);
    expect(server.connections).toBe(1);
  });

  test('an IPv4 address written as an IPv6 one, and 0.0.0.0, go back to the model without a card, naming the IPv4 and loopback form', async () => {
    await using server = await countingServer('127.0.0.1');
    const hidden = [`[::ffff:7f00:1]:${server.port}`, `[::ffff:127.0.0.1]:${server.port}`, `0.0.0.0:${server.port}`];
    const plain = `http://127.0.0.1:${server.port}/mapped`;
    const model = new ScriptedModel([
      toolCallStep(...hidden.map((host) => ({ name: 'web_fetch', arguments: { url: `http://${host}/mapped` } }))),
      toolCallStep({ name: 'web_fetch', arguments: { url: plain } }),
      textStep('done'),
    ]);
    const registry = new ApprovalRegistry();
    const asked: unknown[] = [];
    const run = runToolLoop({ model, messages: [{ role: 'user', content: 'check it' }], tools: [webFetch()], registry, sessionId: 's' });
    const { events } = await collectRun(run, (event) => {
      if (event.type !== 'tool-start' || !event.awaitingConfirmation) return;
      asked.push(event.arguments);
      registry.resolve(event.approvalId, 'allow', { sessionId: 's' });
    });
    model.assertConsumed();
    const ends = events.filter((event): event is Extract<LoopEvent, { type: 'tool-end' }> => event.type === 'tool-end');
    const reasons = [' (an IPv4 address written as an IPv6 one)', ' (an IPv4 address written as an IPv6 one)', ' (a connection to 0.0.0.0 or [::] goes to this machine)'];
    expect(asked).toStrictEqual([{ url: plain }]);
    expect(ends.map(({ outcome, result }) => [outcome, result])).toStrictEqual([
      ...hidden.map((host, index) => [
        'error',
        `Error: invalid arguments for "web_fetch": url: the host is written as "${host}" but reached as 127.0.0.1:${server.port}` +
          `${reasons[index]}; write the URL as ${plain}, so the card shows where it goes. Fix them and call again.`,
      ]),
      ['executed', `URL: ${plain}\nStatus: 200 OK\nContent-Type: text/plain\n\nserved by 127.0.0.1 after 0 redirects`],
    ]);
    expect(server.connections).toBe(1);
  });

  test('execute, called without the schema, refuses an IPv4 address written as an IPv6 one and 0.0.0.0, and nothing connects', async () => {
    await using server = await countingServer('127.0.0.1');
    for (const host of ['[::ffff:7f00:1]', '0.0.0.0']) {
      const result = await webFetch().execute({ url: `http://${host}:${server.port}/x` }, callContext());
      expect([host, typeof result !== 'string' && result.isError, JSON.stringify(result).includes(`write the URL as http://127.0.0.1:${server.port}/x`)]).toStrictEqual([
        host,
        true,
        true,
      ]);
    }
    expect(server.connections).toBe(0);
  });
});
