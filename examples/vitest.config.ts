import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Each test runs the example as a child process against a real server: a loaded 2-core CI machine can take
    // seconds to start one. This bounds a hang; no test asserts on time.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
