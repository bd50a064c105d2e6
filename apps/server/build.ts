// Builds the server once to plain JavaScript (dist/main.js), so starting it compiles nothing. The @airlock/*
// workspace packages are TypeScript sources and are bundled in; every package from node_modules stays external.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));
const bare = /^[^./]/;

rmSync(new URL('dist', import.meta.url), { recursive: true, force: true });
await build({
  absWorkingDir: root,
  // The rules' command parser runs in a worker thread of its own (src/rules/command-line-reader.ts).
  entryPoints: ['src/main.ts', 'src/rules/command-line-worker.ts'],
  outdir: 'dist',
  entryNames: '[name]',
  bundle: true,
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
});
