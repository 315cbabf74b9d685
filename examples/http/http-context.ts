import type { SiteHandle, SiteRecord } from 'billing-engine';
import { notFound } from 'billing-engine';
import type { Context } from 'hono';
import {
  errorListBody,
  readJsonRequestBody,
  type WireCompat,
  type WireContext,
  type WireErrorBody,
} from './wire-bridge.js';

/** Hono environment of the app: the authenticated site handle and the output compatibility. */
export interface HttpAppEnv {
  Variables: {
    /** The site the request's Host and API key resolved to; every engine call goes through it. */
    site: SiteHandle;
    /**
     * The site's record as authentication read it (or, with the app's key cache, as it read it at
     * most `apiKeyCacheTtlMs` ago): the serializers take its zone and currency from here, so that
     * a request reads the site once rather than once per engine call. Engine calls read it afresh.
     */
    siteRecord: SiteRecord;
    /** The subdomain and hashed key the request authenticated with (the rate-limit key). */
    caller: string;
    compat: WireCompat;
  };
}

/** The context type of route handlers. */
export type HttpContext = Context<HttpAppEnv>;

/**
 * A non-BillingError failure with an HTTP status and service-style messages (400 malformed JSON,
 * 403, 413, 415, 422 unstorable text or too deep a body, 429). Route code throws it; the app's
 * error handler writes `{"errors":[...]}`.
 */
export class HttpProblem extends Error {
  override readonly name = 'HttpProblem';
  readonly status: number;
  readonly messages: readonly string[];
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, messages: readonly string[], headers: Readonly<Record<string, string>> = {}) {
    super(messages.join(' '));
    this.status = status;
    this.messages = messages;
    this.headers = headers;
  }
}

/** The content type of every JSON response (the old `chargify` client crashes without one). */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A JSON response with the service's content type. */
export function sendJson(status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...headers, 'content-type': JSON_CONTENT_TYPE } });
}

/** The response for a wire error body: JSON, or plain text for 401 (with a Basic challenge). */
export function sendError(body: WireErrorBody, headers: Readonly<Record<string, string>> = {}): Response {
  if (body.kind === 'json') return sendJson(body.status, body.json, headers);
  const extra: Record<string, string> = body.status === 401 ? { 'www-authenticate': 'Basic realm="Application"' } : {};
  return new Response(body.text, {
    status: body.status,
    headers: { ...headers, ...extra, 'content-type': 'text/plain; charset=utf-8' },
  });
}

/** The response for an {@link HttpProblem}. */
export function sendProblem(problem: HttpProblem): Response {
  return sendError(errorListBody(problem.status, problem.messages), problem.headers);
}

/**
 * The request body as JSON, whatever the method: a DELETE may carry a body, and an empty body is
 * read as no body; the main API's middleware has already refused a non-empty body
 * that is not typed as JSON. Read at the wire boundary, before any route code: malformed JSON is a
 * 400; bytes that are not UTF-8, nesting deeper than `MAX_JSON_DEPTH` (checked before parsing) and
 * any string or key with a NUL or a lone surrogate are a 422, so nothing is charged or stored.
 */
export async function readJsonBody(c: HttpContext): Promise<unknown> {
  const result = readJsonRequestBody(new Uint8Array(await c.req.arrayBuffer()));
  if (!result.ok) throw new HttpProblem(result.refusal === 'syntax' ? 400 : 422, [result.message]);
  return result.value;
}

/**
 * A numeric record id from a path parameter, with the route's `.json` suffix removed. Anything that
 * is not a positive safe integer cannot name a record, so it is a 404 for `what`, not a 422.
 */
export function idParam(c: HttpContext, name: string, what: string): number {
  const raw = stripJsonSuffix(c.req.param(name) ?? '');
  const id = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw notFound(what, raw);
  return id;
}

/** A path parameter that ends the path, without its `.json` format suffix. */
export function stripJsonSuffix(value: string): string {
  return value.endsWith('.json') ? value.slice(0, -'.json'.length) : value;
}

/**
 * The serializers' context for this request's site: its zone, currency and the app's compat. The
 * site comes from the request's authentication (see `siteRecord`), so no storage read happens here.
 */
export async function wireContext(c: HttpContext): Promise<WireContext> {
  const site = c.var.siteRecord ?? (await c.var.site.info());
  return { timeZone: site.timeZone, currency: site.currency, compat: c.var.compat };
}

/** Route pattern of a last path segment that must end in `.json` (`{format}` of the spec; others 404). */
export const JSON_SEGMENT = '{[^/]+\\.json}';
