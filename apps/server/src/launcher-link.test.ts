import { describe, expect, it } from 'vitest';
import { environmentSecretWarnings } from './launcher-link';

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
