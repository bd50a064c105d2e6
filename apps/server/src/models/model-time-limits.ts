/** A limit on a model turn's time: until the answer starts, between pieces of it, and on the whole turn. */
export type ModelTimeLimit = 'request' | 'idle' | 'turn';

/** The flag and variable of each limit, named by the message of a turn it ended. */
export const MODEL_TIME_SETTINGS: Readonly<Record<ModelTimeLimit, string>> = {
  request: '--model-timeout-ms / AIRLOCK_MODEL_TIMEOUT_MS',
  idle: '--model-idle-timeout-ms / AIRLOCK_MODEL_IDLE_TIMEOUT_MS',
  turn: '--model-turn-timeout-ms / AIRLOCK_MODEL_TURN_TIMEOUT_MS',
};

/** Until the answer's first piece: a local server may load the model and read a long prompt first. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10 * 60 * 1000;
/**
 * Between pieces of an answer once it has started: a model writing on a CPU sends a token every second or so. Five
 * minutes is the gap the HTTP client allowed between any two bytes of an answer before, so no server that worked
 * then is stopped by it now; bytes that carry no piece (keep-alive comments) no longer reset it.
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60 * 1000;
/**
 * The whole turn, from sending the request: at two tokens a second a model writes about 14,000 tokens in two hours,
 * longer than the context local servers give a model by default (4,096 to 8,192 tokens, prompt included); a slower
 * model with a larger context may need more. A server that trickles a piece every few seconds is stopped here and its
 * request's place given back.
 */
export const DEFAULT_TURN_TIMEOUT_MS = 2 * 60 * 60 * 1000;
