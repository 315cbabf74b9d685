/**
 * The operations side of the HTTP app: `/healthz`, `/readyz` and `/metrics` (served without a site,
 * like `GET /`), and the first middleware of every request, which gives it a request id, counts and
 * times it by route pattern and status, and writes one log line for it.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { BillingEngine } from 'billing-engine';
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { type HttpAppEnv, sendJson } from '../http-context.js';
import { siteFromHost } from '../site-from-host.js';
import { createOpsMetrics, engineBacklog, type OpsMetrics } from './metrics.js';
import type { OpsLogger } from './ops-logger.js';
import { checkReadiness } from './readiness.js';

/**
 * Who may read `/metrics`: anyone who reaches the port (`open`, the default: an application that
 * mounts the app decides who reaches it), a caller with `Authorization: Bearer <token>`, or no one
 * (`closed`: 403 with the reason, e.g. a server bound beyond loopback without a token).
 */
export type MetricsAccess =
  | { readonly kind: 'open' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'closed'; readonly reason: string };

/** Options of the operations routes and the request middleware (`HttpAppOptions.ops`). */
export interface HttpOpsOptions {
  /** The metrics `/metrics` serves; default a new registry for this app alone. */
  readonly metrics?: OpsMetrics;
  /** Where one line per request goes; default none (no request log). */
  readonly logger?: OpsLogger;
  /** Who may read `/metrics`; default `open`. */
  readonly metricsAccess?: MetricsAccess;
  /** True once the process is shutting down: `/readyz` then answers 503 so that traffic drains. */
  readonly draining?: () => boolean;
  /** How long `/readyz` waits for the storage; default 2000 ms. */
  readonly readinessTimeoutMs?: number;
}

/** The paths of the operations routes. */
export const OPS_PATHS = { health: '/healthz', ready: '/readyz', metrics: '/metrics' } as const;

/** The request id header, honoured when a caller sends a plausible one and always sent back. */
export const REQUEST_ID_HEADER = 'x-request-id';

// What a request id from a caller may look like (as Hono's request-id middleware accepts); any
// other value (too long, spaces, control characters) is replaced, so a log line never carries it.
const ACCEPTABLE_REQUEST_ID = /^[\w\-=.:]{1,128}$/;

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The label of a request that no route matched (unknown paths): one value, not the raw path. */
export const UNMATCHED_ROUTE = '(unmatched)';

const requestIds = new WeakMap<Request, string>();

/** The request id the middleware gave `request`, for error logs written outside it. */
export function requestIdOf(request: Request): string | undefined {
  return requestIds.get(request);
}

// The label of each route pattern, worked out once: patterns are the app's own (a fixed set).
const plainPatterns = new Map<string, string>();

/** A route pattern as a label: Hono's parameter constraints written plainly (`:id{[^/]+\.json}` is `:id.json`). */
function plainPattern(pattern: string): string {
  let plain = plainPatterns.get(pattern);
  if (plain === undefined) {
    plain = pattern.replaceAll(/:(\w+)\{\[\^\/\]\+\\\.json\}/g, ':$1.json').replaceAll(/:(\w+)\{[^}]*\}/g, ':$1');
    plainPatterns.set(pattern, plain);
  }
  return plain;
}

/**
 * The site a request's Host names, for a request no key authenticated (hosted pages, a 401): the
 * first label of a name with a domain after it; none for an address literal or a bare name.
 */
function hostSite(host: string | undefined): string | null {
  const name = (host ?? '').trim().replace(/:\d*$/, '');
  if (name.startsWith('[') || isIP(name) !== 0 || !name.includes('.')) return null;
  return siteFromHost(host) ?? null;
}

const isWildcard = (path: string) => path === '*' || path === '/*';

/**
 * The pattern of the route that answered: the handler the request reached, or, when an app-wide
 * middleware answered first (a 401, a 429), the route the request was going to.
 */
function routeOf(c: Context<HttpAppEnv>): string {
  const routes = matchedRoutes(c);
  const reached = routes[c.req.routeIndex];
  if (reached !== undefined && !isWildcard(reached.path)) return plainPattern(reached.path);
  const ahead = routes.slice(c.req.routeIndex).find((route) => !isWildcard(route.path));
  return ahead === undefined ? UNMATCHED_ROUTE : plainPattern(ahead.path);
}

/**
 * Sets a header on the response a later handler made. Hono's `c.header()` on a finished response
 * first copies it (`new Response(body, response)`), which turns a string body into a stream and
 * cost about a tenth of a small read's time; the responses of this app have mutable headers, so
 * the header is set in place. One whose headers are immutable (a `fetch` answer passed on) still
 * gets the copy.
 */
function setResponseHeader(c: Context<HttpAppEnv>, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}

/**
 * The first middleware: request id (the caller's when acceptable, else a new UUID; sent back in
 * `X-Request-Id`), then after the response the request counted and timed by method, route pattern
 * and status, and one log line: request id, method, route, site, status, duration. Never the raw
 * path or query (hosted-page tokens and portal signatures live there) and never a header.
 */
export function requestMiddleware(metrics: OpsMetrics, logger: OpsLogger | undefined): MiddlewareHandler<HttpAppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const given = c.req.header(REQUEST_ID_HEADER);
    const id = given !== undefined && ACCEPTABLE_REQUEST_ID.test(given) ? given : randomUUID();
    requestIds.set(c.req.raw, id);
    // At debug level, the start of a request too: a request that never ends shows up as one line.
    logger?.debug({ request_id: id, method: c.req.method }, 'request received');
    await next();
    setResponseHeader(c, REQUEST_ID_HEADER, id);
    const seconds = (performance.now() - started) / 1000;
    const method = KNOWN_METHODS.has(c.req.method) ? c.req.method : 'OTHER';
    const route = routeOf(c);
    const status = c.res.status;
    const labels = { method, route, status: String(status) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, seconds);
    if (logger === undefined) return;
    const site = c.get('site')?.subdomain ?? hostSite(c.req.header('host'));
    const line = {
      request_id: id,
      method,
      route,
      site,
      status,
      duration_ms: Math.round(seconds * 100_000) / 100,
    };
    if (status >= 500) logger.error(line, 'request');
    else logger.info(line, 'request');
  };
}

function sameToken(given: string, expected: string): boolean {
  // Digests of equal length, so the comparison takes the same time whatever was sent.
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Registers `/healthz`, `/readyz` and `/metrics` on `app` (before the site and key middleware). */
export function registerOpsRoutes(
  app: Hono<HttpAppEnv>,
  engine: Pick<BillingEngine, 'countDue'>,
  options: HttpOpsOptions & { readonly metrics: OpsMetrics },
): void {
  const access = options.metricsAccess ?? { kind: 'open' };
  // Liveness: the process answers. Nothing else is checked, so a slow database never gets a
  // healthy process restarted; readiness says whether it can serve.
  app.get(OPS_PATHS.health, () => sendJson(200, { status: 'ok' }));
  app.get(OPS_PATHS.ready, async (c) => {
    const readiness = await checkReadiness(engine, {
      ...(options.readinessTimeoutMs === undefined ? {} : { timeoutMs: options.readinessTimeoutMs }),
      ...(options.draining === undefined ? {} : { draining: options.draining }),
    });
    if (readiness.ready) return sendJson(200, { status: 'ready' });
    if (readiness.cause !== undefined) {
      options.logger?.warn(
        { request_id: requestIdOf(c.req.raw), err: readiness.cause },
        `not ready: ${readiness.reason}`,
      );
    }
    return sendJson(503, { status: 'unavailable', reason: readiness.reason });
  });
  app.get(OPS_PATHS.metrics, async (c) => {
    if (access.kind === 'closed') return sendJson(403, { errors: [access.reason] });
    if (access.kind === 'token') {
      const given = /^Bearer (.+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
      if (given === undefined || !sameToken(given, access.token)) {
        return sendJson(
          401,
          { errors: ['Metrics need Authorization: Bearer <BILLING_METRICS_TOKEN>.'] },
          {
            'www-authenticate': 'Bearer realm="metrics"',
          },
        );
      }
    }
    const { contentType, body } = await options.metrics.exposition();
    return new Response(body, { status: 200, headers: { 'content-type': contentType } });
  });
}

/** The metrics an app uses: the given ones, or a registry of its own. */
export function metricsFor(options: HttpOpsOptions | undefined): OpsMetrics {
  return options?.metrics ?? createOpsMetrics();
}

/**
 * An app of the operations routes alone, for a process that serves no API (the worker with a
 * metrics port): `/healthz`, `/readyz`, `/metrics`, each request counted and logged.
 */
export function createOpsApp(
  engine: Pick<BillingEngine, 'countDue' | 'storage' | 'clock'>,
  options: HttpOpsOptions = {},
): Hono<HttpAppEnv> {
  const metrics = metricsFor(options);
  metrics.readBacklogFrom(engineBacklog(engine));
  const app = new Hono<HttpAppEnv>();
  app.use('*', requestMiddleware(metrics, options.logger));
  registerOpsRoutes(app, engine, { ...options, metrics });
  app.notFound((c) => sendJson(404, { errors: [`No route matches ${c.req.method} ${new URL(c.req.url).pathname}.`] }));
  return app;
}
