/**
 * Asks the server's /healthz every 50 ms, one request at a time, until stopped: how long a request that needs no work
 * waits while the server is busy. `stop()` answers each probe's latency in ms, in the order made.
 */
export function probeHealthz(serverUrl: string): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let probing = true;
  const probing$ = (async () => {
    while (probing) {
      const started = performance.now();
      await fetch(`${serverUrl}/healthz`).then((response) => response.text());
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      probing = false;
      await probing$;
      return latencies;
    },
  };
}
