import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

const devServer = process.env.AIRLOCK_DEV_SERVER ?? 'http://127.0.0.1:7700';

export default defineConfig({
  plugins: [react()],
  server: {
    proxy: {
      '/trpc': {
        target: devServer,
        ws: true,
        changeOrigin: true,
        // The server only accepts its own origin; in development the proxy speaks for the page.
        configure: (proxy) => {
          proxy.on('proxyReqWs', (request) => request.setHeader('origin', devServer));
        },
      },
    },
  },
  // React, react-markdown and tRPC make one ~450 kB (~140 kB gzip) bundle, served from the local machine. No source
  // maps: the server would serve them to anyone who asks; `pnpm dev` has its own.
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 600 },
  test: {
    // vitest's default of one second for vi.waitFor and expect.poll would be a timing assertion: see makeWaitsPatient.
    setupFiles: ['./vitest.setup.ts'],
    projects: [
      {
        extends: true,
        // A bound for a loaded 2-core CI machine, not a timing assertion.
        test: { name: 'unit', environment: 'happy-dom', include: ['src/**/*.test.{ts,tsx}'], testTimeout: 60_000 },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          environment: 'node',
          include: ['e2e/**/*.test.ts'],
          globalSetup: ['e2e/support/build-once.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // One browser and one server per file; the machine has two cores.
          fileParallelism: false,
        },
      },
    ],
  },
});
