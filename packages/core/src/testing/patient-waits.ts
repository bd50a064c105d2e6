import type { ExpectStatic, VitestUtils } from 'vitest';

/** How long a wait with no timeout of its own polls before it fails: a bound for a hang, not a time being tested. */
export const PATIENT_WAIT_MS = 30_000;

/**
 * Gives `vi.waitFor`, `vi.waitUntil` and `expect.poll` a default timeout of PATIENT_WAIT_MS in place of vitest's one
 * second.
 *
 * Vitest's default makes every wait without a timeout of its own a timing assertion: "this happens within a second".
 * The full test command runs packages side by side on a 2-core CI machine, where a server or a browser can take
 * longer than that to do what a wait is for, and the test failed though nothing was wrong (a run reaching its model
 * server behind two others, under load). A wait that names its own timeout keeps it.
 *
 * Called from each package's setup file with that package's `vi` and `expect`: each package may resolve its own copy
 * of vitest.
 */
export function makeWaitsPatient(vi: VitestUtils, expect: ExpectStatic): void {
  const waitFor = vi.waitFor.bind(vi);
  const waitUntil = vi.waitUntil.bind(vi);
  const poll = expect.poll.bind(expect);
  vi.waitFor = (callback, options) => waitFor(callback, patient(options));
  vi.waitUntil = (callback, options) => waitUntil(callback, patient(options));
  expect.poll = ((callback, options) => poll(callback, withPatientTimeout(options))) as ExpectStatic['poll'];
}

function patient<Options extends { timeout?: number }>(options: number | Options | undefined): number | Options {
  return typeof options === 'number' ? options : withPatientTimeout(options);
}

function withPatientTimeout<Options extends { timeout?: number }>(options: Options | undefined): Options {
  return { ...options, timeout: options?.timeout ?? PATIENT_WAIT_MS } as Options;
}
