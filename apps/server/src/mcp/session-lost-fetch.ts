import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * A fetch for the SDK's Streamable HTTP transport that calls `onLost` when the server answers a request made in a
 * session with 404: it no longer knows the session (it restarted, or ended it), and the MCP specification has the
 * client start a new one. The SDK kept the session's id and sent it again, so each request after failed the same way
 * while the server was shown ready, until Airlock itself was restarted.
 */
export function sessionLostFetch(baseFetch: FetchLike, onLost: () => void): FetchLike {
  return async (url, init) => {
    const response = await baseFetch(url, init);
    if (response.status === 404 && new Headers(init?.headers).has('mcp-session-id')) onLost();
    return response;
  };
}
