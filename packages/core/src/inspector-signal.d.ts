export interface RefuseInspectorSignalOptions {
  /** The line written to stderr the first time the signal comes. */
  notice: string;
  /** Node's options from the environment, read for an inspector port. Default `process.env.NODE_OPTIONS`. */
  nodeOptions?: string;
  /** Node's options from the command line, read for an inspector port. Default `process.execArgv`. */
  execArgv?: readonly string[];
}

/** Takes SIGUSR1 and ignores it unless an inspector port was asked for; whether it is refused. See inspector-signal.js. */
export function refuseInspectorSignal(options: RefuseInspectorSignalOptions): boolean;
