import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const webRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The browser tests load the built app from the real server: build it once before they run. In a child
 * process, because vitest sets NODE_ENV=test, which would bundle React's development build.
 */
export default async function buildWebApp(): Promise<void> {
  if (process.env.AIRLOCK_E2E_SKIP_BUILD === '1') return;
  const viteBin = `${webRoot}node_modules/vite/bin/vite.js`;
  await promisify(execFile)(process.execPath, [viteBin, 'build', '--logLevel', 'warn'], {
    cwd: webRoot,
    env: { ...process.env, NODE_ENV: 'production' },
  });
}
