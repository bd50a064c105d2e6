/**
 * Headers sent with every HTTP answer. `host` is the request's Host header, already checked by the
 * RequestGuard: CSP needs it spelled out because not every browser lets 'self' cover ws: URLs.
 */
export function securityHeaders(host: string | undefined): Record<string, string> {
  const socketSources = host === undefined ? '' : ` ws://${host} wss://${host}`;
  return {
    'Content-Security-Policy': [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data: blob:",
      "font-src 'self' data:",
      `connect-src 'self'${socketSources}`,
      "object-src 'none'",
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ].join('; '),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    // No look-up of the hosts of links a page holds: a model's reply could name chat contents as one (`<secret>.host`).
    'X-DNS-Prefetch-Control': 'off',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  };
}
