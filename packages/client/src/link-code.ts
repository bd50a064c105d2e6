/** Why a start-up link's code gave no token. */
export type LinkCodeProblem = 'used' | 'expired' | 'unknown' | 'too-many' | 'refused';

/** A start-up link's one-time code the server would not exchange for the token. */
export class LinkCodeError extends Error {
  override readonly name = 'LinkCodeError';

  constructor(
    readonly problem: LinkCodeProblem,
    /** Whether the server printed a new link in its terminal in answer. */
    readonly newLinkPrinted: boolean,
    /** The HTTP status of a refusal the server gave no reason for. */
    readonly status?: number,
  ) {
    super(linkCodeMessage(problem, newLinkPrinted, status));
  }
}

const NEW_LINK = 'Airlock printed a new link in the terminal where it runs: open that one';
const NO_NEW_LINK = 'open the latest link Airlock printed, or start Airlock again (npm start) for a new one';

function linkCodeMessage(problem: LinkCodeProblem, newLinkPrinted: boolean, status: number | undefined): string {
  const next = newLinkPrinted ? NEW_LINK : NO_NEW_LINK;
  switch (problem) {
    case 'used':
      return `this start-up link was used already (each link opens Airlock once). ${next}`;
    case 'expired':
      return `this start-up link expired (a link opens Airlock within 10 minutes of being printed). ${next}`;
    case 'unknown':
      return `this start-up link is not one the running Airlock made (it may be from an earlier start): ${NO_NEW_LINK}`;
    case 'too-many':
      return 'Airlock refused: too many start-up links were tried in the last minute. Try again in a minute';
    case 'refused':
      return `Airlock refused to exchange this start-up link (HTTP ${status ?? '?'})`;
  }
}

export interface ExchangeLinkCodeOptions {
  /** The server's HTTP origin, `http://host:port`: a page's own origin, or 127.0.0.1 for a Node client. */
  serverUrl: string;
  /** The code of the link's `#code=`. */
  code: string;
  /** The fetch to use. Default the global one. */
  fetch?: typeof globalThis.fetch;
}

/**
 * Exchanges a start-up link's one-time code for the access token, once: the server answers a code used already,
 * expired or never made with a `LinkCodeError` saying how to get a new link.
 */
export async function exchangeLinkCode({ serverUrl, code, fetch = globalThis.fetch }: ExchangeLinkCodeOptions): Promise<string> {
  const answer = await fetch(new URL('/link-code', serverUrl), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ code }),
  });
  const body: unknown = await answer.json().catch(() => undefined);
  const field = (name: string): unknown => (typeof body === 'object' && body !== null && Object.hasOwn(body, name) ? (body as Record<string, unknown>)[name] : undefined);
  const token = field('token');
  if (answer.ok && typeof token === 'string' && token !== '') return token;
  const problem = field('problem');
  const newLinkPrinted = field('newLinkPrinted') === true;
  if (problem === 'used' || problem === 'expired' || problem === 'unknown' || problem === 'too-many') throw new LinkCodeError(problem, newLinkPrinted);
  throw new LinkCodeError('refused', false, answer.status);
}
