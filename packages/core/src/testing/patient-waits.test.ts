import { describe, expect, it, vi, type ExpectStatic, type VitestUtils } from 'vitest';
import { makeWaitsPatient, PATIENT_WAIT_MS } from './patient-waits';

/** Fakes of vi's and expect's waits, made patient; answers with the options each of them was handed. */
function patientFakes() {
  const waitFor = vi.fn();
  const waitUntil = vi.fn();
  const poll = vi.fn();
  const waits = { waitFor, waitUntil } as unknown as VitestUtils;
  const expects = { poll } as unknown as ExpectStatic;
  makeWaitsPatient(waits, expects);
  const handed = (fake: typeof waitFor): unknown => fake.mock.calls[0]?.[1];
  return { waits, expects, handed: () => [handed(waitFor), handed(waitUntil), handed(poll)] };
}

const check = () => true;

describe('makeWaitsPatient', () => {
  it('gives vi.waitFor, vi.waitUntil and expect.poll called without a timeout the patient one, keeping their other options', async () => {
    const { waits, expects, handed } = patientFakes();
    await waits.waitFor(check);
    await waits.waitUntil(check, { interval: 5 });
    void expects.poll(check, { message: 'm' });
    expect(handed()).toStrictEqual([{ timeout: PATIENT_WAIT_MS }, { interval: 5, timeout: PATIENT_WAIT_MS }, { message: 'm', timeout: PATIENT_WAIT_MS }]);
  });

  it('keeps a timeout the caller named, as a number or an option', async () => {
    const { waits, expects, handed } = patientFakes();
    await waits.waitFor(check, 200);
    await waits.waitUntil(check, { timeout: 300 });
    void expects.poll(check, { timeout: 400, interval: 10 });
    expect(handed()).toStrictEqual([200, { timeout: 300 }, { timeout: 400, interval: 10 }]);
  });

  it('is in force through the setup file: vi.waitFor with no timeout of its own still waits after vitest’s one second', async () => {
    const start = performance.now();
    // Fails for a little over a second, then holds: vitest's own default gives up at one second.
    await expect(
      vi.waitFor(() => {
        expect(performance.now() - start).toBeGreaterThan(1_200);
      }),
    ).resolves.toBeUndefined();
  });
});
