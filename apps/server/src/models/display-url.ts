/** The URL without user, password, query or fragment: safe to show in a message or a log. */
export function displayURL(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return '(an invalid URL)';
  }
}
