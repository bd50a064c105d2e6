// Builds the server once to plain JavaScript (dist/main.js): see build-options.ts.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { BUILD_OPTIONS } from './build-options';

rmSync(new URL('dist', import.meta.url), { recursive: true, force: true });
await build(BUILD_OPTIONS);
