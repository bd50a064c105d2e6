/** Who is at fault: the caller sent something wrong, the model misbehaved, or the system failed. */
export type Fault = 'caller' | 'model' | 'system';

export abstract class AirlockError extends Error {
  abstract readonly fault: Fault;
}

/** A request that names something that does not exist (or that the caller may not see). */
export class NotFoundError extends AirlockError {
  readonly fault = 'caller';
  override readonly name = 'NotFoundError';
  constructor(
    readonly kind: string,
    readonly id: string,
  ) {
    super(`${kind} "${id}" was not found`);
  }
}

/** A request that conflicts with the current state, e.g. a second run in a busy session. */
export class ConflictError extends AirlockError {
  readonly fault = 'caller';
  override readonly name = 'ConflictError';
  constructor(
    readonly reason: string,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** A caller that exceeded a limit (concurrent runs, message rate). */
export class LimitExceededError extends AirlockError {
  readonly fault = 'caller';
  override readonly name = 'LimitExceededError';
  constructor(
    readonly limit: string,
    readonly max: number,
    /** When a limit on a rate lets the next one through, counted from now. Default none (a limit on what is held). */
    readonly retryAfterMs?: number,
  ) {
    super(`limit exceeded: at most ${max} ${limit}${retryAfterMs === undefined ? '' : `; try again in ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s`}`);
  }
}

/** One way a call's arguments fail its tool's schema: where (`command`, `options.depth`, "(arguments)") and why. */
export interface ArgumentIssue {
  path: string;
  message: string;
}

/** Arguments a caller sent for a tool (a person's edit before allowing) that its schema refuses. */
export class InvalidArgumentsError extends AirlockError {
  readonly fault = 'caller';
  override readonly name = 'InvalidArgumentsError';
  constructor(
    readonly toolName: string,
    readonly issues: readonly ArgumentIssue[],
  ) {
    super(`arguments: invalid for "${toolName}": ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`);
  }
}

/** The model server failed or answered with something unusable. */
export class ModelError extends AirlockError {
  readonly fault = 'model';
  override readonly name = 'ModelError';
  constructor(
    readonly provider: string,
    readonly detail: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(`${provider}: ${detail}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = options?.status;
  }
  readonly status: number | undefined;
}

/** A scripted test model was used in a way its script did not expect. */
export class ScriptError extends AirlockError {
  readonly fault = 'system';
  override readonly name = 'ScriptError';
  constructor(readonly detail: string) {
    super(detail);
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
