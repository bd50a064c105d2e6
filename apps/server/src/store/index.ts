export { SqliteStore, DATABASE_FILE, type SqliteStoreOptions } from './sqlite-store';
export { PostgresStore, type PostgresStoreOptions } from './postgres-store';
export { StoreError, type StoreProblem } from './store-error';
export { StorageFailure, asStorageFailure, withStorageFailures } from './storage-failure';
export type { JsonImportReport } from './import-json-sessions';
