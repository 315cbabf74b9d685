import { type BillingEngine, type CustomerRecord, checkPortalLink } from 'billing-engine';
import { decodeUtf8, isStorablePercentEncoded, verifyHostedPageToken } from 'billing-engine/chargify';
import type { Hono, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie } from 'hono/cookie';
import type { AddressLimits } from '../address-limits.js';
import { readCardForm } from '../hosted/card-form.js';
import { cardUpdatePage } from '../hosted/card-update-page.js';
import { errorMessages } from '../hosted/display-format.js';
import { type HostedSite, hostedSite, isCustomerFacing, isNotFound } from '../hosted/hosted-site.js';
import { messagePage } from '../hosted/html.js';
import { portalAction } from '../hosted/portal-actions.js';
import { portalSubscriptions } from '../hosted/portal-data.js';
import {
  checkFlashSecret,
  clearFlashCookie,
  createFlashSecret,
  type FlashSecret,
  flashCookie,
  PORTAL_FLASH_COOKIE,
  readFlash,
} from '../hosted/portal-flash.js';
import { portalInvoicePdf } from '../hosted/portal-invoices.js';
import { type PortalFlash, portalPage } from '../hosted/portal-page.js';
import type { HttpAppEnv, HttpContext } from '../http-context.js';
import { pathAndQuery } from '../request-guards.js';

/** Options of {@link registerHostedRoutes}. */
export interface HostedRoutesOptions {
  /** Largest accepted form body; larger ones get a 413 page. Default 64 KiB (the forms are small). */
  readonly bodyLimitBytes?: number;
  /** The instant portal links are checked against; default the engine's clock (a manual clock in tests). */
  readonly now?: () => Date;
  /** Where unexpected failures behind a 500 page are reported; default `console.error`. */
  readonly logError?: (error: unknown, request: Request) => void;
  /**
   * The key portal flash cookies are signed with (HMAC-SHA256), at least 32 bytes. Default: 32
   * random bytes made when the routes are registered, so a restart drops flashes in flight (they
   * live a minute). Give one to share flashes between instances behind a load balancer.
   */
  readonly flashSecret?: FlashSecret;
  /**
   * Per-address limits (createHttpApp passes its own): every page request takes one hosted-page
   * token, every 404 (a token or link that matches nothing) counts as a failed authentication, and
   * an address out of either gets a 429 page. Undefined: no limits.
   */
  readonly addressLimits?: AddressLimits;
}

/** The default form body limit of the hosted pages. */
export const HOSTED_FORM_LIMIT_BYTES = 64 * 1024;

const NOT_FOUND_TITLE = 'Page not found';
const NOT_FOUND_MESSAGE = 'This link is not valid. Please ask the merchant for a new one.';

/**
 * The customer-facing pages: the hosted card update page
 * `GET|POST /update_payment/{subscription_id}/{token}` and the billing portal
 * `GET /portal/{customer_id}/{expires}/{signature}` with its actions
 * `POST /portal/{customer_id}/{expires}/{signature}/{action}`. The site is the first label of
 * `Host`, as for the main API, but no API key is read: the token or the signed link authenticates,
 * so register these BEFORE the API-key middleware. Every answer is an HTML page (a wrong token is
 * a 404 page, never the API's 401, whose Basic challenge would pop up a login dialog).
 *
 * Card update page: the token is the first 10 hex of SHA-1 of `update_payment--{id}--{shared_key}`;
 * pretty ids (`77-john-doe`) and longer tokens are accepted; a wrong token, an unknown id or site,
 * or a subscription of another site is a 404. The form posts back to the same URL and a POST with
 * a valid token updates the card through `subscriptions.updateCard`. Deviation from the service
 * (which answers 404 when the first request is a POST instead of a GET): the service keeps a session from
 * the GET; this binding keeps none, so the token authenticates a POST exactly as it does a GET,
 * and a POST of a card form to a valid URL updates the card without a prior GET. Everything else
 * about the token rules is the reference's.
 *
 * Portal: the link is checked with `checkPortalLink` (404 when forged or for another site, 410 when
 * expired, 403 when the customer's portal access was revoked); actions the site's `portal` settings do not allow get a 403 page; a subscription of
 * another customer is a 404. Each action redirects back to the portal with 303 and a one-time
 * message carried in a short-lived cookie scoped to the link's path, signed with `flashSecret`.
 *
 * Every form is read at the boundary: text no storage keeps (a NUL, bytes that are not UTF-8) is a
 * 422 page before any command. With `addressLimits`, page requests and failed lookups are limited
 * per client address (see {@link limitPages}).
 */
export function registerHostedRoutes(
  app: Hono<HttpAppEnv>,
  engine: BillingEngine,
  options: HostedRoutesOptions = {},
): void {
  const now = options.now ?? (() => engine.clock.now());
  const logError =
    options.logError ??
    ((error: unknown, request: Request) => console.error(`${request.method} ${request.url}`, error));
  const maxSize = options.bodyLimitBytes ?? HOSTED_FORM_LIMIT_BYTES;
  const flashSecret = checkFlashSecret(options.flashSecret ?? createFlashSecret());
  const limits = options.addressLimits;
  if (limits !== undefined) {
    const guard = limitPages(limits);
    app.use('/update_payment/*', guard);
    app.use('/portal/*', guard);
  }
  const limit = bodyLimit({
    maxSize,
    onError: () => messagePage(413, 'Form too large', `The form is larger than ${maxSize} bytes.`),
  });
  // Pages answer unexpected failures with a page too, logged, rather than the API's JSON body.
  const page =
    (handler: (c: HttpContext) => Promise<Response>) =>
    async (c: HttpContext): Promise<Response> => {
      try {
        // A URL whose text no storage keeps (`%00`) cannot be a link of ours: it never reaches a lookup.
        if (!isStorablePercentEncoded(pathAndQuery(c.req.url))) return notFoundPage();
        return await handler(c);
      } catch (error) {
        if (isNotFound(error)) return notFoundPage();
        logError(error, c.req.raw);
        return messagePage(500, 'Something went wrong', 'Your request could not be completed. Please try again later.');
      }
    };

  /** The site and subscription id of a card update URL, or undefined for a 404. */
  const cardUpdateTarget = async (c: HttpContext): Promise<{ site: HostedSite; id: number } | undefined> => {
    const site = await hostedSite(engine, c.req.header('host'));
    if (site === undefined) return undefined;
    const id = verifyHostedPageToken(
      'update_payment',
      c.req.param('id') ?? '',
      c.req.param('token') ?? '',
      site.record.sharedKey,
    );
    return id === undefined ? undefined : { site, id };
  };

  app.get(
    '/update_payment/:id/:token',
    page(async (c) => {
      const target = await cardUpdateTarget(c);
      if (target === undefined) return notFoundPage();
      const view = await target.site.handle.subscriptions.get(target.id);
      return cardUpdatePage({ site: target.site.record, view, action: pathOf(c) });
    }),
  );

  app.post(
    '/update_payment/:id/:token',
    limit,
    page(async (c) => {
      const target = await cardUpdateTarget(c);
      if (target === undefined) return notFoundPage();
      const { handle, record } = target.site;
      const view = await handle.subscriptions.get(target.id);
      if (!isFormPost(c)) return unsupportedTypePage();
      const form = await readForm(c);
      if (form === undefined) return invalidTextPage();
      const { card, values } = readCardForm(form);
      try {
        const updated = await handle.subscriptions.updateCard(target.id, card);
        return cardUpdatePage({ site: record, view: updated, action: pathOf(c), updated: true });
      } catch (error) {
        if (!isCustomerFacing(error)) throw error;
        const errors = errorMessages(error);
        return cardUpdatePage({ site: record, view, action: pathOf(c), errors, values, status: 422 });
      }
    }),
  );

  /** The site, customer and link path of a portal URL, or the page that refuses it. */
  const portalTarget = async (
    c: HttpContext,
  ): Promise<{ site: HostedSite; customer: CustomerRecord; basePath: string } | Response> => {
    const site = await hostedSite(engine, c.req.header('host'));
    if (site === undefined) return notFoundPage();
    const customerId = c.req.param('customerId') ?? '';
    const expires = c.req.param('expires') ?? '';
    const signature = c.req.param('signature') ?? '';
    const status = checkPortalLink({ customerId, expires, signature, sharedKey: site.record.sharedKey, now: now() });
    if (status === 'invalid') return notFoundPage();
    if (status === 'expired') {
      return messagePage(
        410,
        'Link expired',
        'This billing portal link has expired. Please ask the merchant for a new one.',
      );
    }
    const customer = await site.handle.customers.get(Number(customerId));
    // A genuine link of a customer whose portal access was revoked works no more (portal-access-service.ts).
    if (!(await site.handle.portalAccess.allows(customer.id))) {
      return messagePage(
        403,
        'Access revoked',
        'Your access to this billing portal has been turned off. Please contact the merchant.',
      );
    }
    return { site, customer, basePath: `/portal/${customerId}/${expires}/${signature}` };
  };

  app.get(
    `/portal/:customerId${DIGITS}/:expires${DIGITS}/:signature`,
    page(async (c) => {
      const target = await portalTarget(c);
      if (target instanceof Response) return target;
      const { site, customer, basePath } = target;
      const cookie = getCookie(c, PORTAL_FLASH_COOKIE);
      const flash = readFlash(cookie, basePath, flashSecret, now());
      const response = portalPage({
        site: site.record,
        customer,
        subscriptions: await portalSubscriptions(site.handle, customer.id),
        basePath,
        ...(flash === undefined ? {} : { flash }),
      });
      // Shown once: a reload after the message must not show it again.
      if (cookie !== undefined) response.headers.append('set-cookie', clearFlashCookie(basePath));
      return response;
    }),
  );

  app.post(
    `/portal/:customerId${DIGITS}/:expires${DIGITS}/:signature/:action`,
    limit,
    page(async (c) => {
      const target = await portalTarget(c);
      if (target instanceof Response) return target;
      const { site, customer, basePath } = target;
      const action = portalAction(c.req.param('action') ?? '');
      if (action === undefined) return notFoundPage();
      if (!site.record.settings.portal[action.setting]) {
        return messagePage(
          403,
          'Not available',
          `${site.record.name} does not allow this change in the billing portal. Please contact them instead.`,
        );
      }
      if (!isFormPost(c)) return unsupportedTypePage();
      const form = await readForm(c);
      if (form === undefined) return invalidTextPage();
      const subscriptionId = form.get('subscription_id') ?? '';
      if (!/^[0-9]{1,15}$/.test(subscriptionId)) return notFoundPage();
      const view = await site.handle.subscriptions.get(Number(subscriptionId));
      // The link is the customer's: their own subscriptions only, whatever id the form names.
      if (view.customer.id !== customer.id) return notFoundPage();
      let flash: PortalFlash;
      try {
        flash = { kind: 'notice', messages: await action.run({ site: site.handle, record: site.record, view, form }) };
      } catch (error) {
        if (!isCustomerFacing(error)) throw error;
        flash = { kind: 'error', messages: errorMessages(error) };
      }
      const secure = new URL(c.req.url).protocol === 'https:';
      return new Response(null, {
        status: 303,
        headers: {
          location: basePath,
          'set-cookie': flashCookie(flash, basePath, secure, flashSecret, now()),
          'cache-control': 'no-store',
        },
      });
    }),
  );

  // An invoice's PDF for the link's customer: the signed link authenticates it, as it does the page.
  app.get(
    `/portal/:customerId${DIGITS}/:expires${DIGITS}/:signature/invoices/:file`,
    page(async (c) => {
      const target = await portalTarget(c);
      if (target instanceof Response) return target;
      const pdf = await portalInvoicePdf(target.site.handle, target.customer, c.req.param('file') ?? '');
      return pdf ?? notFoundPage();
    }),
  );

  // A mistyped or truncated hosted URL is a page's 404, not the main API's 401 challenge (whose
  // Basic prompt would pop up a login dialog). `/portal/customers/...` is the main API's.
  app.all('/update_payment/*', () => notFoundPage());
  app.all('/portal/*', async (c, next) => {
    if (new URL(c.req.url).pathname.startsWith('/portal/customers/')) return next();
    return notFoundPage();
  });
}

// Customer ids and expiry instants are plain decimals; a constrained pattern also keeps
// `/portal/customers/{id}/management_link.json` (main API) out of the portal page's route.
const DIGITS = '{[0-9]+}';

function notFoundPage(): Response {
  return messagePage(404, NOT_FOUND_TITLE, NOT_FOUND_MESSAGE);
}

function invalidTextPage(): Response {
  return messagePage(
    422,
    'Invalid characters',
    'The form contains characters that cannot be saved (such as a NUL character). Please check what you entered.',
  );
}

/**
 * The posted form, or undefined when it holds text no storage keeps as sent: raw bytes that are not
 * UTF-8 (a lone surrogate's three bytes among them), or a NUL, raw or as `%00`, which would fail
 * the write on Postgres (a 500). Escapes that are not UTF-8 are read as U+FFFD, as browsers do.
 */
async function readForm(c: HttpContext): Promise<URLSearchParams | undefined> {
  const text = decodeUtf8(new Uint8Array(await c.req.arrayBuffer()));
  if (text === undefined || !isStorablePercentEncoded(text)) return undefined;
  return new URLSearchParams(text);
}

/**
 * The address limits of the hosted pages: an address that has spent its failures (API keys and
 * page tokens alike) or its page requests gets a 429 page with Retry-After before anything is
 * looked up, and every 404 it is answered (a token, link or URL that matches nothing) counts as a
 * failure. `/portal/customers/...` is the main API's (API key, per-key limit) and is left alone.
 */
function limitPages(limits: AddressLimits): MiddlewareHandler<HttpAppEnv> {
  return async (c, next) => {
    if (new URL(c.req.url).pathname.startsWith('/portal/customers/')) return next();
    const wait = limits.blocked(c) ?? limits.hostedPage(c);
    if (wait !== undefined) return tooManyRequestsPage(wait);
    await next();
    if (c.res.status === 404) {
      const failedWait = limits.failed(c);
      if (failedWait !== undefined) c.res = tooManyRequestsPage(failedWait);
    }
  };
}

function tooManyRequestsPage(retryAfterSeconds: number): Response {
  const response = messagePage(
    429,
    'Too many requests',
    'Too many requests came from your network. Please wait a moment and try again.',
  );
  response.headers.set('retry-after', String(retryAfterSeconds));
  return response;
}

function unsupportedTypePage(): Response {
  return messagePage(415, 'Unsupported form', 'The form must be sent as application/x-www-form-urlencoded.');
}

function isFormPost(c: HttpContext): boolean {
  const type = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return type === '' || type === 'application/x-www-form-urlencoded';
}

/** The request's path as the browser sent it (pretty id and long token kept), for the form to post back to. */
function pathOf(c: HttpContext): string {
  return new URL(c.req.url).pathname;
}
