import { refuseInspectorSignal } from '@airlock/core/inspector-signal';
import { ConfigError, databaseReachWarning, loadConfig, unreadVariables, USAGE } from './config';
import { consoleLine } from './console-line';
import { createServices } from './create-services';
import { closeInheritedDescriptors } from './inherited-descriptors';
import { commandLineSecretWarnings, environmentSecretWarnings, openLauncherLink } from './launcher-link';
import { outputFiles } from './output-files';
import { refuseTakenPort, startServer } from './start-server';
import { StorageFailure } from './store/storage-failure';
import { StoreError } from './store/store-error';

/** Signals that stop the server: Ctrl-C, a service manager's stop, and a terminal closed (the launcher forwards each). */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  // Taken from the start: a signal sent while the server started (an MCP server starting, the database asked) killed it
  // at once, and SIGHUP (a closed terminal) did so at any time, with no shutdown. The step under way ends first.
  let stopping = false;
  let stopRequested = () => {};
  const stopped = new Promise<void>((resolve) => (stopRequested = resolve));
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second Ctrl-C means "now": do not wait for tools or MCP servers any longer.
      console.error(`Received ${signal} again; exiting without waiting.`);
      process.exit(1);
    }
    stopping = true;
    console.log('Shutting down…');
    stopRequested();
  };
  for (const signal of STOP_SIGNALS) process.on(signal, stop);
  // A closed terminal fails every later write to it (EIO): "Shutting down…" itself killed the server on SIGHUP. What
  // cannot be written is lost; the shutdown goes on.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  refuseInspectorSignal({ notice: 'Received SIGUSR1: ignored, the inspector stays closed (NODE_OPTIONS=--inspect-port=… to debug).' });
  const link = await openLauncherLink(process.env);
  // The launcher is gone (even killed with SIGKILL): stop as on SIGTERM rather than run on, orphaned on the port.
  link?.onClose(() => {
    if (stopping) return;
    console.log('The launcher exited.');
    stop('SIGTERM');
  });
  if (stopping) return 0;
  // Secrets the launcher handed over never enter this process's environment, so no child can read them from it.
  const env = { ...process.env, ...link?.secrets };
  for (const warning of environmentSecretWarnings(env)) console.warn(warning);
  for (const name of unreadVariables(env)) console.warn(consoleLine(`Warning: ${name} is not a setting of the server and is ignored: check its name (airlock --help lists them)`));
  const config = loadConfig(argv, env);
  for (const warning of commandLineSecretWarnings(config)) console.warn(warning);
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
  if (stopping) return 0;
  const created = await createServices(config, { env: process.env, outputFiles });
  if (stopping) {
    await created.close();
    return 0;
  }
  let server;
  try {
    server = await startServer({ config, services: created.services, dispose: () => created.close() });
  } catch (error) {
    await created.close();
    throw error;
  }

  await stopped;
  try {
    await server.close();
  } catch (error) {
    console.error(consoleLine(`Shutdown failed: ${error instanceof Error ? error.message : String(error)}`));
    return 1;
  }
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
