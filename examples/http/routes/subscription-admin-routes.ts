import type { SiteHandle } from 'billing-engine';
import { type WireContext, wireTimestamp } from 'billing-engine/chargify';
import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, readJsonBody, sendJson, wireContext } from '../http-context.js';
import { createSubscriptionRequest, parseWireRequest } from '../wire-bridge.js';
import { queryOf } from './route-params.js';
import { subscriptionBody } from './subscription-routes.js';

type SignupPreview = Awaited<ReturnType<SiteHandle['subscriptions']['previewSignup']>>;
type SignupManifest = SignupPreview['currentBillingManifest'];

/** The manifest line kinds the service names; a component line of any kind is a `component` line. */
function manifestKind(kind: string): string {
  return kind.endsWith('_component') ? 'component' : kind;
}

/** A manifest as the service writes it: integer cents, timestamps in the site's zone. */
function manifestJson(manifest: SignupManifest, context: WireContext) {
  return {
    line_items: manifest.lineItems.map((item) => ({
      transaction_type: item.transactionType,
      kind: manifestKind(item.kind),
      amount_in_cents: item.amountInCents,
      memo: item.memo,
      discount_amount_in_cents: item.discountAmountInCents,
      taxable_amount_in_cents: item.taxableAmountInCents,
      ...(item.componentId === null ? {} : { component_id: item.componentId }),
      product_id: item.productId,
      product_handle: item.productHandle,
      product_name: item.productName,
      period_range_start: wireTimestamp(item.periodRangeStart, context),
      period_range_end: wireTimestamp(item.periodRangeEnd, context),
    })),
    total_in_cents: manifest.totalInCents,
    total_discount_in_cents: manifest.totalDiscountInCents,
    total_tax_in_cents: manifest.totalTaxInCents,
    subtotal_in_cents: manifest.subtotalInCents,
    start_date: wireTimestamp(manifest.startDate, context),
    end_date: wireTimestamp(manifest.endDate, context),
    period_type: manifest.periodType,
    existing_balance_in_cents: manifest.existingBalanceInCents,
  };
}

/**
 * Signup previews and purging a subscription. Registered before the subscription routes, whose
 * `/subscriptions/{id}.json` would otherwise read `preview` as an id.
 */
export function registerSubscriptionAdminRoutes(app: Hono<HttpAppEnv>): void {
  // The body of a signup; the answer is `{"subscription_preview":{...}}` and nothing is kept.
  app.post('/subscriptions/preview.json', async (c) => {
    const input = parseWireRequest(createSubscriptionRequest, await readJsonBody(c));
    const preview = await c.var.site.subscriptions.previewSignup(input);
    const context = await wireContext(c);
    return sendJson(200, {
      subscription_preview: {
        current_billing_manifest: manifestJson(preview.currentBillingManifest, context),
        next_billing_manifest: manifestJson(preview.nextBillingManifest, context),
      },
    });
  });

  // `?ack={customer_id}&cascade[]=customer&cascade[]=payment_profile`; answers with the
  // subscription as it was before the purge.
  app.post('/subscriptions/:id/purge.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const query = queryOf(c);
    const purged = await c.var.site.subscriptions.purge(id, { ack: query.ack, cascade: query.cascade });
    return sendJson(200, await subscriptionBody(c, purged.view));
  });
}
