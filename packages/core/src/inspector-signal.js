// Plain JavaScript, not TypeScript: the launcher and the terminal client take the signal in their first lines, before
// anything can load TypeScript (see inspector-signal.d.ts for the types).

/**
 * Node opens its inspector on SIGUSR1, to any process of the same user that sends it: a tool running outside the
 * sandbox's PID namespace (`--tool-sandbox none`) could open it in an Airlock process holding a secret (the server,
 * its launcher, the terminal client), attach, and read the token from the heap or run code there. Unless the operator
 * asked for an inspector port (`--inspect-port` in NODE_OPTIONS or on the command line: a debugging session, the
 * benchmarks), the signal is taken here and ignored, which keeps Node from acting on it; `notice` is written to
 * stderr the first time it comes. Returns whether the signal is refused.
 *
 * @param {{ notice: string, nodeOptions?: string, execArgv?: readonly string[] }} options
 * @returns {boolean}
 */
export function refuseInspectorSignal({ notice, nodeOptions = process.env.NODE_OPTIONS ?? '', execArgv = process.execArgv }) {
  if ([...nodeOptions.split(/\s+/), ...execArgv].some(asksForInspectorPort)) return false;
  let told = false;
  process.on('SIGUSR1', () => {
    if (told) return;
    told = true;
    console.error(notice);
  });
  return true;
}

/** @param {string} option */
function asksForInspectorPort(option) {
  return option === '--inspect-port' || option.startsWith('--inspect-port=') || option === '--debug-port' || option.startsWith('--debug-port=');
}
