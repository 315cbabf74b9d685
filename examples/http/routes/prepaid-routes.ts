import type { Hono } from 'hono';
import { prepaidConfigurationJson, prepaidConfigurationRequest } from '../../../src/wire/prepaid-wire.js';
import { type HttpAppEnv, type HttpContext, idParam, readJsonBody, sendJson } from '../http-context.js';
import { parseWireRequest } from '../wire-bridge.js';

/** Prepaid subscriptions: their configuration (SubscriptionsController.updatePrepaidSubscriptionConfiguration). */
export function registerPrepaidRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/subscriptions/:id/prepaid_configurations.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const input = await configurationBody(c, id);
    const config = await c.var.site.prepaid.updateConfiguration(id, input);
    return sendJson(200, { prepaid_configuration: prepaidConfigurationJson(config) });
  });
}

/**
 * The body `{"prepaid_configuration":{...}}`. A subscription that is not the site's is a 404
 * whatever the body, so it is looked up before a refused body is reported.
 */
async function configurationBody(c: HttpContext, id: number) {
  const body = await readJsonBody(c);
  try {
    return parseWireRequest(prepaidConfigurationRequest, body);
  } catch (error) {
    await c.var.site.subscriptions.get(id);
    throw error;
  }
}
