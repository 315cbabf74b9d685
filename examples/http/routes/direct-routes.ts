import { createHash } from 'node:crypto';
import {
  type BillingEngine,
  BillingError,
  type DirectBasicCredentials,
  type DirectPostForm,
  type DirectPostResult,
  type DirectPostService,
} from 'billing-engine';
import { directCallJson, formParamsFromJson, parseDirectForm } from 'billing-engine/chargify';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { type ClientAddressOf, socketAddress } from '../client-address.js';
import {
  type HttpAppEnv,
  type HttpContext,
  HttpProblem,
  readJsonBody,
  sendJson,
  sendProblem,
  stripJsonSuffix,
} from '../http-context.js';
import { createTokenBucket, type TokenBucket, type TokenBucketOptions } from '../token-bucket.js';

/** What the direct routes need from the engine: the three operations of the direct interface. */
export type DirectPostApi = Pick<DirectPostService, 'signup' | 'cardUpdate' | 'readCall'>;

/** Options of {@link registerDirectRoutes}. */
export interface DirectRoutesOptions {
  /**
   * The app's largest accepted body (default 1 MiB, as the main API). A direct post is held to the
   * smaller of this and `directBodyLimitBytes`; larger ones get 413.
   */
  readonly bodyLimitBytes?: number;
  /**
   * Largest body of a direct post (signup, card update), default {@link DEFAULT_DIRECT_BODY_LIMIT_BYTES}:
   * the spec's forms are a few hundred bytes, and every post whose `api_id` names a site is recorded.
   */
  readonly directBodyLimitBytes?: number;
  /**
   * Direct posts and call reads per client address, or `false` to turn off every direct-route
   * limit (this one and `apiIdRateLimit`). Default {@link DEFAULT_DIRECT_ADDRESS_RATE_LIMIT}. A
   * limited request gets 429 with Retry-After before its body is read, and records nothing.
   */
  readonly rateLimit?: TokenBucketOptions | false;
  /**
   * Direct posts and call reads per `api_id` (the form's `secure[api_id]` or the Basic user), from
   * all addresses together, so that many addresses cannot grow one site's call records without
   * bound either. Default {@link DEFAULT_DIRECT_API_ID_RATE_LIMIT}; off when `rateLimit` is false.
   */
  readonly apiIdRateLimit?: TokenBucketOptions;
  /**
   * How a request's client address is found; default {@link socketAddress} (the peer's socket
   * address, never `X-Forwarded-For`). Behind a reverse proxy, pass one that reads what the proxy sets.
   */
  readonly clientAddress?: ClientAddressOf;
  /** Where failures behind a 5000 result are reported (they are answered, not thrown). */
  readonly logError?: (error: unknown, request: Request) => void;
}

/** The default largest direct post: 16 KiB, many times a real signup or card update form. */
export const DEFAULT_DIRECT_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * The default limit per client address: 300 at once, then 5 a second (18,000 an hour). A person
 * filling forms never meets it; a shared address (an office behind one NAT) has room to spare.
 */
export const DEFAULT_DIRECT_ADDRESS_RATE_LIMIT: TokenBucketOptions = { capacity: 300, refillPerSecond: 5 };

/**
 * The default limit per `api_id`: 1,000 at once, then 50 a second, ten times an address's rate, so
 * that one address can never use up a merchant's signups by itself.
 */
export const DEFAULT_DIRECT_API_ID_RATE_LIMIT: TokenBucketOptions = { capacity: 1000, refillPerSecond: 50 };

// The service's throttling message, as the main API words it.
const RATE_LIMITED_MESSAGE =
  'Your request was denied due to a usage violation. Retry after the time in the Retry-After header.';

function rateLimited(retryAfterSeconds: number): Response {
  return sendProblem(new HttpProblem(429, [RATE_LIMITED_MESSAGE], { 'retry-after': String(retryAfterSeconds) }));
}

/** The direct-post service of an engine. */
export function directPostFor(engine: BillingEngine): DirectPostApi {
  return engine.direct;
}

/**
 * The direct-post interface (`{direct_url}`): `POST /api/v2/signups` (form post with the
 * signed `secure[...]` group, or JSON with HTTP Basic `api_id:api_password`),
 * `POST /api/v2/subscriptions/{id}/card_update` (form only) and `GET /api/v2/calls/{id}[.json]`
 * (Basic). The site comes from the `api_id`, not the Host. Register these before the main API's
 * key middleware: a browser's form post carries no API key, and these routes answer on their own.
 */
export function registerDirectRoutes(
  app: Hono<HttpAppEnv>,
  direct: DirectPostApi,
  options: DirectRoutesOptions = {},
): void {
  const maxSize = Math.min(
    options.bodyLimitBytes ?? Number.POSITIVE_INFINITY,
    options.directBodyLimitBytes ?? DEFAULT_DIRECT_BODY_LIMIT_BYTES,
  );
  if (!Number.isSafeInteger(maxSize) || maxSize < 0) {
    throw new RangeError('bodyLimitBytes and directBodyLimitBytes must be non-negative integers');
  }
  const tooLarge = () => sendProblem(new HttpProblem(413, [`Body: is larger than the limit of ${maxSize} bytes.`]));
  const limitBody = bodyLimit({ maxSize, onError: tooLarge });
  // A declared length is judged from the header, so an oversized post is refused before it is read.
  const limit: MiddlewareHandler<HttpAppEnv> = async (c, next) => {
    const length = c.req.header('content-length');
    if (length !== undefined && c.req.header('transfer-encoding') === undefined && Number(length) > maxSize) {
      return tooLarge();
    }
    return limitBody(c, next);
  };
  const limits = directRateLimits(options);
  const perAddress: MiddlewareHandler<HttpAppEnv> = async (c, next) => {
    const wait = limits?.address(c);
    if (wait !== undefined) return rateLimited(wait);
    return next();
  };
  const answer = (c: HttpContext, result: DirectPostResult): Response => {
    const unexpected =
      result.error !== undefined && !(result.error instanceof BillingError && result.error.httpStatus < 500);
    if (unexpected) options.logError?.(result.error, c.req.raw);
    // 303 so the browser follows with a GET, whatever it posted.
    if (result.redirect !== undefined) return c.redirect(result.redirect.href, 303);
    return sendJson(result.statusCode, result.call.response, { 'x-direct-call-id': result.call.id });
  };

  const signup = async (c: HttpContext) => {
    const type = bodyType(c);
    if (type === 'json') {
      const basic = basicCredentials(c.req.header('authorization'));
      const wait = limits?.apiId(basic?.apiId);
      if (wait !== undefined) return rateLimited(wait);
      const params = formParamsFromJson(await readJsonBody(c));
      return answer(c, await direct.signup({ params }, { contentType: 'json', basic }));
    }
    if (type === 'other') throw unsupportedType();
    const form = parseDirectForm(await c.req.text());
    const wait = limits?.apiId(secureApiId(form.params));
    if (wait !== undefined) return rateLimited(wait);
    return answer(c, await direct.signup(form, { contentType: 'form' }));
  };
  app.post('/api/v2/signups', perAddress, limit, signup);
  app.post('/api/v2/signups.json', perAddress, limit, signup);

  app.post('/api/v2/subscriptions/:id/card_update', perAddress, limit, async (c) => {
    // The card update is an HTML form interface only.
    if (bodyType(c) !== 'form') throw unsupportedType();
    const form = parseDirectForm(await c.req.text());
    const wait = limits?.apiId(secureApiId(form.params));
    if (wait !== undefined) return rateLimited(wait);
    return answer(c, await direct.cardUpdate(c.req.param('id'), form));
  });

  app.get('/api/v2/calls/:id', perAddress, async (c) => {
    const basic = basicCredentials(c.req.header('authorization'));
    if (basic === undefined) throw new BillingError('unauthorized', 'HTTP Basic: Access denied.', { shape: 'plain' });
    const wait = limits?.apiId(basic.apiId);
    if (wait !== undefined) return rateLimited(wait);
    const call = await direct.readCall(basic.apiId, basic.password, stripJsonSuffix(c.req.param('id')));
    return sendJson(200, directCallJson(call));
  });
}

/** The direct routes' limiters: each answers undefined to let a request through, or the seconds to wait. */
interface DirectRateLimits {
  address(c: Context): number | undefined;
  apiId(apiId: string | undefined): number | undefined;
}

function directRateLimits(options: DirectRoutesOptions): DirectRateLimits | undefined {
  if (options.rateLimit === false) return undefined;
  const addresses: TokenBucket = createTokenBucket(options.rateLimit ?? DEFAULT_DIRECT_ADDRESS_RATE_LIMIT);
  const apiIds: TokenBucket = createTokenBucket(options.apiIdRateLimit ?? DEFAULT_DIRECT_API_ID_RATE_LIMIT);
  const addressOf = options.clientAddress ?? socketAddress;
  const verdict = (bucket: TokenBucket, key: string) => {
    const decision = bucket.take(key);
    return decision.allowed ? undefined : decision.retryAfterSeconds;
  };
  return {
    address: (c) => verdict(addresses, addressOf(c)),
    // Hashed: the key is whatever the caller sent (up to the body limit), and the map holds it for a while.
    apiId: (apiId) =>
      apiId === undefined || apiId === ''
        ? undefined
        : verdict(apiIds, createHash('sha256').update(apiId).digest('hex')),
  };
}

/** The `secure[api_id]` of a parsed form, when it is one text value. */
function secureApiId(params: DirectPostForm['params']): string | undefined {
  const secure = params.secure;
  if (typeof secure !== 'object' || Array.isArray(secure)) return undefined;
  const apiId = (secure as DirectPostForm['params']).api_id;
  return typeof apiId === 'string' ? apiId : undefined;
}

function bodyType(c: HttpContext): 'form' | 'json' | 'other' {
  const type = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === '' || type === 'application/x-www-form-urlencoded') return 'form';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  return 'other';
}

function unsupportedType(): HttpProblem {
  return new HttpProblem(415, [
    'Content-Type: must be application/x-www-form-urlencoded (or application/json for signups).',
  ]);
}

/**
 * The user and password of an `Authorization: Basic` header, split at the first colon (a password
 * may contain colons). Undefined when the header is missing or not Basic.
 */
export function basicCredentials(header: string | undefined): DirectBasicCredentials | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1
    ? { apiId: decoded, password: '' }
    : { apiId: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
