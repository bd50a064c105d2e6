/** Why a start-up link's code gave no token. */
export type LinkCodeProblem = 'used' | 'expired' | 'unknown' | 'too-many' | 'refused';

/**
 * Why the server printed no new link for a link opened again or late: its token is in a file (it prints no link),
 * or its output is not a terminal (a file or a pipe a tool call may read, where a live link must not appear).
 */
export type NoNewLinkReason = 'token-file' | 'output-not-a-terminal';

/** A start-up link's one-time code the server would not exchange for the token. */
export class LinkCodeError extends Error {
  override readonly name = 'LinkCodeError';
  /** Whether the server printed a new link in its terminal in answer. */
  readonly newLinkPrinted: boolean;
  /** Why it printed none, when it said. */
  readonly noNewLink: NoNewLinkReason | undefined;
  /** The HTTP status of a refusal the server gave no reason for. */
  readonly status: number | undefined;

  constructor(
    readonly problem: LinkCodeProblem,
    details: { newLinkPrinted?: boolean; noNewLink?: NoNewLinkReason; status?: number } = {},
  ) {
    super(linkCodeMessage(problem, details));
    this.newLinkPrinted = details.newLinkPrinted ?? false;
    this.noNewLink = details.noNewLink;
    this.status = details.status;
  }
}

const NEW_LINK = 'Airlock printed a new link in the terminal where it runs: open that one';
const NO_NEW_LINK = 'open the latest link Airlock printed, or start Airlock again (npm start) for a new one';
const NO_NEW_LINK_BECAUSE: Record<NoNewLinkReason, string> = {
  'token-file': 'Airlock reads its token from a file and prints no new link: use the token in that file (paste it on the page)',
  'output-not-a-terminal':
    'Airlock prints no new link, since its output is not a terminal and a tool could read it there: start Airlock again for a new link, ' +
    'or start it with --token-file (or AIRLOCK_TOKEN_FILE) and use that token (paste it on the page)',
};

function linkCodeMessage(problem: LinkCodeProblem, { newLinkPrinted = false, noNewLink, status }: { newLinkPrinted?: boolean; noNewLink?: NoNewLinkReason; status?: number }): string {
  const next = newLinkPrinted ? NEW_LINK : noNewLink === undefined ? NO_NEW_LINK : NO_NEW_LINK_BECAUSE[noNewLink];
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
  /**
   * How long the server has to answer, in ms. Default 10,000, as long as the socket's handshake: whatever accepts the
   * connection and answers nothing (a frozen server, another program) fails then, rather than hold the caller silent.
   */
  timeoutMs?: number;
}

/** How long a code's exchange is waited for by default (`timeoutMs`). */
const DEFAULT_LINK_CODE_TIMEOUT_MS = 10_000;

/**
 * Exchanges a start-up link's one-time code for the access token, once: the server answers a code used already,
 * expired or never made with a `LinkCodeError` saying how to get a new link.
 */
export async function exchangeLinkCode({ serverUrl, code, fetch = globalThis.fetch, timeoutMs = DEFAULT_LINK_CODE_TIMEOUT_MS }: ExchangeLinkCodeOptions): Promise<string> {
  const url = new URL('/link-code', serverUrl);
  const limit = AbortSignal.timeout(timeoutMs);
  const unanswered = () =>
    new Error(`no answer from ${url.origin} within ${timeoutMs / 1000} s: whatever holds that port took the connection and answered nothing (a frozen server, or not Airlock)`);
  let answer: Response;
  try {
    answer = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ code }), signal: limit });
  } catch (error) {
    throw limit.aborted ? unanswered() : error;
  }
  const body: unknown = await answer.json().catch(() => undefined);
  if (body === undefined && limit.aborted) throw unanswered();
  const field = (name: string): unknown => (typeof body === 'object' && body !== null && Object.hasOwn(body, name) ? (body as Record<string, unknown>)[name] : undefined);
  const token = field('token');
  if (answer.ok && typeof token === 'string' && token !== '') return token;
  const problem = field('problem');
  const newLinkPrinted = field('newLinkPrinted') === true;
  const reason = field('noNewLink');
  const noNewLink = reason === 'token-file' || reason === 'output-not-a-terminal' ? reason : undefined;
  if (problem === 'used' || problem === 'expired' || problem === 'unknown' || problem === 'too-many') {
    throw new LinkCodeError(problem, { newLinkPrinted, noNewLink });
  }
  throw new LinkCodeError('refused', { status: answer.status });
}
