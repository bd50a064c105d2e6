import { ConcurrencyLimit, isPlainObject, ModelError, type ChatModel, type ChatRequest, type ModelPart } from '@airlock/core';
import OpenAI, { APIError } from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { Agent, fetch as undiciFetch, type RequestInfo as UndiciRequestInfo, type RequestInit as UndiciRequestInit } from 'undici';
import { SYSTEM_CLOCK, type Clock } from '../clock';
import { loopbackPinFor, type LookupFunction, type LoopbackPin } from '../http/loopback-name';
import { stoppableFetch } from '../http/stoppable-fetch';
import { displayURL } from './display-url';
import { isWholeAnswer, lineAlignedFetch } from './line-aligned-fetch';
import { closedBeforeAnswer, timeLimitError, toModelError } from './model-server-errors';
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_TURN_TIMEOUT_MS, type ModelTimeLimit } from './model-time-limits';
import { MalformedChunkError, OpenAIChunkReader } from './openai-chunk-reader';
import { toOpenAIMessages, toOpenAITools } from './openai-messages';
import { redirectRefusingFetch } from './redirect-refusing-fetch';
import { requestBody } from './request-body';

export { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_TURN_TIMEOUT_MS } from './model-time-limits';
export const DEFAULT_MAX_CONCURRENT_REQUESTS = 64;

/** Local servers ignore the key, but the client refuses to start without one. */
const PLACEHOLDER_API_KEY = 'no-key';

export interface OpenAICompatibleModelOptions {
  /** The server's OpenAI-compatible API root, `/v1` included, e.g. "http://127.0.0.1:8080/v1". */
  baseURL: string;
  /** Model id sent with every request. */
  model: string;
  /** Sent as a bearer token. Default: a placeholder, since local servers need none. */
  apiKey?: string;
  /**
   * How long the server may take to send the answer's first piece (text, reasoning or a tool call's), in ms, the wait
   * for its headers included; a local server may load the model first. Default 10 minutes.
   */
  requestTimeoutMs?: number;
  /** How long the server may go without sending a piece of the answer once it has started, in ms; bytes that carry none (keep-alive comments) do not count. Default 5 minutes. */
  idleTimeoutMs?: number;
  /** How long one turn may stream in all, in ms, from sending the request. Default 2 hours. */
  turnTimeoutMs?: number;
  /** The clock the three limits above are counted on. Default the system's; a test's own, to move. */
  clock?: Clock;
  /** Provider label used in the model's name and in error messages. Default "OpenAI-compatible". */
  label?: string;
  /** Extra fields for every request body (sampling settings a server understands); they cannot replace the fields set here. Default none. */
  extraBody?: Record<string, unknown>;
  /** The fetch used for requests. Default: undici's, with its headers and body timeouts set from the limits above. */
  fetch?: typeof fetch;
  /**
   * How many requests may stream from the server at once; further turns wait their turn (the wait does not count
   * against `requestTimeoutMs`). Each open request holds a connection, a file descriptor and the HTTP client's state
   * for that connection, which the client keeps after the connection closes. Default 64 at once.
   */
  requests?: ConcurrencyLimit;
}

/**
 * The OpenAI client, reading an error body whose message is at its top level too: vLLM answers
 * `{"object": "error", "message": "…maximum context length…", "code": 400}`, and the client reads only `body.error`
 * (the person saw "answered HTTP 400" and nothing of why).
 */
class ModelServerClient extends OpenAI {
  protected override makeStatusError(status: number, body: unknown, message: string | undefined, headers: Headers): APIError {
    const read = body === undefined || body === null || (isPlainObject(body) && Object.hasOwn(body, 'error'));
    // The client's own type says `Object`; it is the parsed JSON body, or undefined when the body was not JSON.
    return super.makeStatusError(status, (read ? body : { error: body }) as object, message, headers);
  }
}

/** A ChatModel that streams from any server speaking OpenAI chat completions: llama.cpp, Ollama, LM Studio, vLLM, OpenAI. */
export class OpenAICompatibleModel implements ChatModel {
  readonly name: string;
  readonly baseURL: string;
  /** For a server named `localhost`: the loopback address it holds (see LoopbackPin). */
  private readonly pin: LoopbackPin | undefined;
  readonly model: string;
  private readonly label: string;
  private readonly apiKey: string | undefined;
  private readonly limits: Readonly<Record<ModelTimeLimit, number>>;
  private readonly clock: Clock;
  private readonly extraBody: Record<string, unknown>;
  private readonly client: ModelServerClient;
  private readonly requests: ConcurrencyLimit;

  constructor(options: OpenAICompatibleModelOptions) {
    this.requests = options.requests ?? new ConcurrencyLimit(DEFAULT_MAX_CONCURRENT_REQUESTS);
    this.label = options.label ?? 'OpenAI-compatible';
    this.name = `${this.label} ${options.model}`;
    this.baseURL = options.baseURL;
    this.model = options.model;
    this.apiKey = options.apiKey;
    // Looked for now, as the server starts, not at the first request: a call that may run before it cannot be found instead.
    this.pin = options.fetch === undefined ? loopbackPinFor(options.baseURL) : undefined;
    void this.pin?.address();
    const request = milliseconds(options.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS);
    const idle = milliseconds(options.idleTimeoutMs, DEFAULT_IDLE_TIMEOUT_MS);
    this.limits = { request, idle, turn: milliseconds(options.turnTimeoutMs, DEFAULT_TURN_TIMEOUT_MS) };
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.extraBody = options.extraBody ?? {};
    this.client = new ModelServerClient({
      baseURL: options.baseURL,
      // Explicit values keep the client from reading OPENAI_* variables and sending them to whatever server this is.
      apiKey: options.apiKey ?? PLACEHOLDER_API_KEY,
      organization: null,
      project: null,
      // A retried stream would replay text the person has already seen.
      maxRetries: 0,
      timeout: request,
      // The client logs unparsable chunks verbatim; errors reach the caller as ModelError instead.
      logLevel: 'off',
      // Whole lines only, each bounded: the client's own line decoder is quadratic in a line's length. No redirects.
      fetch: lineAlignedFetch(redirectRefusingFetch(stoppableFetch(options.fetch ?? limitedFetch(request, idle, this.pin?.lookup)))),
    });
  }

  async *stream(request: ChatRequest, signal: AbortSignal): AsyncGenerator<ModelPart, void, undefined> {
    // Building and sending a request takes the client up to a millisecond of work with no I/O in between; after a
    // tool call, the tool-end already written to the run's clients would wait behind it for the socket to flush.
    // One turn of the event loop lets it leave first.
    await new Promise<void>((resolve) => setImmediate(resolve));
    // The places are shared fairly between requesters (connections): one queuing many turns cannot keep another's behind them all.
    const requester = request.requester ?? '';
    const atOnce = this.requests.tryAcquire(requester);
    let release = atOnce;
    if (release === undefined) {
      // Said before the turn joins the line, so a caller that stops reading here leaves nothing in it.
      yield { type: 'waiting', ahead: this.requests.aheadOf(requester), places: this.requests.max };
      release = await this.requests.acquire(signal, requester);
      if (release === undefined) return;
    }
    const held = release;
    try {
      if (atOnce === undefined) yield { type: 'admitted' };
      yield* this.streamRequest(request, signal);
    } finally {
      held();
    }
  }

  /**
   * Sends the request and answers its response, once more when the server closed the connection before any of its
   * answer: a connection kept alive that the server closed as idle just as the request went out on it (seen with
   * thousands of turns at once against a server that keeps connections 5 s, Node's default, where a run's turn then
   * ended in an error). Nothing of the answer was read, so nothing the person saw is replayed, and the connection
   * that failed is gone: the second request goes out on another.
   */
  private async send(body: ChatCompletionCreateParamsStreaming, signal: AbortSignal) {
    for (let attempt = 1; ; attempt += 1) {
      // The JSON is sent a message at a time, never as one string (see requestBody); the client sends a body given
      // in the request options in place of its own. A body is a stream read once: each attempt has its own.
      const sent = requestBody(body);
      try {
        return await this.client.chat.completions
          .create(body, { signal, body: sent.stream, headers: { 'content-type': 'application/json', 'content-length': String(sent.length) } })
          .withResponse();
      } catch (error) {
        if (attempt >= 2 || signal.aborted || !closedBeforeAnswer(error)) throw error;
      }
    }
  }

  private async *streamRequest(request: ChatRequest, signal: AbortSignal): AsyncGenerator<ModelPart, void, undefined> {
    const body: ChatCompletionCreateParamsStreaming = {
      ...this.extraBody,
      model: this.model,
      messages: toOpenAIMessages(request.messages),
      ...(request.tools.length > 0 ? { tools: toOpenAITools(request.tools) } : {}),
      stream: true,
      stream_options: { include_usage: true },
    };
    const reader = new OpenAIChunkReader();
    let midStream = false;
    let contentType: string | undefined;
    let chunked = false;
    // The turn's time limits abort the request as Stop does (the connection is closed); `expired` says which fired.
    const limited = new AbortController();
    let expired: ModelTimeLimit | undefined;
    const expire = (limit: ModelTimeLimit) => () => {
      expired ??= limit;
      limited.abort();
    };
    const cancelTurnTimer = this.clock.after(this.limits.turn, expire('turn'));
    let cancelProgressTimer = this.clock.after(this.limits.request, expire('request'));
    const timedOut = (cause?: unknown) => timeLimitError(expired!, this.limits[expired!], { provider: this.label, baseURL: this.baseURL }, cause);
    try {
      const { data: chunks, response } = await this.send(body, AbortSignal.any([signal, limited.signal]));
      midStream = true;
      contentType = mediaType(response.headers.get('content-type'));
      if (isWholeAnswer(response)) {
        // A server that ignores `stream: true` sends the whole completion at once; the client would look in it for
        // event-stream lines, find none, and the turn would end as cut off. Nothing of the body has been read yet.
        const completion = parseCompletion(await response.text());
        // A server may answer 200 with an error in place of the completion, as it does mid-stream; its words are the reason.
        const reported = reportedError(completion);
        if (reported !== undefined) throw new APIError(undefined, reported, undefined, response.headers);
        yield* reader.pushCompletion(completion);
      } else {
        for await (const chunk of chunks) {
          chunked = true;
          const reported = reportedError(chunk);
          if (reported !== undefined) throw new APIError(undefined, reported, undefined, response.headers);
          const progress = reader.progress;
          const parts = reader.push(chunk);
          // Only a piece of the answer counts: a server sending empty chunks or comments is still stalled.
          if (reader.progress !== progress) {
            cancelProgressTimer();
            cancelProgressTimer = this.clock.after(this.limits.idle, expire('idle'));
          }
          yield* parts;
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      if (expired !== undefined) throw timedOut(error);
      throw toModelError(error, { provider: this.label, baseURL: this.baseURL, apiKey: this.apiKey, limits: this.limits, midStream, progressed: reader.progress > 0 });
    } finally {
      cancelTurnTimer();
      cancelProgressTimer();
    }
    // The client ends quietly on abort; the caller asked for it, so no error and no finish part.
    if (signal.aborted) return;
    if (expired !== undefined) throw timedOut();
    const where = displayURL(this.baseURL);
    if (!reader.finished) {
      const notStreamed =
        contentType === 'text/event-stream' || chunked ? '' : ` (it answered with ${contentType === undefined || contentType === '' ? 'no content type' : bounded(contentType)}, not an event stream)`;
      throw new ModelError(this.label, `the stream from the model server at ${where} ended before the answer was complete${notStreamed}`);
    }
    // A cut-off answer must not pass for a whole one: the turn ends with an error, its text kept, its calls not run.
    if (reader.cutOff === 'length') {
      throw new ModelError(
        this.label,
        `the model server at ${where} cut the answer off at its length limit (finish_reason "length"), so it is incomplete: ` +
          `raise the server's limit on an answer's tokens or its context size, or ask for a shorter answer`,
      );
    }
    if (reader.cutOff === 'content_filter') {
      throw new ModelError(this.label, `the model server at ${where} cut the answer off by its content filter (finish_reason "content_filter"), so it is incomplete`);
    }
    if (reader.cutOff !== undefined) {
      throw new ModelError(this.label, `the model server at ${where} ended the answer with finish_reason "${reader.cutOff}" (the request was stopped or failed there), so it is incomplete`);
    }
    yield* reader.finish();
  }
}

function milliseconds(given: number | undefined, fallback: number): number {
  return Math.max(1, Math.round(given ?? fallback));
}

/**
 * undici's fetch with its own timeouts following the turn's limits: by default it gives up on headers after 300 s and
 * on a gap between two pieces of the body after 300 s, whatever the limits say (a model loading for six minutes
 * failed, said to have had ten). Its body timeout covers the wait for the first piece too, so it is the longer limit.
 * With `lookup`, a `localhost` server is reached at the one loopback address it holds (see LoopbackPin).
 */
function limitedFetch(requestMs: number, idleMs: number, lookup?: LookupFunction): typeof fetch {
  const dispatcher = new Agent({ headersTimeout: requestMs, bodyTimeout: Math.max(requestMs, idleMs), ...(lookup === undefined ? {} : { connect: { lookup } }) });
  // The package's Response is its own class, of the same shape as the global one (the client reads it as such); the
  // global fetch cannot take this dispatcher, being an older undici inside Node.
  const limited = async (input: Parameters<typeof fetch>[0], init?: RequestInit) => await undiciFetch(input as UndiciRequestInfo, { ...init, dispatcher } as UndiciRequestInit);
  // Needed where the web app's browser tests type-check this file: there Response is the DOM's, not undici's.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  return limited as unknown as typeof fetch;
}

/** The media type of a Content-Type header, lower case, without parameters; "" without one. */
function mediaType(header: string | null): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

function bounded(text: string): string {
  return text.length <= 100 ? text : `${text.slice(0, 100)}…`;
}

/**
 * The error a server sent in place of a completion or of a chunk, if it did: `{"error": …}`, or vLLM's flat
 * `{"object": "error", "message": …}`, which it sends as a chunk when generation fails mid-answer, then ends the stream.
 * The client reads only the first in a stream; the second, read as a chunk, held nothing: the turn ended as cut off
 * with the server's words lost, or, sent after a finish, the calls before it were run. Its type says `Object`, as the
 * client's own errors take it; a streamed error's `error` is given as parsed, a string too.
 */
function reportedError(value: unknown): object | undefined {
  if (!isPlainObject(value)) return undefined;
  if (value.object === 'error') return value;
  const error = value.error;
  if (!Object.hasOwn(value, 'error') || error === null || error === undefined || error === false || error === '') return undefined;
  return error;
}

/**
 * The body of a whole completion, read as a streamed chunk is: JSON.parse keeps a key that could reach a prototype as
 * the object's own, so the loop refuses a call whose arguments hold one, named (parseToolArguments); dropped here, the
 * call was put up and ran without it, unseen. JSON.parse may also fail with a RangeError (nested too deeply), which
 * is no stream break.
 */
function parseCompletion(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new MalformedChunkError('the answer, sent whole instead of streamed, is not valid JSON');
  }
}
