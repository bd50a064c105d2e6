import type { ChatMessage } from './messages';
import type { JsonSchema } from './tool';

/** What the model is told about one tool. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface ChatRequest {
  messages: readonly ChatMessage[];
  /** Tools the model may call this turn; empty when it must answer in text. */
  tools: readonly ToolSpec[];
  /**
   * Whom the turn is for (on a server, the connection that started the run), not sent to the model server: a model
   * that bounds its requests at once shares its places fairly between requesters, so one cannot keep another waiting
   * behind all its turns. Default: one requester for all.
   */
  requester?: string;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/** One piece of a streamed model turn. Text and reasoning are deltas, never cumulative. */
export type ModelPart =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | {
      type: 'tool-call';
      /** Provider id of the call; "" when the provider sent none. */
      id: string;
      name: string;
      /** Raw argument text as the model wrote it, or an already-parsed object. */
      arguments: string | Record<string, unknown>;
    }
  | { type: 'finish'; reason: 'stop' | 'tool-calls' | 'length' | 'other'; usage?: TokenUsage }
  /**
   * The turn waits for a place among the requests the model server is sent at once: all `places` are in use, and
   * `ahead` turns wait before it. Sent before anything else, by a model that bounds its requests; none when it need not wait.
   */
  | { type: 'waiting'; ahead: number; places: number }
  /** The turn that waited has its place: its request is sent. */
  | { type: 'admitted' };

/** The one interface the loop needs from a model; each vendor is an adapter behind it. */
export interface ChatModel {
  /** Short label for the UI and logs, e.g. "llama.cpp qwen3-8b". */
  readonly name: string;
  stream(request: ChatRequest, signal: AbortSignal): AsyncIterable<ModelPart>;
}
