import type { Migration } from '../migrations';
import { sql as initial } from './001-initial';

/** Every schema change of the PostgreSQL store, oldest first. Add a file `NNN-name.ts` and a line here; never edit an applied one. */
export const postgresMigrations: readonly Migration[] = [{ version: 1, name: 'initial', sql: initial }];

export { migratePostgres, type MigratePostgresOptions } from './migrate';
