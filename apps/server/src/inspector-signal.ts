/**
 * Node opens its inspector on SIGUSR1, to any process of the same user that sends it: a tool running outside the
 * sandbox's PID namespace (`--tool-sandbox none`) could open it, attach, and read the token from the heap or run
 * code in the server. Unless the operator asked for an inspector port (`--inspect-port` in NODE_OPTIONS or on the
 * command line: a debugging session), the signal is taken here and ignored, which keeps Node from acting on it.
 * Returns whether the signal is refused.
 */
export function refuseInspectorSignal(nodeOptions = process.env.NODE_OPTIONS ?? '', execArgv: readonly string[] = process.execArgv): boolean {
  if (asksForInspectorPort([...nodeOptions.split(/\s+/), ...execArgv])) return false;
  let told = false;
  process.on('SIGUSR1', () => {
    if (told) return;
    told = true;
    console.warn('Received SIGUSR1: ignored, the inspector stays closed (NODE_OPTIONS=--inspect-port=… to debug).');
  });
  return true;
}

function asksForInspectorPort(options: readonly string[]): boolean {
  return options.some((option) => option === '--inspect-port' || option.startsWith('--inspect-port=') || option === '--debug-port' || option.startsWith('--debug-port='));
}
