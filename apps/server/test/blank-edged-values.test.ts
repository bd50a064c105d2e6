import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/config';
import { startOrExit } from './support/server-process';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a value with a blank at its start or end (a file of variables, a copied line) stops start-up saying so', () => {
  test.each([
    ['AIRLOCK_TOOL_NETWORK', 'off '],
    ['AIRLOCK_MODEL', 'qwen3:8b '],
    ['AIRLOCK_MODEL_URL', 'http://127.0.0.1:9/v1\t'],
    ['AIRLOCK_MAX_RUNNING_CALLS', ' 8'],
  ])('%s=%j', async (variable, value) => {
    const root = await mkdtemp(join(tmpdir(), 'airlock-blank-edged-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await mkdir(join(root, 'ws'));

    const { exitCode, output } = await startOrExit(['--workspace', join(root, 'ws'), '--data-dir', join(root, 'data')], { [variable]: value }, cleanups);

    expect(exitCode).toBe(1);
    expect(output).toContain(`airlock: ${variable}: has a blank (a space, tab or line break) at its start or end: give the value alone\n`);
  }, 60_000);
});

describe('a setting read from the environment alone is held to the same rule', () => {
  // A file of variables saved with Windows line ends gives each value a carriage return at its end.
  test.each([
    ['AIRLOCK_ALLOW_REMOTE', '1\r'],
    ['AIRLOCK_ALLOW_HOME_WORKSPACE', '1 '],
    ['AIRLOCK_TOKEN', `${'t'.repeat(40)}\r`],
    ['AIRLOCK_API_KEY', 'sk-key\r'],
    ['AIRLOCK_ALLOWED_ORIGINS', ' https://chat.example.test'],
  ])('%s=%j', async (variable, value) => {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'airlock-blank-edged-')));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    await mkdir(join(root, 'ws'));

    const load = () => loadConfig(['--workspace', join(root, 'ws'), '--data-dir', join(root, 'data'), '--model-url', 'http://127.0.0.1:9/v1'], { [variable]: value }, root);

    expect(load).toThrow(new ConfigError(variable, 'has a blank (a space, tab or line break) at its start or end: give the value alone'));
  });
});
