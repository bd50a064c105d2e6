import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, plainHttpModelWarning } from '../src/config';
import { createServices } from '../src/create-services';
import { tempDir } from './support/temp-dir';

const warned = (modelUrl: string, apiKey?: string) => plainHttpModelWarning({ modelUrl, apiKey }) !== null;

describe('a model server reached over plain HTTP beyond this machine', () => {
  it('is warned of for an http URL whose host is not this machine’s, saying the API key crosses too when one is given', () => {
    const withKey = plainHttpModelWarning({ modelUrl: 'http://192.0.2.2:18099/v1', apiKey: 'sk-secret-key' });
    expect(withKey).toBe(
      'Warning: the model server at http://192.0.2.2:18099 is reached over plain HTTP, beyond this machine: every chat (what you write, ' +
        'what the tools return, the model’s answers) and the API key cross the network unencrypted, for anyone on the way to read, ' +
        'and the key to reuse. Give an https:// model URL, or reach the model server through an SSH tunnel or a VPN.',
    );
    expect(withKey).not.toContain('sk-secret-key');
    expect(plainHttpModelWarning({ modelUrl: 'http://models.example.test/v1', apiKey: undefined })).toBe(
      'Warning: the model server at http://models.example.test is reached over plain HTTP, beyond this machine: every chat (what you write, ' +
        'what the tools return, the model’s answers) crosses the network unencrypted, for anyone on the way to read. ' +
        'Give an https:// model URL, or reach the model server through an SSH tunnel or a VPN.',
    );
    for (const url of ['http://10.0.0.5:8080/v1', 'http://[2001:db8::1]:8080/v1', 'http://localhost.example.test/v1', 'http://0x7f.example.test/v1']) expect(warned(url), url).toBe(true);
  });

  it('is not warned of over https, on this machine (loopback addresses, localhost and its subdomains), nor with no URL', () => {
    for (const url of ['https://api.example.test/v1', 'http://127.0.0.1:8080/v1', 'http://127.3.4.5/v1', 'http://localhost:11434', 'http://LOCALHOST:1/v1', 'http://[::1]:8080/v1', 'http://models.localhost:8080/v1']) {
      expect(warned(url, 'sk-key'), url).toBe(false);
    }
    expect(plainHttpModelWarning({ modelUrl: undefined, apiKey: undefined })).toBeNull();
  });

  it('is said at start-up, before the model server is first asked anything', async () => {
    await using dir = await tempDir('airlock-model-http-');
    const keyFile = join(dir.path, 'key');
    await writeFile(keyFile, 'sk-secret-key\n', { mode: 0o600 });
    // TEST-NET-1: nothing answers there; the model list is given up on after its time limit.
    const workspace = join(dir.path, 'ws');
    await mkdir(workspace);
    const args = ['--workspace', workspace, '--model-url', 'http://192.0.2.1:9/v1', '--api-key-file', keyFile, '--tool-sandbox', 'none', '--data-dir', join(dir.path, 'data')];
    const config = loadConfig(args, { HOME: dir.path }, dir.path);
    const lines: string[] = [];
    const created = await createServices(config, { log: (line) => lines.push(line), env: { HOME: dir.path } });
    await created.close();

    const warning = lines.findIndex((line) => line.startsWith('Warning: the model server at http://192.0.2.1:9 is reached over plain HTTP'));
    expect(warning).not.toBe(-1);
    expect(lines[warning]).toContain('and the API key cross the network unencrypted');
    expect(lines.findIndex((line) => line.startsWith('Model warning: nothing answered at http://192.0.2.1:9/v1'))).toBeGreaterThan(warning);
    expect(lines.join('\n')).not.toContain('sk-secret-key');
  }, 30_000);
});
