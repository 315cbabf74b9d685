import { type BillingEngine, notFound } from 'billing-engine';
import { directCallJson } from 'billing-engine/chargify';
import type { Hono } from 'hono';
import { type HttpAppEnv, JSON_SEGMENT, sendJson, stripJsonSuffix } from '../http-context.js';

// Call ids are 40 hex digits; anything else cannot name a call.
const CALL_ID = /^[0-9a-f]{40}$/i;

/**
 * `GET /calls/{id}.json` on the main API host (the old `chargify` client's
 * path): the record of a direct-post call, authenticated by the API key like every main-API route
 * rather than by direct credentials. Only calls of the key's site are found; another site's call
 * is a 404, so its existence is not revealed.
 *
 * The engine's `direct.readCall` authenticates with the site's direct credentials, which an API-key
 * request does not carry, so the call is read here from storage, scoped by the authenticated site's
 * id, and written with the same `directCallJson` as `GET /api/v2/calls/{id}`.
 */
export function registerCallRoutes(app: Hono<HttpAppEnv>, engine: BillingEngine): void {
  app.get(`/calls/:id${JSON_SEGMENT}`, async (c) => {
    const id = stripJsonSuffix(c.req.param('id') ?? '');
    if (!CALL_ID.test(id)) throw notFound('Call', id);
    const site = await c.var.site.info();
    const call = await engine.storage.transaction((tx) => tx.directCalls.findById(site.id, id.toLowerCase()));
    if (call === undefined) throw notFound('Call', id);
    return sendJson(200, directCallJson(call));
  });
}
