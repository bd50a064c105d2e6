export { OpenAICompatibleModel, DEFAULT_REQUEST_TIMEOUT_MS, type OpenAICompatibleModelOptions } from './openai-compatible-model';
export { DemoModel, DEMO_MODEL_NAME, type DemoModelOptions } from './demo-model';
export {
  probeLocalModelServers,
  listModels,
  LOCAL_MODEL_SERVERS,
  type FoundModelServer,
  type ModelServerCandidate,
  type ProbeOptions,
  type ListModelsOptions,
} from './probe-model-servers';
export { resolveChatModel, normaliseBaseURL, type ModelConfig, type ModelInfo, type ResolvedModel, type ResolveModelDeps } from './resolve-model';
