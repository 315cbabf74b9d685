import { type BillingEngine, createPortalLink, wireTimestamp } from 'billing-engine';
import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, sendJson, wireContext } from '../http-context.js';

/** Options of {@link registerPortalLinkRoutes}. */
export interface PortalLinkRoutesOptions {
  /** How long a link works, in seconds; default 65 days (`DEFAULT_PORTAL_LINK_LIFETIME_SECONDS`). */
  readonly lifetimeSeconds?: number;
  /**
   * The origin the portal is served at for a site (`https://acme.example.com`), without a trailing
   * slash; default the origin of the API request, which is the site's host in this binding.
   */
  readonly baseUrl?: (subdomain: string) => string;
  /** The instant links are issued at; default the engine's clock (a manual clock in tests). */
  readonly now?: () => Date;
}

/**
 * `GET /portal/customers/{customer_id}/management_link.json` (main API, API key required): a
 * signed, expiring billing portal link for one of the site's customers, as
 * `{"url": ".../portal/{customer_id}/{expires}/{signature}", "expires_at": "..."}`. The service
 * hands out its management URL the same way, because it cannot be derived (reference §2); here
 * the signature is an HMAC-SHA256 with the site's shared key (`createPortalLink`), checked by the
 * portal page. An unknown customer, or one of another site, is the API's 404.
 */
export function registerPortalLinkRoutes(
  app: Hono<HttpAppEnv>,
  engine: BillingEngine,
  options: PortalLinkRoutesOptions = {},
): void {
  const now = options.now ?? (() => engine.clock.now());
  app.get('/portal/customers/:id/management_link.json', async (c) => {
    const site = c.var.site;
    const customer = await site.customers.get(idParam(c, 'id', 'Customer'));
    const record = await site.info();
    const link = createPortalLink({
      customerId: customer.id,
      sharedKey: record.sharedKey,
      now: now(),
      ...(options.lifetimeSeconds === undefined ? {} : { lifetimeSeconds: options.lifetimeSeconds }),
    });
    const origin = options.baseUrl?.(site.subdomain) ?? new URL(c.req.url).origin;
    return sendJson(200, {
      url: `${origin}${link.path}`,
      expires_at: wireTimestamp(link.expiresAt, await wireContext(c)),
    });
  });
}
