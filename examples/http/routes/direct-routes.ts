import {
  type BillingEngine,
  BillingError,
  type DirectBasicCredentials,
  type DirectPostResult,
  type DirectPostService,
  directCallJson,
  formParamsFromJson,
  parseDirectForm,
} from 'billing-engine';
import type { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import {
  type HttpAppEnv,
  type HttpContext,
  HttpProblem,
  readJsonBody,
  sendJson,
  sendProblem,
  stripJsonSuffix,
} from '../http-context.js';

/** What the direct routes need from the engine: the three operations of the direct interface. */
export type DirectPostApi = Pick<DirectPostService, 'signup' | 'cardUpdate' | 'readCall'>;

/** Options of {@link registerDirectRoutes}. */
export interface DirectRoutesOptions {
  /** Largest accepted body; larger ones get 413. Default 1 MiB, as the main API. */
  readonly bodyLimitBytes?: number;
  /** Where failures behind a 5000 result are reported (they are answered, not thrown). */
  readonly logError?: (error: unknown, request: Request) => void;
}

/** The direct-post service of an engine. */
export function directPostFor(engine: BillingEngine): DirectPostApi {
  return engine.direct;
}

/**
 * The direct-post interface (spec §4 `{direct_url}`): `POST /api/v2/signups` (form post with the
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
  const maxSize = options.bodyLimitBytes ?? 1024 * 1024;
  const limit = bodyLimit({
    maxSize,
    onError: () => sendProblem(new HttpProblem(413, [`Body: is larger than the limit of ${maxSize} bytes.`])),
  });
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
      const params = formParamsFromJson(await readJsonBody(c));
      const basic = basicCredentials(c.req.header('authorization'));
      return answer(c, await direct.signup({ params }, { contentType: 'json', basic }));
    }
    if (type === 'other') throw unsupportedType();
    return answer(c, await direct.signup(parseDirectForm(await c.req.text()), { contentType: 'form' }));
  };
  app.post('/api/v2/signups', limit, signup);
  app.post('/api/v2/signups.json', limit, signup);

  app.post('/api/v2/subscriptions/:id/card_update', limit, async (c) => {
    // The card update is an HTML form interface only (reference §1.1).
    if (bodyType(c) !== 'form') throw unsupportedType();
    return answer(c, await direct.cardUpdate(c.req.param('id'), parseDirectForm(await c.req.text())));
  });

  app.get('/api/v2/calls/:id', async (c) => {
    const basic = basicCredentials(c.req.header('authorization'));
    if (basic === undefined) throw new BillingError('unauthorized', 'HTTP Basic: Access denied.', { shape: 'plain' });
    const call = await direct.readCall(basic.apiId, basic.password, stripJsonSuffix(c.req.param('id')));
    return sendJson(200, directCallJson(call));
  });
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
