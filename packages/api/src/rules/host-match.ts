const MAX_HOST_CHARS = 253;

/** Why `pattern` is not a host rule (`example.com`, `*.example.com`, `127.0.0.1`), or undefined when it is. */
export function checkHostPattern(pattern: string): string | undefined {
  if (pattern.length === 0 || pattern.length > MAX_HOST_CHARS + 2) return 'the host is empty or too long';
  const name = pattern.startsWith('*.') ? pattern.slice(2) : pattern;
  if (name.includes('*')) return 'a host may only start with "*." (any subdomain)';
  const normal = normaliseHost(name);
  if (normal === undefined) return `"${name}" is not a host name`;
  if (normal !== name) return `the host is not in its plain form: write "${pattern.startsWith('*.') ? '*.' : ''}${normal}"`;
  return undefined;
}

/** Lower case, international names in their ASCII form, IPv4 numbers in dotted form, no trailing dot; undefined if not a host. */
export function normaliseHost(host: string): string | undefined {
  if (host.length === 0 || /[/?#@:\s\\]/.test(host.replace(/^\[[0-9a-fA-F:.]+\]$/, ''))) return undefined;
  try {
    const hostname = new URL(`http://${host}/`).hostname;
    return hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  } catch {
    return undefined;
  }
}

/** The normalised host an http(s) address would be fetched from, or undefined for anything else. */
export function hostOfUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  const hostname = parsed.hostname.endsWith('.') ? parsed.hostname.slice(0, -1) : parsed.hostname;
  return hostname === '' ? undefined : hostname;
}

/** `example.com` matches only itself; `*.example.com` matches `a.example.com` and `a.b.example.com`, not `example.com`. */
export function matchHost(pattern: string, host: string): boolean {
  if (!pattern.startsWith('*.')) return pattern === host;
  const parent = pattern.slice(1);
  return host.length > parent.length && host.endsWith(parent);
}
