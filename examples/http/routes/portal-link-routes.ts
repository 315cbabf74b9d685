import { type BillingEngine, createPortalLink, invalid, portalLinkUrl, sitePortalOrigin } from 'billing-engine';
import { wireTimestamp } from 'billing-engine/chargify';
import type { Hono } from 'hono';
import { type HttpAppEnv, HttpProblem, idParam, sendJson, wireContext } from '../http-context.js';

/** Options of {@link registerPortalLinkRoutes}. */
export interface PortalLinkRoutesOptions {
  /** How long a link works, in seconds; default 65 days (`DEFAULT_PORTAL_LINK_LIFETIME_SECONDS`). */
  readonly lifetimeSeconds?: number;
  /**
   * The public origin the portal is served at for a site (`https://acme.example.com`): scheme,
   * host and optional port only. Default: the site's subdomain under `baseDomain`. Links are never
   * made for the request's own `Host`.
   */
  readonly baseUrl?: (subdomain: string) => string;
  /**
   * The domain the sites are served under: a site's portal is at `https://{subdomain}.{baseDomain}`
   * (`example.com`, or an origin such as `http://localhost:3000` for another scheme or a port).
   * Used when `baseUrl` is not given; with neither, the route answers 501.
   */
  readonly baseDomain?: string;
  /** The instant links are issued at; default the engine's clock (a manual clock in tests). */
  readonly now?: () => Date;
}

/** The 501 message when no public origin is configured. */
export const PORTAL_ORIGIN_MISSING_MESSAGE =
  'Billing portal links are not configured on this server: set the portalLinks baseDomain (or baseUrl) option.';

/**
 * `GET /portal/customers/{customer_id}/management_link.json` (main API, API key required): a
 * signed, expiring billing portal link for one of the site's customers, as
 * `{"url": ".../portal/{customer_id}/{expires}/{signature}", "expires_at": "..."}`. The service
 * hands out its management URL the same way, because it cannot be derived; here
 * the signature is an HMAC-SHA256 with the site's shared key (`createPortalLink`), checked by the
 * portal page. The URL's origin is the configured one for the site (`baseUrl`, or the site under
 * `baseDomain`), never the request's `Host`: a client could name any host there and be handed a
 * genuinely signed link to it. Without either option the route is a 501. An unknown customer, or
 * one of another site, is the API's 404.
 */
export function registerPortalLinkRoutes(
  app: Hono<HttpAppEnv>,
  engine: BillingEngine,
  options: PortalLinkRoutesOptions = {},
): void {
  const now = options.now ?? (() => engine.clock.now());
  const { baseUrl, baseDomain } = options;
  // A bad base domain fails at startup, not on the first request.
  if (baseUrl === undefined && baseDomain !== undefined) sitePortalOrigin('site', baseDomain);
  const originOf = (subdomain: string): string | undefined =>
    baseUrl !== undefined
      ? baseUrl(subdomain)
      : baseDomain !== undefined
        ? sitePortalOrigin(subdomain, baseDomain)
        : undefined;
  app.get('/portal/customers/:id/management_link.json', async (c) => {
    const site = c.var.site;
    const customer = await site.customers.get(idParam(c, 'id', 'Customer'));
    // A customer whose portal access was revoked gets no link (it would only answer 403).
    if (!(await site.portalAccess.allows(customer.id))) {
      throw invalid('Billing Portal is not enabled for this customer.');
    }
    const origin = originOf(site.subdomain);
    if (origin === undefined) throw new HttpProblem(501, [PORTAL_ORIGIN_MISSING_MESSAGE]);
    const record = await site.info();
    const link = createPortalLink({
      customerId: customer.id,
      sharedKey: record.sharedKey,
      now: now(),
      ...(options.lifetimeSeconds === undefined ? {} : { lifetimeSeconds: options.lifetimeSeconds }),
    });
    return sendJson(200, {
      url: portalLinkUrl(origin, link),
      expires_at: wireTimestamp(link.expiresAt, await wireContext(c)),
    });
  });
}
