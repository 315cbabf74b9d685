import type { BillingEngine, ClearScope } from 'billing-engine';
import type { Hono } from 'hono';
import { type HttpAppEnv, HttpProblem, readJsonBody, sendJson } from '../http-context.js';
import { parseQueryString, readWebhookSettingsBody, serializeSite } from '../wire-bridge.js';

/** Site operations: reading the site, turning its webhooks on or off, clearing its test data. */
export function registerSiteRoutes(app: Hono<HttpAppEnv>, engine: BillingEngine): void {
  app.get('/site.json', async (c) => sendJson(200, serializeSite(await c.var.site.info())));

  // Webhooks on or off for the site (the SDK's enableWebhooks): `{"webhooks_enabled":true}`.
  app.put('/webhooks/settings.json', async (c) => {
    const webhooksEnabled = readWebhookSettingsBody(await readJsonBody(c));
    const site = await c.var.site.info();
    const updated = await engine.sites.update(site.subdomain, { settings: { webhooksEnabled } });
    return sendJson(200, { webhooks_enabled: updated.settings.webhooksEnabled });
  });

  // The SDK posts this with an empty body typed as a form; the body is not read.
  app.post('/sites/clear_data.json', async (c) => {
    const site = await c.var.site.info();
    // Clearing is for test data; the hosted service refuses it on a live site (403), and so must we,
    // since the engine's clearData does not look at the mode.
    if (site.mode !== 'test') throw new HttpProblem(403, ['Site data can only be cleared on a site in test mode.']);
    const scope = parseQueryString(new URL(c.req.url).search).cleanup_scope;
    // The engine checks the scope and answers an unknown one with a 422.
    await engine.sites.clearData(
      site.subdomain,
      (typeof scope === 'string' && scope !== '' ? scope : 'all') as ClearScope,
    );
    return sendJson(200, {});
  });
}
