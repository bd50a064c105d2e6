import { ModelError } from '@airlock/core';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { displayURL } from './display-url';
import { ModelAnswerTooLargeError, ModelServerErrorEvent } from './line-aligned-fetch';
import { MODEL_TIME_SETTINGS, type ModelTimeLimit } from './model-time-limits';
import { AnswerLimitError, MalformedChunkError } from './openai-chunk-reader';
import { ModelServerRedirectError } from './redirect-refusing-fetch';

/** Longest server-provided error text kept in a message; a misbehaving server may send megabytes. */
const MAX_DETAIL_CHARS = 500;

export interface ModelErrorContext {
  /** Label of the provider, the first word of the message. */
  provider: string;
  /** The server's base URL as configured; credentials in it are never shown. */
  baseURL: string;
  /** Scrubbed from every message, in case a server echoes it back. */
  apiKey?: string;
  /** The time limits of the turn, in ms, to say which one the HTTP client's own timeout stood for. */
  limits?: Readonly<Record<ModelTimeLimit, number>>;
  /** Whether the answer had started streaming when the error happened. */
  midStream: boolean;
  /** Whether a piece of the answer (text, reasoning, a tool call's) had arrived: the idle limit applies from then on. */
  progressed?: boolean;
}

/** A turn ended by one of its time limits: the message says which, how long it was, and the setting that changes it. */
export function timeLimitError(limit: ModelTimeLimit, ms: number, context: Pick<ModelErrorContext, 'provider' | 'baseURL'>, cause?: unknown): ModelError {
  const where = displayURL(context.baseURL);
  const detail =
    limit === 'request'
      ? `the model server at ${where} did not start answering within ${duration(ms)}`
      : limit === 'idle'
        ? `the model server at ${where} sent no further part of the answer for ${duration(ms)}`
        : `the model server at ${where} was still answering after ${duration(ms)}, the most one turn may take`;
  return new ModelError(context.provider, `${detail}; the turn was stopped (the limit is set by ${MODEL_TIME_SETTINGS[limit]})`, { cause });
}

/** Explains a failure of the OpenAI client (or of the stream it returned) as a ModelError a person can act on. */
export function toModelError(error: unknown, context: ModelErrorContext): ModelError {
  if (error instanceof ModelError) return error;
  const where = displayURL(context.baseURL);
  const secrets = [context.apiKey, ...urlSecrets(context.baseURL)];
  const scrub = (text: string) => bounded(scrubSecrets(text, secrets));
  let detail: string;
  let status: number | undefined;
  const tooLarge = causeOfType(error, ModelAnswerTooLargeError);
  const redirect = causeOfType(error, ModelServerRedirectError);
  const reported = causeOfType(error, ModelServerErrorEvent);
  if (tooLarge !== undefined) {
    detail = `${tooLarge.message} (${where}); the turn was stopped there`;
  } else if (reported !== undefined) {
    detail = `the model server at ${where} reported an error${context.progressed === true ? ' mid-answer' : ''}: ${scrub(serverMessage(reported.body) ?? 'it said no more')}`;
  } else if (redirect !== undefined) {
    status = redirect.status;
    detail =
      `the model server at ${where} redirected the request to ${scrub(displayURL(redirect.location))} (HTTP ${redirect.status}), ` +
      `which is not followed: if the server moved, give its new address with --model-url`;
  } else if (context.limits !== undefined && (error instanceof APIConnectionTimeoutError || hasCode(error, 'UND_ERR_HEADERS_TIMEOUT'))) {
    // The client's own timers stand for the request limit: whichever of them fires first ends the turn the same way.
    return timeLimitError('request', context.limits.request, context, error);
  } else if (context.limits !== undefined && hasCode(error, 'UND_ERR_BODY_TIMEOUT')) {
    const limit = context.progressed === true ? 'idle' : 'request';
    return timeLimitError(limit, context.limits[limit], context, error);
  } else if (error instanceof APIConnectionTimeoutError) {
    detail = `the model server at ${where} did not answer in time`;
  } else if (closedBeforeAnswer(error)) {
    // The connection was made and the request sent; the server closed it before its answer's headers were complete.
    detail = `the model server at ${where} took the request but closed the connection without answering: ${scrub(rootCause(error))}`;
  } else if (error instanceof APIConnectionError) {
    detail = `could not reach the model server at ${where}: ${scrub(rootCause(error))}. Is it running?`;
  } else if (error instanceof APIError && typeof error.status === 'number') {
    status = error.status;
    const message = serverMessage(error.error);
    // The class's headers are generic (any); an answer's error has its Headers.
    const wait = retryAfter(error.headers as Headers | undefined);
    detail =
      `the model server at ${where} answered HTTP ${error.status}${message === undefined ? '' : `: ${scrub(message)}`}` +
      (wait === undefined ? '' : ` (it asks to wait ${wait} before the next request)`);
  } else if (error instanceof APIError) {
    const message = serverMessage(error.error) ?? error.message;
    detail = `the model server at ${where} reported an error${context.progressed === true ? ' mid-answer' : ''}: ${scrub(message)}`;
  } else if (error instanceof AnswerLimitError) {
    detail = `the model server at ${where} sent more than one turn may hold: ${error.message}; the turn was stopped there`;
  } else if (error instanceof SyntaxError || error instanceof MalformedChunkError) {
    detail = `the model server at ${where} sent a malformed stream chunk (${scrub(error.message)})`;
  } else if (context.midStream && hasCode(error, 'UND_ERR_SOCKET')) {
    detail = `the model server at ${where} closed the connection mid-answer: ${scrub(rootCause(error))}`;
  } else if (context.midStream) {
    detail = `the connection to the model server at ${where} broke off mid-answer: ${scrub(rootCause(error))}`;
  } else {
    detail = `the request to the model server at ${where} failed: ${scrub(rootCause(error))}`;
  }
  return new ModelError(context.provider, detail, { cause: error, status });
}

/**
 * How long a server asks to be left, as a busy or rate-limiting one says with 429 or 503: `retry-after-ms` (hosted
 * APIs and their proxies), Retry-After in seconds, or Retry-After as a date, shown as the date it names (this
 * machine's clock may not be the server's). No request is sent again by itself (a retried stream would replay text),
 * so the person is told.
 */
function retryAfter(headers: Headers | undefined): string | undefined {
  const inMs = headers?.get('retry-after-ms')?.trim();
  if (inMs !== undefined && /^\d{1,9}(\.\d{1,3})?$/.test(inMs) && Number(inMs) > 0) return duration(Math.ceil(Number(inMs)));
  const value = headers?.get('retry-after')?.trim();
  if (value === undefined) return undefined;
  if (/^\d{1,9}$/.test(value)) return Number(value) > 0 ? duration(Number(value) * 1000) : undefined;
  // The one form HTTP dates are sent in (IMF-fixdate), read only when it is that: Date.parse takes much else.
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : `until ${new Date(at).toUTCString()}`;
}

/** The message a server put in its error body: `{error: {message}}`, `{error: "…"}` or `{message}`. */
function serverMessage(body: unknown): string | undefined {
  if (typeof body === 'string' && body.trim() !== '') return body;
  if (body !== null && typeof body === 'object') {
    const message = (body as { message?: unknown }).message;
    if (typeof message === 'string' && message.trim() !== '') return message;
    const nested = (body as { error?: unknown }).error;
    if (nested !== undefined && nested !== body) return serverMessage(nested);
  }
  return undefined;
}

/** The most specific description in an error's cause chain, e.g. "connect ECONNREFUSED 127.0.0.1:8080". */
function rootCause(error: unknown): string {
  let best = error instanceof Error ? error.message : String(error);
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    // Node reports a refused dual-stack connect as an AggregateError with an empty message.
    const inner: unknown = current instanceof AggregateError && current.errors.length > 0 ? current.errors[0] : current.cause;
    if (!(inner instanceof Error)) break;
    const code = (inner as { code?: unknown }).code;
    if (inner.message !== '') best = inner.message;
    else if (typeof code === 'string') best = code;
    current = inner;
  }
  return best;
}

/** Parts of a URL that may carry credentials: user, password and query values. */
function urlSecrets(raw: string): string[] {
  try {
    const url = new URL(raw);
    return [url.username, url.password, decodeURIComponent(url.password), ...url.searchParams.values()];
  } catch {
    return [];
  }
}

function scrubSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  // Messages from fetch quote the whole URL, user and password included.
  let scrubbed = text.replace(/\/\/[^/\s@]+@/g, '//');
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= 4) scrubbed = scrubbed.split(secret).join('***');
  }
  return scrubbed;
}

function duration(ms: number): string {
  if (ms < 10_000) return `${ms} ms`;
  if (ms < 10 * 60_000 || ms % 60_000 !== 0) return `${Math.round(ms / 1000)} s`;
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${ms / 60_000} min`;
}

function bounded(text: string): string {
  return text.length <= MAX_DETAIL_CHARS ? text : `${text.slice(0, MAX_DETAIL_CHARS)}…`;
}

/** Whether an error in `error`'s cause chain (a few links at most) has this `code`, as undici's timeouts do. */
/**
 * The connection was made and the request sent, and the server closed it before any of its answer: what a connection
 * kept alive gives when the server closed it as idle just as the request went out on it.
 */
export function closedBeforeAnswer(error: unknown): boolean {
  return error instanceof APIConnectionError && hasCode(error, 'UND_ERR_SOCKET');
}

function hasCode(error: unknown, code: string): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if ((current as { code?: unknown }).code === code) return true;
    current = current.cause;
  }
  return false;
}

/** The first error of `type` in `error`'s cause chain (a few links at most), if any. */
function causeOfType<T extends Error>(error: unknown, type: new (...args: never[]) => T): T | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current instanceof type) return current;
    current = current.cause;
  }
  return undefined;
}
