import type { SubscriptionView } from 'billing-engine';
import type { Hono } from 'hono';
import { type HttpAppEnv, type HttpContext, HttpProblem, idParam, readJsonBody, sendJson } from '../http-context.js';
import { isPlainObject } from '../wire-bridge.js';
import { subscriptionBody } from './subscription-routes.js';

/** What `remove_coupon` answers on success: a bare string, as the service sends it. */
export const COUPON_REMOVED_TEXT = 'Coupon successfully removed';

/** The coupon commands of the request's site (engine: src/services/subscription-coupon-service.ts). */
function commands(c: HttpContext) {
  return c.var.site.subscriptions;
}

/**
 * Coupons of a live subscription: `POST /subscriptions/{id}/add_coupon.json` adds the codes of
 * the body (`{"codes":[...]}`) to the subscription's; the deprecated query form (`?code=X`, no
 * codes in the body) replaces them all, as the service documents. `DELETE
 * /subscriptions/{id}/remove_coupon.json[?coupon_code=X]` removes one (without a code, the only
 * one). Both take effect at the next renewal and bill nothing now; bad codes are a 422 and change
 * nothing.
 */
export function registerSubscriptionCouponRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/subscriptions/:id/add_coupon.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    if (body !== undefined && body !== null && !isPlainObject(body)) {
      throw new HttpProblem(422, ['Coupon Codes: the body must be an object with a list of codes.']);
    }
    const given = isPlainObject(body) ? body.codes : undefined;
    const query = new URL(c.req.url).searchParams.get('code');
    let view: SubscriptionView;
    if (given === undefined && query !== null) {
      view = await commands(c).addCoupon(id, query, { replace: true });
    } else {
      // A code in the query beside a body's codes is added with them, never dropped silently.
      const codes = given === undefined ? [] : Array.isArray(given) ? [...given] : [given];
      view = await commands(c).addCoupon(id, query === null ? codes : [...codes, query]);
    }
    return sendJson(200, await subscriptionBody(c, view));
  });

  app.delete('/subscriptions/:id/remove_coupon.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    await readJsonBody(c);
    const code = new URL(c.req.url).searchParams.get('coupon_code');
    await commands(c).removeCoupon(id, code);
    return new Response(COUPON_REMOVED_TEXT, { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' } });
  });
}
