import { isPlainObject, parseUntrustedJson } from '@airlock/core';
import { stoppableFetch } from '../http/stoppable-fetch';

/** A place a local model server commonly listens, and what to call it. */
export interface ModelServerCandidate {
  /** The OpenAI-compatible API root, `/v1` included. */
  baseURL: string;
  provider: string;
}

/** A model server that answered. */
export interface FoundModelServer {
  baseURL: string;
  /** Model ids it listed, in its order; may be empty. */
  models: string[];
  provider: string;
}

/** Default ports of the common local servers, in the order they are preferred. */
export const LOCAL_MODEL_SERVERS: readonly ModelServerCandidate[] = [
  { baseURL: 'http://127.0.0.1:8080/v1', provider: 'llama.cpp' },
  { baseURL: 'http://127.0.0.1:11434/v1', provider: 'Ollama' },
  { baseURL: 'http://127.0.0.1:1234/v1', provider: 'LM Studio' },
  { baseURL: 'http://127.0.0.1:8000/v1', provider: 'vLLM' },
];

export const DEFAULT_PROBE_TIMEOUT_MS = 1_500;
/** The longest model id taken from a list, as long as a configured model name may be. */
const MAX_LISTED_MODEL_NAME_CHARS = 256;
/** A model list is small; a larger answer is not from a model server. */
const MAX_MODEL_LIST_BYTES = 1024 * 1024;

export interface ProbeOptions {
  /** Where to look, in order of preference. Default: llama.cpp, Ollama, LM Studio, vLLM on their default ports. */
  candidates?: readonly ModelServerCandidate[];
  /** How long each candidate may take to answer, in ms. Default 1,500. */
  timeoutMs?: number;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /** A model asked for: the first candidate that lists it is preferred to any before it. Default none. */
  model?: string;
}

/** Whether `listed` holds `model`; Ollama takes a name without its tag as the `latest` one (`llama3.2` for `llama3.2:latest`). */
export function listsModel(listed: readonly string[], model: string): boolean {
  return listed.includes(model) || (!model.includes(':') && listed.includes(`${model}:latest`));
}

/**
 * Asks every candidate for its model list at once and returns the most preferred one that answers
 * with an OpenAI-style list, or undefined; with `model`, the most preferred that lists it, when one does (a server
 * serving one model, as llama.cpp does, answers to any name with its own). Takes at most about `timeoutMs`.
 */
export async function probeLocalModelServers(options: ProbeOptions = {}): Promise<FoundModelServer | undefined> {
  const candidates = options.candidates ?? LOCAL_MODEL_SERVERS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const controller = new AbortController();
  const probes = candidates.map((candidate) =>
    listModels(candidate.baseURL, undefined, { timeoutMs, fetch: options.fetch, signal: controller.signal }).then(
      (models): FoundModelServer => ({ baseURL: trimSlashes(candidate.baseURL), models, provider: candidate.provider }),
      () => undefined,
    ),
  );
  try {
    // In order of preference: a less preferred server that answers first still waits for the ones before it.
    let first: FoundModelServer | undefined;
    for (const probe of probes) {
      const found = await probe;
      if (found === undefined) continue;
      if (options.model === undefined || listsModel(found.models, options.model)) return found;
      first ??= found;
    }
    return first;
  } finally {
    controller.abort();
  }
}

export interface ListModelsOptions {
  /** Default 1,500 ms. */
  timeoutMs?: number;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /** Cancels the request. */
  signal?: AbortSignal;
}

/**
 * No answer at all came from a model server's address (nothing listens there, the name does not resolve, or it did not
 * answer in time), as against an answer that was no model list. `reason` says which, from the underlying error.
 */
export class NoAnswerError extends Error {
  override readonly name = 'NoAnswerError';
  readonly reason: string;
  constructor(cause: unknown) {
    const reason = noAnswerReason(cause);
    super(`no answer (${reason})`, { cause });
    this.reason = reason;
  }
}

/** `fetch failed` says nothing: the reason is in its cause (`connect ECONNREFUSED 127.0.0.1:8080`, a timeout's name). */
function noAnswerReason(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'it did not answer in time';
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error && cause.message !== '') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** The model ids a server lists at `<baseURL>/models`. Throws when it does not answer 200 with a `data` array. */
export async function listModels(baseURL: string, apiKey?: string, options: ListModelsOptions = {}): Promise<string[]> {
  const doFetch = stoppableFetch(options.fetch ?? fetch);
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const response = await doFetch(`${trimSlashes(baseURL)}/models`, {
    headers: { accept: 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    signal,
    redirect: 'error',
  }).catch((error: unknown) => {
    throw new NoAnswerError(error);
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`GET /models answered HTTP ${response.status}`);
  }
  const body = parseUntrustedJson(await readBoundedText(response, MAX_MODEL_LIST_BYTES));
  if (!isPlainObject(body) || !Array.isArray(body.data)) throw new Error('GET /models did not answer with a model list');
  // An id no one could configure as the model is left out: the first one listed is the name sent and shown everywhere.
  return body.data.flatMap((entry: unknown) =>
    isPlainObject(entry) && typeof entry.id === 'string' && entry.id !== '' && entry.id.length <= MAX_LISTED_MODEL_NAME_CHARS ? [entry.id] : [],
  );
}

async function readBoundedText(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new Error(`the answer is larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function trimSlashes(url: string): string {
  return url.replace(/\/+$/, '');
}
