/**
 * `billing-engine/http`: the Chargify-compatible HTTP binding of the engine, to mount in your own
 * server. {@link createHttpApp} is the whole API (the JSON routes, the hosted card-update and
 * billing-portal pages, and the direct-post routes) as a Hono app; {@link createHttpHandler} is the
 * same app as a standard fetch handler, `(request: Request) => Promise<Response>`, for any server
 * that speaks the Fetch API: Node's `http` through `getRequestListener` of `@hono/node-server`,
 * Express and Fastify through that same listener, Bun, Deno and workers directly.
 *
 * The site of a request is the first label of its Host header (`acme.localhost` is the site
 * `acme`); the API key is the HTTP Basic user.
 */
import { createHttpApp, type HttpAppOptions } from './create-http-app.js';

export type { AddressRateLimitOptions } from './address-limits.js';
export { DEFAULT_FAILURE_LIMIT, DEFAULT_HOSTED_PAGE_LIMIT } from './address-limits.js';
export { type ClientAddressOf, socketAddress } from './client-address.js';
export {
  createHttpApp,
  DEFAULT_BODY_LIMIT_BYTES,
  DEFAULT_RATE_LIMIT,
  HOST_HINT,
  type HttpAppOptions,
  type HttpRateLimitOptions,
} from './create-http-app.js';
export type { HttpAppEnv } from './http-context.js';
export {
  DEFAULT_DIRECT_ADDRESS_RATE_LIMIT,
  DEFAULT_DIRECT_API_ID_RATE_LIMIT,
  DEFAULT_DIRECT_BODY_LIMIT_BYTES,
  type DirectPostApi,
  type DirectRoutesOptions,
  directPostFor,
  registerDirectRoutes,
} from './routes/direct-routes.js';
export { HOSTED_FORM_LIMIT_BYTES, type HostedRoutesOptions, registerHostedRoutes } from './routes/hosted-routes.js';
export type { PortalLinkRoutesOptions } from './routes/portal-link-routes.js';
export type { TokenBucketOptions } from './token-bucket.js';

/**
 * A standard fetch handler. The optional second argument is what `@hono/node-server` passes
 * (`{ incoming, outgoing }`): with it, the per-address limits see the client's socket address;
 * without it, every unauthenticated caller shares one address bucket.
 */
export type HttpHandler = (request: Request, env?: unknown) => Promise<Response>;

/**
 * The HTTP binding as a fetch handler: `createHttpApp(options).fetch`, always returning a promise.
 *
 * Plain Node: `http.createServer(getRequestListener(createHttpHandler({ engine })))` with
 * `getRequestListener` from `@hono/node-server`. Express: `app.use(getRequestListener(handler))`
 * (mount it before any body parser: the binding reads the raw body itself).
 */
export function createHttpHandler(options: HttpAppOptions): HttpHandler {
  const app = createHttpApp(options);
  return async (request, env) => app.fetch(request, env);
}
