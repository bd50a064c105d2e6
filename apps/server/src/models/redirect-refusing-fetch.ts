/** A model server answered a request with a redirect, which is not followed. */
export class ModelServerRedirectError extends Error {
  override readonly name = 'ModelServerRedirectError';
  constructor(
    /** Where the redirect leads, resolved against the request's URL; as written when it is no URL. */
    readonly location: string,
    readonly status: number,
  ) {
    super(`the model server redirected the request (HTTP ${status})`);
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * A fetch that never follows a redirect. A chat request carries the whole conversation and the API key: a 307 from
 * the configured server sent both to another host, and nothing showed it. The model list refuses redirects too.
 */
export function redirectRefusingFetch(baseFetch: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const response = await baseFetch(input, { ...init, redirect: 'manual' });
    const location = response.headers.get('location');
    if (!REDIRECTS.has(response.status) || location === null) return response;
    await response.body?.cancel();
    throw new ModelServerRedirectError(resolved(location, input instanceof Request ? input.url : String(input)), response.status);
  };
}

function resolved(location: string, base: string): string {
  try {
    return new URL(location, base).href;
  } catch {
    return location;
  }
}
