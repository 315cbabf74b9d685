import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, JSON_SEGMENT, readJsonBody, sendJson } from '../http-context.js';
import { parseWireRequest, paymentProfileRequest, serializePaymentProfile } from '../wire-bridge.js';

/** Payment profiles: update the stored card (`PUT /payment_profiles/{id}.json`). */
export function registerPaymentProfileRoutes(app: Hono<HttpAppEnv>): void {
  app.put(`/payment_profiles/:id${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Payment profile');
    const input = parseWireRequest(paymentProfileRequest, await readJsonBody(c));
    return sendJson(200, serializePaymentProfile(await c.var.site.paymentProfiles.update(id, input)));
  });
}
