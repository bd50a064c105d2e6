/** A run id of 128 random bits; getRandomValues works in Node, in browsers and on plain-http origins alike. */
export function randomRunId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `run_${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}
