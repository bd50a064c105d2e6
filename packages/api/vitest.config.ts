import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The full test command runs packages side by side on a 2-core CI machine: a test that takes milliseconds alone
    // (a megabyte of input, a thousand properties) can take seconds there. This bounds a hang; no test asserts on time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // vitest's default of one second for vi.waitFor and expect.poll would be a timing assertion: see makeWaitsPatient.
    setupFiles: ['./vitest.setup.ts'],
  },
});
