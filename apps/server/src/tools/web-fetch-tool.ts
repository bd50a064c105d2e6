import { defineTool, errorMessage, type ToolOutput } from '@airlock/core';
import type { RequestInit as UndiciRequestInit } from 'undici';
import { z } from 'zod';
import { stoppableFetch } from '../http/stoppable-fetch';
import { callTimeoutMs, type ResolvedToolsOptions } from './builtin-tools-options';
import { htmlToText } from './html-to-text';
import { PinnedHosts, type RefusedHost } from './pinned-hosts';
import { failuresAsResults, toolFailure } from './tool-failure';
import { plainUrl, webFetchUrlIssue } from './web-fetch-url';

const MAX_URL_CHARS = 8_192;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

const parameters = z.object({
  url: z
    .string()
    .min(1)
    .max(MAX_URL_CHARS)
    .superRefine((url, context) => {
      // In the schema, so a URL the card would misread is sent back to the model before anyone is asked.
      const issue = webFetchUrlIssue(url);
      if (issue !== undefined) context.addIssue({ code: 'custom', message: issue });
    })
    .describe('The http:// or https:// address to fetch.'),
});

export function createWebFetchTool(options: ResolvedToolsOptions) {
  return defineTool<z.infer<typeof parameters>>({
    name: 'web_fetch',
    description:
      'Fetch a web page or document over http(s) and return it as readable text: HTML is reduced to its text, ' +
      `plain text and JSON are returned as they are. At most ${options.maxFetchBytes} bytes are read.`,
    parameters,
    annotations: { readOnly: true, exactGrants: true, openWorld: true },
    source: 'builtin',
    execute: ({ url }, context) =>
      failuresAsResults('web_fetch', async () => {
        const issue = webFetchUrlIssue(url);
        if (issue !== undefined) return toolFailure(`${issue}.`);
        let current = new URL(url);
        const timeoutMs = Math.min(options.fetchTimeoutMs, callTimeoutMs(context.timeoutMs, options.fetchTimeoutMs));
        const timeout = AbortSignal.timeout(timeoutMs);
        const signal = AbortSignal.any([context.signal, timeout]);
        const hosts = new PinnedHosts(options.fetchLookup, options.isFetchableAddress);
        // Imported at the first fetch, not at start-up.
        const { Agent, fetch } = await import('undici');
        // The person approved the name on the card: every connection goes to the addresses it was checked at.
        const dispatcher = new Agent({ connect: { lookup: hosts.lookup } });
        const send = stoppableFetch(async (input: URL, init?: RequestInit) => (await fetch(input, { ...(init as UndiciRequestInit), dispatcher })) as unknown as Response);
        try {
          for (let redirects = 0; ; redirects += 1) {
            const refused = await hosts.pin(current, signal);
            if (refused !== undefined) return toolFailure(refusal(current, refused));
            const response = await send(current, {
              redirect: 'manual',
              signal,
              headers: { accept: 'text/html, text/plain;q=0.9, application/json;q=0.9, */*;q=0.5' },
            });
            const location = response.headers.get('location');
            if (!REDIRECT_STATUSES.has(response.status) || location === null) {
              return await readResponse(response, current, { maxBytes: options.maxFetchBytes, timeout, timeoutMs });
            }
            await response.body?.cancel();
            if (redirects >= options.maxRedirects) {
              return toolFailure(`too many redirects: gave up after ${options.maxRedirects}, at ${current.href}.`);
            }
            let next: URL;
            try {
              next = new URL(location, current);
            } catch {
              return toolFailure(`${current.href} redirected to an invalid address: "${maskPasswords(location)}".`);
            }
            if (!isWeb(next)) {
              return toolFailure(`refused a redirect from ${current.href} to a ${next.protocol} URL; only http and https are followed.`);
            }
            if (next.username !== '' || next.password !== '') {
              // The origin leaves credentials out, so this is checked first: such a hop is refused as such a URL on the card is.
              const bare = new URL(next.href);
              bare.username = '';
              bare.password = '';
              return toolFailure(
                `refused a redirect from ${current.href} to ${withoutPassword(next)}: web_fetch sends no user name or password. ` +
                  `To read it without them, call web_fetch with ${bare.href}`,
              );
            }
            if (next.origin !== current.origin) {
              // The person approved this site, not wherever it points: another site (or an address inside the
              // network) needs a call of its own, which is put up for approval like any other.
              return { content: `${current.href} redirects to another site: ${next.href}\nIt was not followed. To read it, call web_fetch with that URL.` };
            }
            current = next;
          }
        } catch (error) {
          const shown = withoutPassword(current);
          if (timeout.aborted) return toolFailure(`fetching ${shown} timed out after ${timeoutMs} ms.`);
          if (context.signal.aborted) return toolFailure(`fetching ${shown} was stopped.`);
          return toolFailure(`fetching ${shown} failed: ${maskPasswords(describeFetchError(error))}`);
        } finally {
          await dispatcher.destroy();
        }
      }),
  });
}

function isWeb(url: URL): boolean {
  return url.protocol === 'http:' || url.protocol === 'https:';
}

/** The URL with its password, if any, shown as `***`: an error text goes to the model, the card and the ledger. */
function withoutPassword(url: URL): string {
  if (url.password === '') return url.href;
  const masked = new URL(url.href);
  masked.password = '***';
  return masked.href;
}

/** Text with the password of every URL in it shown as `***` (errors from fetch quote the URL they refused). */
function maskPasswords(text: string): string {
  return text.replace(/(\/\/[^/\s:@]*:)[^/\s@]*@/gu, '$1***@');
}

function refusal(url: URL, { hostname, address }: RefusedHost): string {
  const resolved = new URL(url.href);
  resolved.hostname = address.includes(':') ? `[${address.replace(/%.*$/s, '')}]` : address;
  // Named as the URL check wants it written (`::ffff:7f00:1` as 127.0.0.1), so the call it suggests is not refused.
  const direct = plainUrl(resolved);
  return (
    `Refused: ${hostname} resolves to ${address}, which is not a public address (it is on this machine, its ` +
    `network, or a special-purpose block). The person approved ${hostname}, not ${address}, so nothing was fetched. ` +
    `To read that address, call web_fetch with it in the URL (${direct.href}), so the person sees it.`
  );
}

interface ReadLimits {
  /** Most bytes of the body read. */
  maxBytes: number;
  /** The call's time limit: when it ends the body, what arrived is returned. */
  timeout: AbortSignal;
  /** That limit, in ms, to name it. */
  timeoutMs: number;
}

/** How reading the body ended: whole, cut at the size cap (with more after it, or not known), or cut by the time limit. */
type BodyEnd = 'complete' | 'truncated' | 'at-cap' | 'timed-out';

async function readResponse(response: Response, url: URL, limits: ReadLimits): Promise<ToolOutput> {
  const { bytes, end } = await readCapped(response, limits);
  const contentType = response.headers.get('content-type') ?? '';
  const header = [`URL: ${url.href}`, `Status: ${response.status} ${response.statusText}`.trimEnd(), `Content-Type: ${contentType || 'unknown'}`];
  const isError = !response.ok;
  const kind = contentKind(contentType, bytes);
  if (kind === 'binary') {
    return { content: `${header.join('\n')}\n\n[binary content, ${bytes.length}${end === 'complete' ? '' : '+'} bytes: not shown]`, isError: true };
  }
  const decoded = decode(bytes, contentType);
  const text = kind === 'html' ? htmlToText(decoded, url.href) : decoded;
  const markers: Record<BodyEnd, string> = {
    complete: '',
    truncated: `\n\n[… truncated: only the first ${limits.maxBytes} bytes were read …]`,
    'at-cap': `\n\n[… the first ${limits.maxBytes} bytes were read, the most that is read; whether more followed is not known …]`,
    'timed-out':
      `\n\n[… cut short: the server was still sending after ${limits.timeoutMs} ms, the time limit; ` +
      `only the ${bytes.length} bytes that arrived by then are shown …]`,
  };
  return { content: `${header.join('\n')}\n\n${text}${markers[end]}`, isError };
}

async function readCapped(response: Response, { maxBytes, timeout }: ReadLimits): Promise<{ bytes: Buffer; end: BodyEnd }> {
  if (response.body === null) return { bytes: Buffer.alloc(0), end: 'complete' };
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const read = await reader.read().catch((error: unknown) => {
      // A slow or stalled body: what arrived is still worth reading. Stop (the call's own signal) is not this.
      if (timeout.aborted) return undefined;
      throw error;
    });
    if (read === undefined) return { bytes: Buffer.concat(chunks), end: 'timed-out' };
    if (read.done) return { bytes: Buffer.concat(chunks), end: 'complete' };
    const { value } = read;
    if (total + value.length >= maxBytes) {
      chunks.push(value.subarray(0, maxBytes - total));
      // Exactly at the cap, another read would wait on a server that may send nothing more, up to the time limit.
      const end = total + value.length > maxBytes ? 'truncated' : 'at-cap';
      await reader.cancel();
      return { bytes: Buffer.concat(chunks), end };
    }
    chunks.push(value);
    total += value.length;
  }
}

function contentKind(contentType: string, bytes: Buffer): 'html' | 'text' | 'binary' {
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (
    type.startsWith('text/') ||
    type.endsWith('+json') ||
    type.endsWith('+xml') ||
    ['application/json', 'application/xml', 'application/javascript', 'application/x-javascript', 'application/ecmascript',
      'application/x-ndjson', 'application/yaml', 'application/x-yaml', 'application/toml', 'application/x-www-form-urlencoded'].includes(type)
  ) {
    return 'text';
  }
  if (type !== '' && type !== 'application/octet-stream') return 'binary';
  // No useful type: sniff like a browser would, roughly.
  const head = bytes.subarray(0, 1024);
  if (head.includes(0)) return 'binary';
  return /^\s*(<!doctype html|<html)/i.test(head.toString('latin1')) ? 'html' : 'text';
}

function decode(bytes: Buffer, contentType: string): string {
  const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

function describeFetchError(error: unknown): string {
  // fetch wraps the system error in its cause; a failed name lookup before it is the system error itself.
  const cause = error instanceof Error ? ((error.cause ?? error) as NodeJS.ErrnoException) : undefined;
  if (cause?.code !== undefined) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  return errorMessage(cause ?? error);
}
