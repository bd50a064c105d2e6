import { describe, expect, it } from 'vitest';
import { commandLineSecretWarnings, environmentSecretWarnings } from './launcher-link';

const names = (env: Record<string, string>) => environmentSecretWarnings(env).map((line) => /^Warning: (\S+) came from the environment/.exec(line)?.[1]);

describe('the warnings for secrets given in the environment', () => {
  it('name the token and the API key, each with its file variable', () => {
    const warnings = environmentSecretWarnings({ AIRLOCK_TOKEN: 't'.repeat(32), AIRLOCK_API_KEY: 'k', AIRLOCK_WORKSPACE: '/w' });

    expect(warnings.map((line) => /set (\S+) instead\.$/.exec(line)?.[1])).toStrictEqual(['AIRLOCK_TOKEN_FILE', 'AIRLOCK_API_KEY_FILE']);
  });

  it('name a database URL that holds a password, in its user part or its query, and point to ~/.pgpass', () => {
    expect(names({ AIRLOCK_DATABASE_URL: 'postgres://airlock:s3cret@db:5432/airlock' })).toStrictEqual(['AIRLOCK_DATABASE_URL']);
    expect(names({ AIRLOCK_DATABASE_URL: 'postgres://airlock@db/airlock?password=s3cret' })).toStrictEqual(['AIRLOCK_DATABASE_URL']);
    expect(environmentSecretWarnings({ AIRLOCK_DATABASE_URL: 'postgres://airlock:s3cret@db/airlock' })[0]).toContain('put it in ~/.pgpass (or the file PGPASSFILE names)');
  });

  it('say nothing of a database URL without a password, nor of empty variables', () => {
    expect(environmentSecretWarnings({ AIRLOCK_DATABASE_URL: 'postgres://airlock@db:5432/airlock', AIRLOCK_TOKEN: '', AIRLOCK_API_KEY: '' })).toStrictEqual([]);
  });
});

describe('the warnings for secrets given on the command line', () => {
  const database = (url: string) => ({ url, schema: undefined, instanceId: 'i', leaseMs: 10_000, poolSize: 20 });

  it('name --database-url holding a password, in its user part or its query, and point to ~/.pgpass and AIRLOCK_DATABASE_URL, never quoting it', () => {
    for (const url of ['postgres://airlock:s3cret@db:5432/airlock', 'postgres://airlock@db/airlock?password=s3cret']) {
      const warnings = commandLineSecretWarnings({ database: database(url), sources: { 'database-url': '--database-url' } });
      expect(warnings).toStrictEqual([
        'Warning: the URL given with --database-url holds a password, and every user of this machine can read command lines ' +
          '(ps, /proc/<pid>/cmdline): the launcher’s and the server’s show it for as long as they run. Leave the password out of the URL ' +
          'and put it in ~/.pgpass (or the file PGPASSFILE names), readable only by you, which PostgreSQL clients read and the server ' +
          'hides from sandboxed tools; or give the URL in AIRLOCK_DATABASE_URL, which other users cannot read.',
      ]);
      expect(warnings.join('')).not.toContain('s3cret');
    }
  });

  it('say nothing of a URL without a password, of one from the environment (warned of apart), nor with no database', () => {
    expect(commandLineSecretWarnings({ database: database('postgres://airlock@db/airlock'), sources: { 'database-url': '--database-url' } })).toStrictEqual([]);
    expect(commandLineSecretWarnings({ database: database('postgres://airlock:s3cret@db/airlock'), sources: { 'database-url': 'AIRLOCK_DATABASE_URL' } })).toStrictEqual([]);
    expect(commandLineSecretWarnings({ sources: {} })).toStrictEqual([]);
  });
});
