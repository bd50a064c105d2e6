import { AirlockError } from '@airlock/core';

/** A row of a store's table, by the column that names it: `DELETE FROM <table> WHERE <key> = '<id>'` deletes it. */
export interface DamagedRow {
  table: string;
  key: string;
  id: string;
}

/**
 * A stored record that does not read: its text was damaged (or edited), or it is JSON that is no such record. Names
 * the record ("the decision of approval …", "an event of run …") and why, so the person learns which chat it belongs
 * to rather than a parser's stack. A store throws it wrapped in its own error; a client is told `clientText`.
 */
export class DamagedRecordError extends AirlockError {
  readonly fault = 'system';
  override readonly name = 'DamagedRecordError';
  constructor(
    readonly record: string,
    options: {
      cause: unknown;
      /**
       * The row that holds it, where the start stops rather than go on without it (a rule, a grant: a deny rule left
       * out would let through what it refuses), so the person can delete it and go on. Default none.
       */
      row?: DamagedRow;
    },
  ) {
    super(`${record}: ${options.cause instanceof Error ? options.cause.message : String(options.cause)}`, { cause: options.cause });
    this.row = options.row;
  }

  readonly row: DamagedRow | undefined;

  /** What a client is told of a request that met the record: which it is, and that nothing was done with it. */
  get clientText(): string {
    return `A stored record is damaged (${this.message}): it was not read as anything and nothing was run on it; it was left as it is.`;
  }
}

/** The DamagedRecordError an error was caused by, however a store wrapped it; undefined for any other error. */
export function damagedRecordIn(error: unknown): DamagedRecordError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 8; cause = cause.cause, depth += 1) {
    if (cause instanceof DamagedRecordError) return cause;
  }
  return undefined;
}
