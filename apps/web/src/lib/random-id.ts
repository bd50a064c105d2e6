/** A random id the server accepts (letters, digits, `_`); getRandomValues works outside secure contexts too. */
export function randomId(prefix: string, bytes = 12): string {
  const values = crypto.getRandomValues(new Uint8Array(bytes));
  return `${prefix}_${Array.from(values, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}
