import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { createServices } from '../src/create-services';
import { runTool, tempFolder, toolNamed } from '../src/tools/test-support';
import { openTestDatabase, probeTestDatabase, TEST_DATABASE_URL } from './support/postgres';

const postgres = await probeTestDatabase();

describe.skipIf(!postgres.available)(postgres.available ? 'the database client key' : `the database client key (skipped: ${postgres.reason})`, () => {
  it('the client key the database URL names (sslkey) is hidden from a sandboxed call, as ~/.pgpass is', async () => {
    await using database = await openTestDatabase();
    await using workspace = await tempFolder('/var/tmp');
    // Outside /tmp, which a sandboxed call has its own of: a place the call sees, read-only, like a home folder.
    await using keys = await tempFolder('/var/tmp');
    const keyFile = path.join(keys.path, 'client.key');
    await writeFile(keyFile, '-----BEGIN PRIVATE KEY-----\nairlock-client-key\n', { mode: 0o600 });
    await writeFile(path.join(keys.path, 'client.crt'), 'a certificate, not secret\n');
    // sslmode=disable: the test database speaks no TLS; the key is read all the same, as with a database that checks certificates.
    const url = new URL(TEST_DATABASE_URL);
    url.searchParams.set('sslmode', 'disable');
    url.searchParams.set('sslkey', keyFile);
    const env = { ...process.env, AIRLOCK_DATABASE_URL: url.href, AIRLOCK_DATABASE_SCHEMA: database.schema, AIRLOCK_TOOL_SANDBOX: 'bubblewrap' };
    const created = await createServices(loadConfig(['--workspace', workspace.path], env, workspace.path), { log: () => {}, env });
    try {
      const terminal = toolNamed(created.services.catalog.tools(), 'terminal');
      const result = await runTool(terminal, { command: `cat ${keyFile}; ls ${keys.path}` });
      expect(result.content).not.toContain('airlock-client-key');
      expect(result.content).toContain('client.crt');
    } finally {
      await created.close();
    }
  });

  it('a password file made after start-up is hidden from the calls that follow, as one there before', async () => {
    await using database = await openTestDatabase();
    await using workspace = await tempFolder('/var/tmp');
    await using keys = await tempFolder('/var/tmp');
    const passwordFile = path.join(keys.path, 'pgpass');
    const env = { ...process.env, PGPASSFILE: passwordFile, AIRLOCK_DATABASE_URL: TEST_DATABASE_URL, AIRLOCK_DATABASE_SCHEMA: database.schema, AIRLOCK_TOOL_SANDBOX: 'bubblewrap' };
    const created = await createServices(loadConfig(['--workspace', workspace.path], env, workspace.path), { log: () => {}, env });
    try {
      // Not there at start-up: the person adds it while the server runs (the client key cannot be: the database
      // client reads it as the server starts).
      await writeFile(passwordFile, '*:*:*:airlock:airlock-database-password\n', { mode: 0o600 });
      await writeFile(path.join(keys.path, 'notes.txt'), 'not secret\n');
      const terminal = toolNamed(created.services.catalog.tools(), 'terminal');
      const result = await runTool(terminal, { command: `cat ${passwordFile}; ls ${keys.path}` });
      expect(result.content).not.toContain('airlock-database-password');
      expect(result.content).toContain('notes.txt');
    } finally {
      await created.close();
    }
  });
});
