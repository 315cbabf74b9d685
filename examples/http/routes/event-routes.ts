import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, sendJson, wireContext } from '../http-context.js';
import { eventListInput, serializeEvent } from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/**
 * Events polling (the spec's "or can poll the API"): the site's events, one subscription's, and
 * a count, read from the outbox the engine writes with every change.
 */
export function registerEventRoutes(app: Hono<HttpAppEnv>): void {
  app.get('/events.json', async (c) => {
    const events = await c.var.site.events.list(eventListInput(queryOf(c)));
    const context = await wireContext(c);
    return sendJson(
      200,
      events.map((event) => serializeEvent(event, context)),
    );
  });

  // The count ignores paging, as the service's does.
  app.get('/events/count.json', async (c) => {
    const count = await c.var.site.events.count(eventListInput(queryOf(c)));
    return sendJson(200, { count });
  });

  app.get('/subscriptions/:id/events.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const events = await c.var.site.events.listForSubscription(id, eventListInput(queryOf(c)));
    const context = await wireContext(c);
    return sendJson(
      200,
      events.map((event) => serializeEvent(event, context)),
    );
  });
}
