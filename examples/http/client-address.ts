import type { Context } from 'hono';

/**
 * The address of the peer that sent a request, used as the rate-limit key for callers that have
 * not (or not yet) proven who they are: wrong keys, hosted-page tokens, direct posts.
 *
 * It is the socket's remote address when the app runs under @hono/node-server (which puts the
 * Node request at `c.env.incoming`), and `unknown` otherwise (for example `app.request()` in
 * tests, or a runtime that does not expose the socket), so every such caller shares one bucket
 * rather than none. `X-Forwarded-For` is never trusted: anyone can send it. A deployment behind a
 * proxy passes its own `clientAddress` option instead.
 */
export function socketAddress(c: Context): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? 'unknown';
}

/** How the app finds a request's client address; see {@link socketAddress}. */
export type ClientAddressOf = (c: Context) => string;
