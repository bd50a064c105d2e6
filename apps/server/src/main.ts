import { refuseInspectorSignal } from '@airlock/core/inspector-signal';
import { ConfigError, databaseReachWarning, loadConfig, unreadVariables, USAGE } from './config';
import { consoleLine } from './console-line';
import { createServices } from './create-services';
import { closeInheritedDescriptors } from './inherited-descriptors';
import { environmentSecretWarnings, openLauncherLink } from './launcher-link';
import { outputFiles } from './output-files';
import { refuseTakenPort, startServer } from './start-server';
import { StorageFailure } from './store/storage-failure';
import { StoreError } from './store/store-error';

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  refuseInspectorSignal({ notice: 'Received SIGUSR1: ignored, the inspector stays closed (NODE_OPTIONS=--inspect-port=… to debug).' });
  const link = await openLauncherLink(process.env);
  // Secrets the launcher handed over never enter this process's environment, so no child can read them from it.
  const env = { ...process.env, ...link?.secrets };
  for (const warning of environmentSecretWarnings(env)) console.warn(warning);
  for (const name of unreadVariables(env)) console.warn(consoleLine(`Warning: ${name} is not a setting of the server and is ignored: check its name (airlock --help lists them)`));
  const config = loadConfig(argv, env);
  // Before any tool or MCP server starts: what the launching shell left open must not reach them.
  closeInheritedDescriptors(link === undefined ? [] : [link.fd]);
  // Tools with the network reach the database as the server does: a password it does not check keeps none of them out.
  let passwordIgnored = false;
  if (config.database !== undefined && config.toolNetwork) {
    // Imported here, not above: a start without a database does not load pg.
    const { databaseIgnoresPassword } = await import('./store/database-password-probe');
    passwordIgnored = await databaseIgnoresPassword(config.database.url);
  }
  const databaseWarning = databaseReachWarning(config, { passwordIgnored });
  if (databaseWarning !== null) console.warn(databaseWarning);
  // Before the services, which start the MCP servers: a port in use stops the start before any of them runs.
  await refuseTakenPort(config);
  const created = await createServices(config, { env: process.env, outputFiles });
  let server;
  try {
    server = await startServer({ config, services: created.services, dispose: () => created.close() });
  } catch (error) {
    await created.close();
    throw error;
  }
  const running = server;

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        // A second Ctrl-C means "now": do not wait for tools or MCP servers any longer.
        console.error(`Received ${signal} again; exiting without waiting.`);
        process.exit(1);
      }
      stopping = true;
      console.log('Shutting down…');
      running.close().then(resolve, (error: unknown) => {
        console.error(consoleLine(`Shutdown failed: ${error instanceof Error ? error.message : String(error)}`));
        process.exit(1);
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    // The launcher is gone (even killed with SIGKILL): stop as on SIGTERM rather than run on, orphaned on the port.
    link?.onClose(() => {
      if (stopping) return;
      console.log('The launcher exited.');
      stop('SIGTERM');
    });
  });
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof ConfigError || error instanceof StorageFailure || error instanceof StoreError) {
      // A configuration problem, a full or failing disk, or a damaged database is the user's to fix: the message says what, a stack trace
      // would only hide it.
      console.error(consoleLine(`airlock: ${error.message}`));
    } else {
      console.error('airlock: failed to start');
      // Line by line: the stack stays readable, and what it quotes from outside (a server's message) is shown as codes.
      console.error((error instanceof Error ? (error.stack ?? error.message) : String(error)).split('\n').map(consoleLine).join('\n'));
    }
    process.exit(1);
  },
);
