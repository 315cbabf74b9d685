import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, readJsonBody, sendJson } from '../http-context.js';
import {
  migrationRequest,
  parseOptionalWireRequest,
  refuseUniquenessToken,
  serializeMigrationPreview,
} from '../wire-bridge.js';
import { subscriptionBody } from './subscription-routes.js';

/**
 * Prorated product migrations: the migration itself, which answers with the
 * subscription, and its preview, which answers `{"migration":{...}}` with integer cents and changes
 * nothing. Without a body both ask for no product, which the engine answers with its
 * "Product must be specified".
 */
export function registerMigrationRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/subscriptions/:id/migrations.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const input = parseOptionalWireRequest(migrationRequest, body);
    refuseUniquenessToken(body);
    return sendJson(200, await subscriptionBody(c, await c.var.site.subscriptions.migrate(id, input)));
  });

  app.post('/subscriptions/:id/migrations/preview.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const input = parseOptionalWireRequest(migrationRequest, body);
    refuseUniquenessToken(body);
    return sendJson(200, serializeMigrationPreview(await c.var.site.subscriptions.previewMigration(id, input)));
  });
}
