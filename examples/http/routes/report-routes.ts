import type { Hono } from 'hono';
import { type HttpAppEnv, sendJson, wireContext } from '../http-context.js';
import {
  metadataListQuery,
  mrrMovementListQuery,
  mrrQuery,
  serializeMetadataPage,
  serializeMrr,
  serializeMrrMovements,
  serializeSiteStatistics,
  serializeSiteSubscriptionComponents,
  serializeSubscriptionMrrList,
  subscriptionComponentListQuery,
  subscriptionMrrListQuery,
} from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/**
 * Site statistics, MRR and its movements, a resource type's metadata and the site-wide
 * subscription-component list.
 *
 * Registered before the customer and subscription routes: `/customers/metadata.json` and
 * `/subscriptions/metadata.json` also fit `/customers/{id}.json` and `/subscriptions/{id}.json`,
 * and the route registered first is the one that answers.
 *
 * `GET /mrr_movements.json` lists the movements the engine records going forward (each command
 * that changes a subscription's MRR writes one); there are none from before it kept them.
 */
export function registerReportRoutes(app: Hono<HttpAppEnv>): void {
  app.get('/stats.json', async (c) =>
    sendJson(200, serializeSiteStatistics(await c.var.site.reports.siteStatistics())),
  );

  app.get('/mrr.json', async (c) => sendJson(200, serializeMrr(await c.var.site.reports.mrr(mrrQuery(queryOf(c))))));

  app.get('/subscriptions_mrr.json', async (c) => {
    const page = await c.var.site.reports.listSubscriptionMrr(subscriptionMrrListQuery(queryOf(c)));
    return sendJson(200, serializeSubscriptionMrrList(page));
  });

  app.get('/mrr_movements.json', async (c) => {
    const page = await c.var.site.reports.listMrrMovements(mrrMovementListQuery(queryOf(c)));
    return sendJson(200, serializeMrrMovements(page));
  });

  for (const resource of ['customers', 'subscriptions'] as const) {
    app.get(`/${resource}/metadata.json`, async (c) => {
      const page = await c.var.site.reports.listMetadata(resource, metadataListQuery(queryOf(c)));
      return sendJson(200, serializeMetadataPage(page));
    });
  }

  app.get('/subscriptions_components.json', async (c) => {
    const page = await c.var.site.reports.listSubscriptionComponents(subscriptionComponentListQuery(queryOf(c)));
    return sendJson(200, serializeSiteSubscriptionComponents(page, await wireContext(c)));
  });
}
