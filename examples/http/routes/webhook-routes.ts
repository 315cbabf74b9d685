import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, JSON_SEGMENT, readJsonBody, sendJson, wireContext } from '../http-context.js';
import {
  endpointJson,
  endpointRequest,
  endpointUpdateRequest,
  parseWireParams,
  parseWireRequest,
  refuseUniquenessToken,
  replayIdsOf,
  serializeEndpoint,
  serializeWebhook,
  webhookListQuery,
} from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/**
 * Webhook endpoints and webhooks: endpoints with the events they receive
 * (the URL rules are the engine's, a violation is a 422 with its message), the site's webhook list,
 * replays, and a test message to one endpoint. None of these engine commands can honour a
 * `uniqueness_token`, so one is refused rather than silently not checked.
 */
export function registerWebhookRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/endpoints.json', async (c) => {
    const body = await readJsonBody(c);
    const input = parseWireRequest(endpointRequest, body);
    refuseUniquenessToken(body);
    return sendJson(201, serializeEndpoint(await c.var.site.webhooks.createEndpoint(input)));
  });

  // Bare endpoint objects, not wrapped: the official SDK's `listEndpoints` reads the items so.
  app.get('/endpoints.json', async (c) => {
    const endpoints = await c.var.site.webhooks.listEndpoints();
    return sendJson(
      200,
      endpoints.map((endpoint) => endpointJson(endpoint)),
    );
  });

  app.get(`/endpoints/:id${JSON_SEGMENT}`, async (c) => {
    return sendJson(200, serializeEndpoint(await c.var.site.webhooks.getEndpoint(idParam(c, 'id', 'Endpoint'))));
  });

  app.put(`/endpoints/:id${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Endpoint');
    const body = await readJsonBody(c);
    const input = parseWireRequest(endpointUpdateRequest, body);
    refuseUniquenessToken(body);
    return sendJson(200, serializeEndpoint(await c.var.site.webhooks.updateEndpoint(id, input)));
  });

  // Answers with the endpoint as it was, so that a client never gets an empty success body.
  app.delete(`/endpoints/:id${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Endpoint');
    const endpoint = await c.var.site.webhooks.getEndpoint(id);
    await c.var.site.webhooks.deleteEndpoint(id);
    return sendJson(200, serializeEndpoint(endpoint));
  });

  // Sent now, once, and answered with the outcome: a failed test is a 200 with `successful: false`.
  app.post('/endpoints/:id/test.json', async (c) => {
    const webhook = await c.var.site.webhooks.sendTest(idParam(c, 'id', 'Endpoint'));
    return sendJson(200, serializeWebhook(webhook, await wireContext(c)));
  });

  app.get('/webhooks.json', async (c) => {
    const query = parseWireParams(webhookListQuery, queryOf(c), 'query');
    const webhooks = await c.var.site.webhooks.list(query);
    const context = await wireContext(c);
    return sendJson(
      200,
      webhooks.map((webhook) => serializeWebhook(webhook, context)),
    );
  });

  // `{"status":"ok"}` as the service answers (the SDK reads `status`), with the queued webhooks.
  app.post('/webhooks/replay.json', async (c) => {
    const body = await readJsonBody(c);
    const ids = replayIdsOf(body);
    refuseUniquenessToken(body);
    const webhooks = await c.var.site.webhooks.replay(ids);
    const context = await wireContext(c);
    return sendJson(200, { status: 'ok', webhooks: webhooks.map((webhook) => serializeWebhook(webhook, context)) });
  });
}
