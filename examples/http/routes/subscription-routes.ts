import { BillingError, invalid, type SubscriptionView } from 'billing-engine';
import type { Hono } from 'hono';
import {
  type HttpAppEnv,
  type HttpContext,
  idParam,
  JSON_SEGMENT,
  readJsonBody,
  sendJson,
  wireContext,
} from '../http-context.js';
import {
  asProductChangeError,
  createSubscriptionRequest,
  overrideSubscriptionRequest,
  parseQueryString,
  parseWireParams,
  parseWireRequest,
  queryText,
  serializeSubscription,
  subscriptionListQuery,
  subscriptionReferenceChange,
  updateSubscriptionRequest,
} from '../wire-bridge.js';
import { registerKnownUnservedRoutes } from './method-routes.js';
import { queryOf } from './route-params.js';

/**
 * `{"subscription":{...}}` bodies for views. The nested product shows its family in full: a view
 * read by the engine carries it; for one that does not, the site's families are read once.
 */
export async function subscriptionBodies(c: HttpContext, views: readonly SubscriptionView[]) {
  const missing = views.some((view) => view.product.family === undefined);
  const families = missing ? new Map((await c.var.site.catalog.listFamilies()).map((f) => [f.id, f])) : undefined;
  const context = await wireContext(c);
  return views.map((view) =>
    serializeSubscription(view, context, view.product.family ?? families?.get(view.product.product.familyId)),
  );
}

/** The `{"subscription":{...}}` body of one view. */
export async function subscriptionBody(c: HttpContext, view: SubscriptionView) {
  const [body] = await subscriptionBodies(c, [view]);
  return body;
}

function search(c: HttpContext): string {
  return new URL(c.req.url).search;
}

/**
 * Subscriptions: signup (with its payment, coupons and custom fields), list, read, and card,
 * product and billing-date changes. The transaction lists are the ledger's (see ledger-routes).
 */
export function registerSubscriptionRoutes(app: Hono<HttpAppEnv>): void {
  // Before `/subscriptions/{id}.json`, which would read `lookup` or `preview` as an id.
  registerKnownUnservedRoutes(app);

  app.post('/subscriptions.json', async (c) => {
    const input = parseWireRequest(createSubscriptionRequest, await readJsonBody(c));
    const view = await c.var.site.subscriptions.create(input);
    return sendJson(201, await subscriptionBody(c, view));
  });

  app.get('/subscriptions.json', async (c) => {
    const query = parseWireParams(subscriptionListQuery, parseQueryString(search(c)), 'query');
    return sendJson(200, await subscriptionBodies(c, await c.var.site.subscriptions.list(query)));
  });

  // Before `/subscriptions/{id}.json`, which would read `lookup` as an id.
  app.get('/subscriptions/lookup.json', async (c) => {
    const reference = queryText(queryOf(c).reference);
    if (reference === undefined) throw invalid('Reference: cannot be blank.', 'reference');
    return sendJson(200, await subscriptionBody(c, await c.var.site.subscriptions.lookup(reference)));
  });

  app.get(`/subscriptions/:id${JSON_SEGMENT}`, async (c) => {
    const view = await c.var.site.subscriptions.get(idParam(c, 'id', 'Subscription'));
    return sendJson(200, await subscriptionBody(c, view));
  });

  // The spec changes the billing date with POST and the card with PUT; the SDK sends both with PUT.
  // One engine command: the card, the collection method, the product, then the date; if any is
  // refused, none is kept.
  const update = async (c: HttpContext) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const change = parseWireRequest(updateSubscriptionRequest, body);
    const reference = subscriptionReferenceChange(body);
    const site = c.var.site;
    const productChange = change.productChange;
    const others =
      change.creditCard !== undefined ||
      productChange !== undefined ||
      change.nextBillingAt !== undefined ||
      change.paymentCollectionMethod !== undefined;
    // A taken reference is refused before anything changes; the other changes (one command) go
    // next, and the reference is written once they are kept. Only a reference taken by another
    // request in between is refused after them.
    if (others && reference !== undefined && reference !== null && reference.trim() !== '') {
      const holder = await site.subscriptions.lookup(reference).catch((error: unknown) => {
        if (error instanceof BillingError && error.code === 'not_found') return undefined;
        throw error;
      });
      if (holder !== undefined && holder.subscription.id !== id)
        throw invalid('Reference: must be unique - that value has been taken.', 'subscription.reference');
    }
    let view: SubscriptionView | undefined;
    if (others) {
      view = await site.subscriptions.update(id, change).catch((error: unknown) => {
        throw productChange === undefined ? error : asProductChangeError(error, productChange);
      });
    }
    if (reference !== undefined) view = await site.subscriptions.setReference(id, reference);
    return sendJson(200, await subscriptionBody(c, view ?? (await site.subscriptions.get(id))));
  };
  app.put(`/subscriptions/:id${JSON_SEGMENT}`, update);

  // The service answers with no body; the subscription as overridden is more use and the SDK ignores it.
  app.put('/subscriptions/:id/override.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const input = parseWireRequest(overrideSubscriptionRequest, await readJsonBody(c));
    return sendJson(200, await subscriptionBody(c, await c.var.site.subscriptions.override(id, input)));
  });
  app.post(`/subscriptions/:id${JSON_SEGMENT}`, update);
}
