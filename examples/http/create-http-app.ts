import { hash } from 'node:crypto';
import { type BillingEngine, BillingError, type SiteRecord } from 'billing-engine';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { type AddressRateLimitOptions, createAddressLimits } from './address-limits.js';
import { apiKeyFromAuthorization, createVerifiedKeyCache } from './basic-credentials.js';
import { type HttpAppEnv, HttpProblem, sendError, sendJson, sendProblem } from './http-context.js';
import { registerOpenApiRoutes } from './openapi/openapi-routes.js';
import { type HttpOpsOptions, metricsFor, registerOpsRoutes, requestIdOf, requestMiddleware } from './ops/http-ops.js';
import { engineBacklog } from './ops/metrics.js';
import { refuseUnstorableUrlText, requireJsonWrites } from './request-guards.js';
import { directPostFor, registerDirectRoutes } from './routes/direct-routes.js';
import { type HostedRoutesOptions, registerHostedRoutes } from './routes/hosted-routes.js';
import { registerApiRoutes } from './routes/index.js';
import type { PortalLinkRoutesOptions } from './routes/portal-link-routes.js';
import { siteFromHost } from './site-from-host.js';
import { createTokenBucket, type TokenBucketOptions } from './token-bucket.js';
import { errorListBody, INTERNAL_ERROR_MESSAGE, serializeError, type WireCompat } from './wire-bridge.js';

/** Per-API-key rate limiting: a token bucket of `capacity` refilled at `refillPerSecond`. */
export type HttpRateLimitOptions = TokenBucketOptions;

/** Options of {@link createHttpApp}. */
export interface HttpAppOptions {
  /** The engine every request is served by. */
  readonly engine: BillingEngine;
  /** Output spellings: `spec` (default; state `cancelled`) or `chargify` (state `canceled`) for existing clients. */
  readonly compat?: WireCompat;
  /**
   * How long an API key the engine verified is trusted without asking it again, in ms (default
   * {@link DEFAULT_API_KEY_CACHE_TTL_MS}; 0 checks every request against storage). A revoked key,
   * a deleted site and a changed zone or currency take effect at most this long after the key was
   * last verified; presented keys are still hashed and compared in constant time, and wrong keys
   * are never cached (see basic-credentials.ts).
   */
  readonly apiKeyCacheTtlMs?: number;
  /** Largest accepted request body; larger ones get 413. Default 1 MiB. */
  readonly bodyLimitBytes?: number;
  /**
   * Per-key limits, or `false` to turn every limit off (the address limits too, unless
   * `addressRateLimit` is given). Default 200 requests burst, 50 per second.
   */
  readonly rateLimit?: HttpRateLimitOptions | false;
  /**
   * Per-client-address limits for callers that have not proven who they are: failed
   * authentications (wrong keys, hosted-page token guesses) and hosted-page requests, with the
   * client address taken from the socket unless `clientAddress` says otherwise (see
   * address-limits.ts), or `false` to turn them off. Default on with the generous
   * `DEFAULT_FAILURE_LIMIT` and `DEFAULT_HOSTED_PAGE_LIMIT`, off when `rateLimit` is false.
   */
  readonly addressRateLimit?: AddressRateLimitOptions | false;
  /**
   * Billing-portal links: lifetime, the public origin they are made for (`baseDomain` or `baseUrl`;
   * never the request's Host, and without either the route is a 501), and the clock they are signed against.
   */
  readonly portalLinks?: PortalLinkRoutesOptions;
  /** Options of the hosted pages (card update page, billing portal). */
  readonly hosted?: Omit<HostedRoutesOptions, 'logError' | 'addressLimits'>;
  /**
   * Where unexpected (non-BillingError) failures are reported; default the `ops.logger` (with the
   * request id), or `console.error` without one.
   */
  readonly logError?: (error: unknown, request: Request) => void;
  /**
   * Operations: the metrics `/metrics` serves (default a registry of this app's own), the logger
   * of one line per request (default none), who may read `/metrics`, and whether the process is
   * draining (see ops/http-ops.ts). `/healthz`, `/readyz` and `/metrics` are always served.
   */
  readonly ops?: HttpOpsOptions;
}

/** The default lifetime of a verified API key in the app's cache: one second. */
export const DEFAULT_API_KEY_CACHE_TTL_MS = 1000;

/** The default request body limit: 1 MiB. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/** The default rate limit: generous enough that only a runaway client meets it. */
export const DEFAULT_RATE_LIMIT: HttpRateLimitOptions = { capacity: 200, refillPerSecond: 50 };

// The service's throttling message, without the support reference it appends.
const RATE_LIMITED_MESSAGE =
  'Your request was denied due to a usage violation. Retry after the time in the Retry-After header.';

/** The 429 of the main API, with the seconds to wait in Retry-After. */
function rateLimited(retryAfterSeconds: number): HttpProblem {
  return new HttpProblem(429, [RATE_LIMITED_MESSAGE], { 'retry-after': String(retryAfterSeconds) });
}

/** The hint sent with a 401 whose Host names no site. */
export const HOST_HINT = 'the site comes from the first label of the Host header, e.g. Host: acme.localhost';

/**
 * Whether a Host header has a label before a domain to name a site by: `acme.localhost` does;
 * none at all, `localhost` and address literals (`127.0.0.1`, `[::1]`) do not.
 */
function hasSiteLabel(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.trim().toLowerCase().replace(/:\d*$/, '');
  if (name.startsWith('[') || /^[\d.]+$/.test(name)) return false;
  return siteFromHost(host) !== undefined && name.includes('.');
}

/** The body of `GET /`: how to call the API, with a curl line for the port the request came to. */
function usage(host: string | undefined) {
  const port = /:(\d{1,5})$/.exec(host?.trim() ?? '')?.[1];
  const origin = `http://127.0.0.1${port === undefined ? '' : `:${port}`}`;
  return {
    service: 'billing-engine',
    how_to_call: [
      'The site is the first label of the Host header: Host: acme.localhost is the site acme.',
      'The API key is the HTTP Basic user; the password is anything (e.g. x).',
      'Paths end in .json, e.g. /product_families.json, /subscriptions.json.',
    ],
    example: `curl -u "$API_KEY:x" -H 'Host: acme.localhost' ${origin}/product_families.json`,
  };
}

/**
 * The main JSON API of the spec as a Hono app over a billing engine: routing only, with the wire
 * layer reading bodies and writing responses. The site is the first label of `Host`; HTTP Basic
 * carries the API key as the user with any password. Every response has a Content-Type, every
 * success has a JSON body, and bad input never becomes a 500. At the edge, before any route: the
 * address and key rate limits, the body size, text no storage keeps in the path or query (422),
 * and a write's body typed as JSON (415); the body reader then checks the body's text and nesting.
 */
export function createHttpApp(options: HttpAppOptions): Hono<HttpAppEnv> {
  const { engine } = options;
  const compat = options.compat ?? 'spec';
  const maxSize = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  if (!Number.isSafeInteger(maxSize) || maxSize < 0)
    throw new RangeError('bodyLimitBytes must be a non-negative integer');
  const limits = options.rateLimit === false ? undefined : createTokenBucket(options.rateLimit ?? DEFAULT_RATE_LIMIT);
  const addressOptions = options.addressRateLimit ?? (options.rateLimit === false ? false : {});
  const addressLimits = addressOptions === false ? undefined : createAddressLimits(addressOptions);
  const keyCacheTtlMs = options.apiKeyCacheTtlMs ?? DEFAULT_API_KEY_CACHE_TTL_MS;
  if (!Number.isFinite(keyCacheTtlMs) || keyCacheTtlMs < 0)
    throw new RangeError('apiKeyCacheTtlMs must be a non-negative number');
  const verifiedKeys = keyCacheTtlMs > 0 ? createVerifiedKeyCache<SiteRecord>({ ttlMs: keyCacheTtlMs }) : undefined;
  const metrics = metricsFor(options.ops);
  metrics.readBacklogFrom(engineBacklog(engine));
  const logger = options.ops?.logger;
  const logError =
    options.logError ??
    (logger === undefined
      ? (error: unknown, request: Request) => console.error(`${request.method} ${request.url}`, error)
      : (error: unknown, request: Request) =>
          logger.error({ err: error, request_id: requestIdOf(request), method: request.method }, 'unexpected failure'));

  const app = new Hono<HttpAppEnv>();
  // First of all: the request id, the request counted and timed, and its log line.
  app.use('*', requestMiddleware(metrics, logger));

  // Before the key middleware: direct posts authenticate by signature or direct credentials, not an API key.
  // Direct posts keep their own limits (per address and per api_id); `rateLimit: false` turns
  // them off with the rest, and they find the client address the same way as the address limits.
  const clientAddress = options.addressRateLimit ? options.addressRateLimit.clientAddress : undefined;
  registerDirectRoutes(app, directPostFor(engine), {
    bodyLimitBytes: maxSize,
    logError,
    ...(options.rateLimit === false ? { rateLimit: false as const } : {}),
    ...(clientAddress === undefined ? {} : { clientAddress }),
  });
  registerHostedRoutes(app, engine, {
    ...options.hosted,
    logError,
    ...(addressLimits === undefined ? {} : { addressLimits }),
  });

  // The one unauthenticated page of the main API: how to call it.
  app.get('/', (c) => sendJson(200, usage(c.req.header('host'))));
  // Health, readiness and metrics: no site, no key (metrics may need a token of their own).
  registerOpsRoutes(app, engine, { ...options.ops, metrics });
  registerOpenApiRoutes(app);

  app.use('*', async (c, next) => {
    // An address that has spent its failed authentications is refused before its key is looked at.
    const wait = addressLimits?.blocked(c);
    if (wait !== undefined) throw rateLimited(wait);
    const subdomain = siteFromHost(c.req.header('host'));
    const apiKey = apiKeyFromAuthorization(c.req.header('authorization'));
    let record: SiteRecord;
    try {
      // A missing or wrong key, a key of another site and an unknown site all fail here alike, as
      // the engine's `unauthorized` (401), before any route runs.
      if (subdomain === undefined || apiKey === undefined)
        throw new BillingError('unauthorized', 'HTTP Basic: Access denied.', { shape: 'plain' });
      // The key check and the site read happen once per request (or once per TTL with the cache);
      // the record then serves the serializers (`wireContext`) without reading the site again.
      const cached = verifiedKeys?.get(subdomain, apiKey);
      if (cached !== undefined) {
        record = cached;
      } else {
        record = await engine.sites.authenticate(subdomain, apiKey);
        verifiedKeys?.set(subdomain, apiKey, record);
      }
    } catch (error) {
      const denied = error instanceof BillingError && error.code === 'unauthorized';
      if (addressLimits !== undefined && denied) {
        const failedWait = addressLimits.failed(c);
        if (failedWait !== undefined) throw rateLimited(failedWait);
      }
      // The body stays the service's exact text (clients compare it); a Host without a site label
      // gets a header saying where the site comes from, since a right key on it is still a 401.
      if (denied && !hasSiteLabel(c.req.header('host'))) {
        return sendError(serializeError(error), { 'x-billing-hint': HOST_HINT });
      }
      throw error;
    }
    const site = engine.site(record.subdomain);
    c.set('site', site);
    c.set('siteRecord', record);
    c.set('compat', compat);
    if (limits !== undefined) {
      // Hashed so that the limiter's map never holds a usable key; only worked out when limiting.
      c.set('caller', hash('sha256', `${site.subdomain}\u0000${apiKey}`, 'hex'));
    }
    return next();
  });

  if (limits !== undefined) {
    app.use('*', async (c, next) => {
      const decision = limits.take(c.var.caller);
      if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds);
      await next();
    });
  }

  const tooLarge = () => sendProblem(new HttpProblem(413, [`Body: is larger than the limit of ${maxSize} bytes.`]));
  const limitBody = bodyLimit({ maxSize, onError: tooLarge });
  app.use('*', async (c, next) => {
    // GET and HEAD requests have no body (the server never reads one), and a declared length is
    // checked from the header, as Hono's middleware does; only then does the request go through
    // it. Its first step reads `c.req.raw.body`, which makes @hono/node-server build a full
    // `Request` with a body stream (about a tenth of a small read's time in a profile), and for a
    // POST it also takes the body off the server's direct read path.
    const method = c.req.method;
    if (method === 'GET' || method === 'HEAD') return next();
    const length = c.req.header('content-length');
    if (length !== undefined && c.req.header('transfer-encoding') === undefined) {
      return Number.parseInt(length, 10) > maxSize ? tooLarge() : next();
    }
    return limitBody(c, next);
  });

  // At the wire boundary, before any route: text no storage keeps (NUL, invalid UTF-8, lone
  // surrogates) in the path or query is a 422, and a write's body must be typed as JSON (415). The
  // body reader (`readJsonBody`) checks the body itself: UTF-8, nesting depth, then every string.
  app.use('*', refuseUnstorableUrlText());
  app.use('*', requireJsonWrites());

  registerApiRoutes(app, engine, { portalLinks: options.portalLinks });

  // Unknown paths and formats other than `.json` (spec `{format}`) are 404s with a JSON body.
  app.notFound((c) => sendJson(404, { errors: [`No route matches ${c.req.method} ${new URL(c.req.url).pathname}.`] }));

  app.onError((error, c) => {
    if (error instanceof HttpProblem) return sendProblem(error);
    if (error instanceof BillingError) {
      if (error.httpStatus >= 500) logError(error, c.req.raw);
      return sendError(serializeError(error));
    }
    logError(error, c.req.raw);
    return sendError(errorListBody(500, [INTERNAL_ERROR_MESSAGE]));
  });

  return app;
}
