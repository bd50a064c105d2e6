// How the server is built to plain JavaScript (dist/main.js, by build.ts), so starting it compiles nothing. The
// @airlock/* workspace packages are TypeScript sources and are bundled in; every package from node_modules stays
// external. What the server imports only when it needs it (`await import(…)`: PostgreSQL, MCP, a model server's
// client, undici) goes to chunks of its own beside main.js, so a start that needs none of it does not load those
// packages (test/start-up-imports.test.ts).
import type { BuildOptions } from 'esbuild';
import { fileURLToPath } from 'node:url';

const bare = /^[^./]/;

export const BUILD_OPTIONS = {
  absWorkingDir: fileURLToPath(new URL('.', import.meta.url)),
  // The rules' command parser runs in a worker thread of its own (src/rules/command-line-reader.ts).
  entryPoints: ['src/main.ts', 'src/rules/command-line-worker.ts'],
  outdir: 'dist',
  entryNames: '[name]',
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'external-node-modules',
      setup(builder) {
        builder.onResolve({ filter: bare }, (args) => (args.path.startsWith('@airlock/') ? undefined : { path: args.path, external: true }));
      },
    },
  ],
} satisfies BuildOptions;
