// An instance of a cluster that a test stops (SIGSTOP): it opens the store and writes each message it hears to stdout.
import { PostgresStore } from './postgres-store';

const [url, schema] = process.argv.slice(2) as [string, string];
const store = await PostgresStore.open({ url, schema, instanceId: 'stopped', leaseMs: 1_000, log: (line) => process.stdout.write(`log ${line}\n`) });
store.subscribe((message) => process.stdout.write(`heard ${JSON.stringify(message)}\n`));
process.stdout.write('ready\n');
process.on('SIGTERM', () => {
  void store.close().then(() => process.exit(0));
});
