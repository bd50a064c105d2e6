import { ConcurrencyLimit, errorMessage, type ChatModel } from '@airlock/core';
import { ConfigError } from '../config';
import { loopbackPinnedFetch } from '../http/loopback-name';
import { DEMO_MODEL_NAME, DemoModel, type DemoModelOptions } from './demo-model';
import { displayURL } from './display-url';
import { LOCAL_MODEL_SERVERS, listModels, listsModel, NoAnswerError, probeLocalModelServers, type ProbeOptions } from './probe-model-servers';

/** The model name sent when none is configured and the server lists none; llama.cpp, for one, accepts any name. */
export const FALLBACK_MODEL_NAME = 'default';

export interface ModelConfig {
  /** OpenAI-compatible API root, e.g. "http://127.0.0.1:8080/v1" ("/v1" is added to a bare host). Default: probe local servers. */
  modelUrl?: string;
  /** Model id. Default: the first model the server lists. */
  model?: string;
  /** Bearer token for the server; needs `modelUrl`, since a found server is never sent it. Default none. */
  apiKey?: string;
  /** Requests to the model server at once; more wait their turn. Default 64. */
  maxConcurrentRequests?: number;
  /** Time to the first piece of an answer, in ms. Default the model's own (10 minutes), or `deps.requestTimeoutMs`. */
  requestTimeoutMs?: number;
  /** Time between pieces of an answer, in ms. Default the model's own (5 minutes). */
  idleTimeoutMs?: number;
  /** Time one turn may stream in all, in ms. Default the model's own (2 hours). */
  turnTimeoutMs?: number;
}

export interface ResolveModelDeps {
  /** Finds a local server when no URL is configured. Default `probeLocalModelServers`. */
  probe?: (options: ProbeOptions) => ReturnType<typeof probeLocalModelServers>;
  /** Default: the global fetch, for probing, listing and chatting. */
  fetch?: typeof fetch;
  /** Options of the demo model used when no server answers. */
  demo?: DemoModelOptions;
  /** Passed to the OpenAI-compatible model. Default its own (10 minutes). */
  requestTimeoutMs?: number;
}

export interface ModelInfo {
  /** "llama.cpp", "Ollama", "LM Studio", "vLLM", "OpenAI-compatible" or "demo". */
  provider: string;
  /** The API root in use, without credentials; "" for the demo. */
  baseURL: string;
  model: string;
  demo: boolean;
  /** Something a person should know at startup, e.g. that the model list could not be read. */
  warning?: string;
}

export interface ResolvedModel {
  model: ChatModel;
  info: ModelInfo;
}

/**
 * Picks the model to chat with: the configured server, else the first local server that answers, else the offline
 * demo. An API key without a model URL stops here (ConfigError).
 */
export async function resolveChatModel(config: ModelConfig, deps: ResolveModelDeps = {}): Promise<ResolvedModel> {
  const modelUrl = config.modelUrl !== undefined && config.modelUrl.trim() !== '' ? config.modelUrl : undefined;
  if (modelUrl === undefined && config.apiKey !== undefined && config.apiKey !== '') {
    // A probed port is anyone's on a shared machine: whatever listens there would get every request, the key included.
    const ports = LOCAL_MODEL_SERVERS.map((candidate) => new URL(candidate.baseURL).port);
    throw new ConfigError(
      '--model-url',
      `is needed with an API key (--api-key-file, AIRLOCK_API_KEY_FILE or AIRLOCK_API_KEY): without it Airlock looks for a model server on ports ` +
        `${ports.slice(0, -1).join(', ')} and ${ports.at(-1)} of this machine, and would send the key to any program listening there`,
    );
  }
  if (modelUrl !== undefined) {
    const baseURL = normaliseBaseURL(modelUrl);
    let listed: string[] | undefined;
    let warning: string | undefined;
    let unanswered: string | undefined;
    try {
      // The key goes with the request: to the one loopback address a `localhost` server holds (see LoopbackPin).
      listed = await listModels(baseURL, config.apiKey, { fetch: deps.fetch ?? loopbackPinnedFetch(baseURL) });
    } catch (error) {
      // Nothing there to answer: a model name would not help, and the person should hear of it even with one configured.
      if (error instanceof NoAnswerError) unanswered = `nothing answered at ${displayURL(baseURL)} (${error.reason}): chats fail until a model server answers there. Check that it runs, or set --model-url (AIRLOCK_MODEL_URL) to where one does.`;
      else if (config.model === undefined) warning = `could not list the models at ${displayURL(baseURL)} (${errorMessage(error)})`;
    }
    const model = config.model ?? listed?.[0];
    if (listed !== undefined && model === undefined) warning = `the model server at ${displayURL(baseURL)} lists no models`;
    const unlisted = config.model === undefined || listed === undefined ? undefined : notListedWarning(`the model server at ${displayURL(baseURL)}`, config.model, listed);
    return await connect({ baseURL, provider: providerForURL(baseURL), model, warning, unlisted: unanswered ?? unlisted }, config, deps);
  }

  const found = await (deps.probe ?? probeLocalModelServers)({ fetch: deps.fetch, ...(config.model === undefined ? {} : { model: config.model }) });
  if (found) {
    const model = config.model ?? found.models[0];
    const warning = model === undefined ? `the ${found.provider} server at ${displayURL(found.baseURL)} lists no models` : undefined;
    const unlisted = config.model === undefined ? undefined : notListedWarning(`the ${found.provider} server at ${displayURL(found.baseURL)}`, config.model, found.models);
    return await connect({ baseURL: found.baseURL, provider: found.provider, model, warning, unlisted }, config, deps);
  }

  return {
    model: new DemoModel(deps.demo),
    info: { provider: 'demo', baseURL: '', model: DEMO_MODEL_NAME, demo: true },
  };
}

interface Target {
  baseURL: string;
  provider: string;
  model: string | undefined;
  /** Why no model name could be chosen from the server's list. */
  warning: string | undefined;
  /** A warning in full, shown as it is: that the server does not list the configured model, or that nothing answered. */
  unlisted?: string | undefined;
}

/** Listed names shown in a warning; the rest are counted. */
const SHOWN_LISTED_MODELS = 5;
const SHOWN_MODEL_NAME_CHARS = 80;

/**
 * A warning that `server` does not list `model`, naming what it lists, or undefined when it does (see listsModel).
 * Nothing is refused: a server that serves one model answers to any name.
 */
function notListedWarning(server: string, model: string, listed: readonly string[]): string | undefined {
  if (listsModel(listed, model)) return undefined;
  const shown = listed.slice(0, SHOWN_LISTED_MODELS).map((name) => JSON.stringify(name.length <= SHOWN_MODEL_NAME_CHARS ? name : `${name.slice(0, SHOWN_MODEL_NAME_CHARS)}…`));
  const more = listed.length - shown.length;
  const names = listed.length === 0 ? 'it lists none' : `it lists ${more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ')}`;
  const name = JSON.stringify(model);
  return `${server} does not list the model ${name}; ${names}. Requests name ${name} all the same: set AIRLOCK_MODEL to one it lists if the server refuses them.`;
}

async function connect(target: Target, config: ModelConfig, deps: ResolveModelDeps): Promise<ResolvedModel> {
  // Imported here, not above: a start on the demo model does not load openai or undici.
  const { DEFAULT_MAX_CONCURRENT_REQUESTS, OpenAICompatibleModel } = await import('./openai-compatible-model');
  const model = target.model ?? FALLBACK_MODEL_NAME;
  const warning = target.warning === undefined ? target.unlisted : `${target.warning}; using the model name "${model}". Set AIRLOCK_MODEL to choose one.`;
  const chatModel = new OpenAICompatibleModel({
    baseURL: target.baseURL,
    model,
    apiKey: config.apiKey,
    label: target.provider,
    requestTimeoutMs: config.requestTimeoutMs ?? deps.requestTimeoutMs,
    idleTimeoutMs: config.idleTimeoutMs,
    turnTimeoutMs: config.turnTimeoutMs,
    fetch: deps.fetch,
    requests: new ConcurrencyLimit(config.maxConcurrentRequests ?? DEFAULT_MAX_CONCURRENT_REQUESTS),
  });
  const info: ModelInfo = { provider: target.provider, baseURL: displayURL(target.baseURL), model, demo: false };
  return { model: chatModel, info: warning === undefined ? info : { ...info, warning } };
}

/** Trailing slashes go; a URL with no path gets "/v1", the usual API root. */
export function normaliseBaseURL(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new Error(`the model URL is not a valid URL: ${displayURL(raw)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('the model URL must start with http:// or https://');
  if (url.username !== '' || url.password !== '') throw new Error('the model URL must not contain a user or password: pass the key as the API key instead');
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path === '' ? '/v1' : path;
  return url.toString().replace(/\/+$/, '');
}

/** The name of a well-known local server when the URL points at its default port on this machine. */
export function providerForURL(baseURL: string): string {
  const url = new URL(baseURL);
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  const known = LOCAL_MODEL_SERVERS.find((candidate) => new URL(candidate.baseURL).port === url.port);
  return loopback && known ? known.provider : 'OpenAI-compatible';
}
