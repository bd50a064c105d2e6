import { ChatService, type AirlockServices } from '@airlock/api';
import { createAirlockClient, LinkCodeError, parseStartupLink, resolveStartupLink } from '@airlock/client';
import { ApprovalRegistry } from '@airlock/core';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { LinkCodesOptions } from '../src/http/link-codes';
import { startServer } from '../src/start-server';

const TOKEN = 'test-token-0123456789abcdef0123456789abcdef';
const TEN_MINUTES = 10 * 60_000;

/** `logIsTerminal`: whether the server is told its log reaches a terminal. Default true, as in a terminal. */
async function start(options: { linkCodes?: LinkCodesOptions; tokenFile?: string; logIsTerminal?: boolean } = {}) {
  const chat = new ChatService({ registry: new ApprovalRegistry(), model: () => undefined as never, tools: () => [] });
  const services: AirlockServices = { chat, catalog: { tools: () => [], servers: () => [] }, modelInfo: () => ({ provider: 'demo', baseURL: null, model: 'demo', demo: true }) };
  const lines: string[] = [];
  const server = await startServer({
    config: { host: '127.0.0.1', port: 0, token: TOKEN, allowedOrigins: [], ...(options.tokenFile === undefined ? {} : { tokenFile: options.tokenFile }) },
    services,
    webRoot: join(tmpdir(), 'airlock-no-such-web-root'),
    log: (line) => lines.push(line),
    logIsTerminal: options.logIsTerminal ?? true,
    ...(options.linkCodes === undefined ? {} : { linkCodes: options.linkCodes }),
  });
  const origin = new URL(server.browserUrl).origin;
  /** POSTs `body` to /link-code as the run's page would (its Host and Origin), `headers` replacing those. */
  const post = (body: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/link-code',
          method: 'POST',
          headers: { Connection: 'close', Host: new URL(server.browserUrl).host, Origin: origin, 'Content-Type': 'application/json', ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const exchange = (code: string, headers?: Record<string, string>) => post(JSON.stringify({ code }), headers);
  return { server, lines, post, exchange, [Symbol.asyncDispose]: () => server.close() };
}

/** The code of a `…/#code=…` link. */
function codeOf(link: string): string {
  const code = new URLSearchParams(new URL(link).hash.slice(1)).get('code');
  if (code === null) throw new Error(`no code in ${link}`);
  return code;
}

function linkIn(line: string): string {
  const link = /^Airlock is running at (\S+)$/.exec(line)?.[1];
  if (link === undefined) throw new Error(`not a start-up line: ${line}`);
  return link;
}

describe('the start-up link', () => {
  it('carries a one-time code of 160 bits, never the token, new at each start', async () => {
    const codes: string[] = [];
    for (let run = 0; run < 2; run++) {
      await using running = await start();
      const link = linkIn(running.lines[0]!);
      expect(link).toMatch(new RegExp(`^${running.server.browserUrl}/#code=[A-Za-z0-9_-]{27}$`));
      expect(running.lines.join('\n')).not.toContain(TOKEN);
      codes.push(codeOf(link));
    }
    expect(codes[0]).not.toBe(codes[1]);
  });

  it('gives the token for its code once; the code used again gets 410 and a new link is printed, which works', async () => {
    await using running = await start();
    const code = codeOf(linkIn(running.lines[0]!));

    const first = await running.exchange(code);
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toStrictEqual({ token: TOKEN });

    const again = await running.exchange(code);
    expect(again.status).toBe(410);
    expect(JSON.parse(again.body)).toStrictEqual({ problem: 'used', newLinkPrinted: true });
    const printed = running.lines.at(-1)!;
    expect(printed).toMatch(new RegExp(`^A start-up link was opened again; a new one: ${running.server.browserUrl}/#code=[A-Za-z0-9_-]{27}$`));
    const next = codeOf(printed.slice(printed.indexOf('http')));
    expect(next).not.toBe(code);
    expect((await running.exchange(next)).status).toBe(200);
  });

  it('refuses a code after 10 minutes with 410 expired', async () => {
    let now = 1_000_000;
    await using running = await start({ linkCodes: { now: () => now } });
    const code = codeOf(linkIn(running.lines[0]!));

    now += TEN_MINUTES;
    const late = await running.exchange(code);

    expect(late.status).toBe(410);
    expect(JSON.parse(late.body)).toStrictEqual({ problem: 'expired', newLinkPrinted: true });
    expect(running.lines.at(-1)).toMatch(/^A start-up link was opened too late; a new one: http:\/\/\S+\/#code=[A-Za-z0-9_-]{27}$/);
    expect(JSON.parse((await running.exchange(code)).body)).toStrictEqual({ problem: 'expired', newLinkPrinted: true });
  });

  it('takes a code just before it expires', async () => {
    let now = 1_000_000;
    await using running = await start({ linkCodes: { now: () => now } });
    now += TEN_MINUTES - 1;
    expect((await running.exchange(codeOf(linkIn(running.lines[0]!)))).status).toBe(200);
  });

  it('refuses another origin or host with 403, and the code still works for the run’s own page', async () => {
    await using running = await start();
    const code = codeOf(linkIn(running.lines[0]!));

    const foreign = await running.exchange(code, { Origin: 'http://evil.example' });
    const rebound = await running.exchange(code, { Host: `evil.example:${running.server.port}`, Origin: `http://evil.example:${running.server.port}` });
    const otherRun = await running.exchange(code, { Origin: `http://airlock-aaaaaaaaaaaaaaaa.localhost:${running.server.port}` });

    expect([foreign.status, rebound.status, otherRun.status]).toStrictEqual([403, 403, 403]);
    expect([foreign.body, rebound.body, otherRun.body].join('')).not.toContain(TOKEN);
    expect((await running.exchange(code)).status).toBe(200);
  });

  it('answers an unknown code 404, prints nothing, and takes only a POST of JSON', async () => {
    await using running = await start();
    const lines = running.lines.length;

    const unknown = await running.exchange('A'.repeat(27));
    expect([unknown.status, JSON.parse(unknown.body)]).toStrictEqual([404, { problem: 'unknown' }]);
    expect(running.lines.length).toBe(lines);
    expect((await running.post(JSON.stringify({ code: codeOf(linkIn(running.lines[0]!)) }), { 'Content-Type': 'text/plain' })).status).toBe(415);
    expect((await running.post('{"code":', {})).status).toBe(400);
    expect((await running.post(JSON.stringify({ code: 'x'.repeat(2_000) }))).status).toBe(413);
  });

  it('refuses exchanges of anything but a live code beyond its rate with 429, until the window ends; the right code is always taken', async () => {
    let now = 1_000_000;
    await using running = await start({ linkCodes: { now: () => now, rate: { attempts: 3, windowMs: 60_000 } } });
    const code = codeOf(linkIn(running.lines[0]!));

    for (let guess = 0; guess < 3; guess++) expect((await running.exchange(`${'B'.repeat(26)}${guess}`)).status).toBe(404);
    const limited = await running.exchange(`${'B'.repeat(26)}x`);
    expect([limited.status, JSON.parse(limited.body)]).toStrictEqual([429, { problem: 'too-many' }]);
    // Junk sent by anyone does not lock the person out of their own link.
    expect((await running.exchange(code)).status).toBe(200);
    expect((await running.exchange(code)).status).toBe(429);

    now += 60_000;
    expect((await running.exchange(`${'B'.repeat(26)}y`)).status).toBe(404);
  });

  it('opened again and again (a synced history replayed), prints at most one new link a minute, and the printed one stays live', async () => {
    let now = 1_000_000;
    await using running = await start({ linkCodes: { now: () => now } });
    const first = codeOf(linkIn(running.lines[0]!));
    expect((await running.exchange(first)).status).toBe(200);

    expect((await running.exchange(first)).status).toBe(410);
    const printed = running.lines.filter((line) => line.startsWith('A start-up link was opened again'));
    expect(printed).toHaveLength(1);
    for (let replay = 0; replay < 20; replay++) expect(JSON.parse((await running.exchange(first)).body)).toStrictEqual({ problem: 'used', newLinkPrinted: true });
    expect(running.lines.filter((line) => line.startsWith('A start-up link was opened again'))).toHaveLength(1);
    expect((await running.exchange(codeOf(/(http:\/\/\S+)$/.exec(printed[0]!)![1]!))).status).toBe(200);

    now += 60_000;
    expect((await running.exchange(first)).status).toBe(410);
    expect(running.lines.filter((line) => line.startsWith('A start-up link was opened again'))).toHaveLength(2);
  });

  it('replayed for many minutes, never pushes a live link made on demand out of the live codes', async () => {
    let now = 1_000_000;
    await using running = await start({ linkCodes: { now: () => now } });
    expect((await running.exchange(codeOf(linkIn(running.lines[0]!)))).status).toBe(200);
    const kept = codeOf(running.server.newLink());
    for (let minute = 0; minute < 9; minute++) {
      now += 60_000;
      expect((await running.exchange(codeOf(linkIn(running.lines[0]!)))).status).toBe(410);
    }
    expect((await running.exchange(kept)).status).toBe(200);
  });

  it('with its token in a file, prints no code, and a link made on demand still works once', async () => {
    await using running = await start({ tokenFile: '/run/airlock/token' });
    expect(running.lines[0]).not.toContain('#code=');

    const code = codeOf(running.server.newLink());
    expect((await running.exchange(code)).status).toBe(200);
    const lines = running.lines.length;
    expect(JSON.parse((await running.exchange(code)).body)).toStrictEqual({ problem: 'used', newLinkPrinted: false, noNewLink: 'token-file' });
    expect(running.lines.length).toBe(lines);
    await expect(resolveStartupLink(`${running.server.browserUrl}/#code=${code}`)).rejects.toMatchObject({
      message:
        'this start-up link was used already (each link opens Airlock once). Airlock reads its token from a file and prints no new link: use the token in that file (paste it on the page)',
    });
  });

  it('with its output not a terminal (a file a tool may read), prints no new link for a used or late code, and says how to get in', async () => {
    let now = 1_000_000;
    await using running = await start({ logIsTerminal: false, linkCodes: { now: () => now } });
    const first = codeOf(linkIn(running.lines[0]!));
    expect((await running.exchange(first)).status).toBe(200);
    const late = codeOf(running.server.newLink());

    const again = await running.exchange(first);
    now += TEN_MINUTES;
    const tooLate = await running.exchange(late);

    expect([again.status, JSON.parse(again.body)]).toStrictEqual([410, { problem: 'used', newLinkPrinted: false, noNewLink: 'output-not-a-terminal' }]);
    expect([tooLate.status, JSON.parse(tooLate.body)]).toStrictEqual([410, { problem: 'expired', newLinkPrinted: false, noNewLink: 'output-not-a-terminal' }]);
    expect(running.lines.slice(1).filter((line) => line.includes('#code='))).toStrictEqual([]);
    expect(running.lines.filter((line) => line.startsWith('A start-up link was opened'))).toStrictEqual([
      'A start-up link was opened again; no new link is printed, since this output is not a terminal and a tool call may read it (a file, a pipe, a journal): ' +
        'restart Airlock for a new link, or start it with --token-file (or AIRLOCK_TOKEN_FILE) and paste that token on the page',
      'A start-up link was opened too late; no new link is printed, since this output is not a terminal and a tool call may read it (a file, a pipe, a journal): ' +
        'restart Airlock for a new link, or start it with --token-file (or AIRLOCK_TOKEN_FILE) and paste that token on the page',
    ]);
    const error = await resolveStartupLink(`${running.server.browserUrl}/#code=${first}`).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LinkCodeError);
    expect(error).toMatchObject({
      problem: 'used',
      newLinkPrinted: false,
      noNewLink: 'output-not-a-terminal',
      message:
        'this start-up link was used already (each link opens Airlock once). Airlock prints no new link, since its output is not a terminal and a tool ' +
        'could read it there: start Airlock again for a new link, or start it with --token-file (or AIRLOCK_TOKEN_FILE) and use that token (paste it on the page)',
    });
  });
});

describe('a Node client given the start-up link', () => {
  it('exchanges the printed link’s code for the token and connects; the link used again says a new one was printed', async () => {
    await using running = await start();
    const link = linkIn(running.lines[0]!);

    const address = await resolveStartupLink(link);
    expect(address).toStrictEqual({ url: running.server.wsUrl, token: TOKEN });
    const airlock = createAirlockClient({ ...address, WebSocket });
    try {
      expect(await airlock.trpc.model.info.query()).toMatchObject({ provider: 'demo' });
    } finally {
      await airlock.close();
    }

    const again = await resolveStartupLink(link).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(LinkCodeError);
    expect(again).toMatchObject({
      problem: 'used',
      newLinkPrinted: true,
      message: 'this start-up link was used already (each link opens Airlock once). Airlock printed a new link in the terminal where it runs: open that one',
    });
    expect(await resolveStartupLink(running.lines.at(-1)!.replace(/^.*a new one: /, ''))).toStrictEqual(address);
  });

  it('says an expired link is too old, and takes a #token= link as before, exchanging nothing', async () => {
    let now = 1_000_000;
    await using running = await start({ linkCodes: { now: () => now } });
    const link = linkIn(running.lines[0]!);
    now += TEN_MINUTES;

    await expect(resolveStartupLink(link)).rejects.toMatchObject({ problem: 'expired', message: expect.stringMatching(/^this start-up link expired/) });
    const withToken = `${running.server.browserUrl}/#token=${TOKEN}`;
    expect(parseStartupLink(withToken)).toStrictEqual({ url: running.server.wsUrl, token: TOKEN });
    expect(await resolveStartupLink(withToken, { fetch: () => Promise.reject(new Error('no exchange expected')) })).toStrictEqual({ url: running.server.wsUrl, token: TOKEN });
  });
});
