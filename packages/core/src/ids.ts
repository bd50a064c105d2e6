/** A random id with `bytes * 8` bits of entropy from the platform CSPRNG (Web Crypto, in Node and browsers). */
export function randomId(prefix: string, bytes = 16): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  let hex = '';
  for (const byte of raw) hex += byte.toString(16).padStart(2, '0');
  return `${prefix}_${hex}`;
}
