import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/config';

/** A new folder under the system's temporary folder, by its real path, removed with everything in it when disposed. */
export async function tempDir(prefix: string): Promise<{ path: string } & AsyncDisposable> {
  const path = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  return { path, [Symbol.asyncDispose]: () => rm(path, { recursive: true, force: true }) };
}

/** The message of the ConfigError `attempt` throws; any other outcome fails the test. */
export function configProblem(attempt: () => unknown): string {
  try {
    attempt();
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError');
}
