import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The terminal client is tested in a real pseudo-terminal against a real server: a loaded 2-core CI machine
    // can take seconds to start one. This bounds a hang; no test asserts on time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // vitest's default of one second for vi.waitFor and expect.poll would be a timing assertion: see makeWaitsPatient.
    setupFiles: ['./vitest.setup.ts'],
  },
});
