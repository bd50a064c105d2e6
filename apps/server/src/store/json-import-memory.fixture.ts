// Opens the store on a data folder holding former JSON session files, in a process started with a small heap (see
// json-import-memory.test.ts). Prints one line of JSON: what the import did.
import { SqliteStore } from './sqlite-store';

const store = await SqliteStore.open({ directory: process.argv[2]!, log: () => {} });
const { imported, skipped } = store.jsonImport;
process.stdout.write(JSON.stringify({ imported: imported.length, skipped: skipped.map((entry) => entry.reason) }));
await store.close();
