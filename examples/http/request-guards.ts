import type { MiddlewareHandler } from 'hono';
import { type HttpAppEnv, HttpProblem } from './http-context.js';
import { INVALID_TEXT_MESSAGE, isStorablePercentEncoded } from './wire-bridge.js';

/** The 415 message of a JSON API write whose body is not typed as JSON. */
export const JSON_REQUIRED_MESSAGE =
  'Content-Type: must be application/json (or a +json type, in UTF-8) for a request with a body.';

/** The 403 message of a bodiless write that a browser sent from a page (a cross-site form). */
export const BROWSER_FORM_MESSAGE =
  'Request: a browser form cannot call the API. Send it from your server with Content-Type: application/json.';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_SUFFIX = /^application\/[a-z0-9!#$&^_.+-]+\+json$/;

/**
 * True for `application/json` or any `application/*+json` type, with no charset or a UTF-8 one
 * (JSON is UTF-8, RFC 8259 section 8.1); parameters are matched case-insensitively.
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [type = '', ...parameters] = header.split(';');
  const media = type.trim().toLowerCase();
  if (media !== 'application/json' && !JSON_SUFFIX.test(media)) return false;
  for (const parameter of parameters) {
    const eq = parameter.indexOf('=');
    if (eq === -1 || parameter.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const charset = parameter
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    if (charset !== 'utf-8' && charset !== 'utf8') return false;
  }
  return true;
}

/** True for bytes that are all whitespace, after an optional UTF-8 BOM: what the body reader reads as no body. */
function isBlank(bytes: Uint8Array): boolean {
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  for (let i = start; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return false;
  }
  return true;
}

/**
 * JSON writes only: a POST, PUT, PATCH or DELETE whose body is not empty must be typed
 * `application/json` (a `+json` type and a UTF-8 charset allowed), or it gets 415 before any route
 * runs. A browser can post `text/plain`, a form or a typeless blob to any site without asking, and
 * it would attach the Basic credentials it holds for this one; a JSON type it cannot send
 * cross-site without a CORS preflight, which this API never grants. An empty body may come with
 * any type or none, as real clients send it (the SDK's `clear_data` posts an empty form, and some
 * clients DELETE or PUT with nothing), but not from a browser page: a bodiless write that carries
 * an `Origin` header (which browsers send with every form post and servers' clients never send)
 * gets 403. The body read here is cached: the route reads the same bytes.
 */
export function requireJsonWrites(): MiddlewareHandler<HttpAppEnv> {
  return async (c, next) => {
    if (!WRITES.has(c.req.method) || isJsonContentType(c.req.header('content-type'))) return next();
    const length = c.req.header('content-length');
    const chunked = c.req.header('transfer-encoding') !== undefined;
    // Without a length or chunked framing an HTTP/1.1 request has no body at all.
    const empty =
      (!chunked && (length === undefined || Number(length) === 0)) ||
      isBlank(new Uint8Array(await c.req.arrayBuffer()));
    if (!empty) throw new HttpProblem(415, [JSON_REQUIRED_MESSAGE]);
    if (c.req.header('origin') !== undefined) throw new HttpProblem(403, [BROWSER_FORM_MESSAGE]);
    return next();
  };
}

/**
 * Refuses with 422, before any route runs, a path or query string that decodes to text no storage
 * keeps as sent: a NUL (`%00`, which Postgres refuses in every text column, so a lookup by it was a
 * 500), invalid UTF-8 or a lone surrogate (`%ED%A0%80`). Malformed escapes (`%zz`) stay literal
 * text, as the router and the query parser read them, and are left to the routes.
 */
export function refuseUnstorableUrlText(): MiddlewareHandler<HttpAppEnv> {
  return async (c, next) => {
    if (!isStorablePercentEncoded(pathAndQuery(c.req.url))) throw new HttpProblem(422, [INVALID_TEXT_MESSAGE]);
    return next();
  };
}

/** The path and query of an absolute URL, as sent (still percent-encoded). */
export function pathAndQuery(url: string): string {
  const scheme = url.indexOf('://');
  const slash = url.indexOf('/', scheme === -1 ? 0 : scheme + 3);
  return slash === -1 ? '/' : url.slice(slash);
}
