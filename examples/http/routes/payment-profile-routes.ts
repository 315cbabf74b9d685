import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, JSON_SEGMENT, readJsonBody, sendJson } from '../http-context.js';
import {
  createPaymentProfileRequest,
  listPaging,
  parseWireRequest,
  paymentProfileRequest,
  queryText,
  serializePaymentProfile,
} from '../wire-bridge.js';
import { queryOf } from './route-params.js';

/**
 * Payment profiles: create (a card tokenized at the gateway, or a vault import), list (by
 * customer), read, update the stored card, delete an unused one; and per subscription, delete
 * one or make it the default.
 */
export function registerPaymentProfileRoutes(app: Hono<HttpAppEnv>): void {
  app.post('/payment_profiles.json', async (c) => {
    const input = parseWireRequest(createPaymentProfileRequest, await readJsonBody(c));
    return sendJson(201, serializePaymentProfile(await c.var.site.paymentProfiles.create(input)));
  });

  app.get('/payment_profiles.json', async (c) => {
    const query = queryOf(c);
    const paging = listPaging(query);
    const customer = queryText(query.customer_id);
    // A customer id that is not a whole number matches no profile (the service's list is empty, not a 404).
    if (customer !== undefined && !/^\d+$/.test(customer)) return sendJson(200, []);
    const profiles = await c.var.site.paymentProfiles.list({
      page: paging.page,
      perPage: paging.perPage,
      ...(customer === undefined ? {} : { customerId: Number(customer) }),
    });
    return sendJson(200, profiles.map(serializePaymentProfile));
  });

  app.get(`/payment_profiles/:id${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Payment profile');
    return sendJson(200, serializePaymentProfile(await c.var.site.paymentProfiles.get(id)));
  });

  app.put(`/payment_profiles/:id${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Payment profile');
    const input = parseWireRequest(paymentProfileRequest, await readJsonBody(c));
    return sendJson(200, serializePaymentProfile(await c.var.site.paymentProfiles.update(id, input)));
  });

  // Deletes answer `{}` as the server's other deletes do (the service's 204 has no body; the SDK takes either).
  app.delete(`/payment_profiles/:id${JSON_SEGMENT}`, async (c) => {
    await c.var.site.paymentProfiles.delete(idParam(c, 'id', 'Payment profile'));
    return sendJson(200, {});
  });

  // `:id` is the subscription, as on every `/subscriptions/{id}/...` path.
  app.delete(`/subscriptions/:id/payment_profiles/:payment_profile_id${JSON_SEGMENT}`, async (c) => {
    const subscriptionId = idParam(c, 'id', 'Subscription');
    const id = idParam(c, 'payment_profile_id', 'Payment profile');
    await c.var.site.paymentProfiles.deleteForSubscription(subscriptionId, id);
    return sendJson(200, {});
  });

  // The SDK's sendRequestUpdatePaymentEmail: an email to the customer with the hosted card update
  // page's link, queued for the worker. Without a mailer configured: 422, nothing queued.
  app.post('/subscriptions/:id/request_payment_profiles_update.json', async (c) => {
    await c.var.site.mail.requestPaymentUpdate(idParam(c, 'id', 'Subscription'));
    return sendJson(200, {});
  });

  app.post('/subscriptions/:id/payment_profiles/:payment_profile_id/change_payment_profile.json', async (c) => {
    const subscriptionId = idParam(c, 'id', 'Subscription');
    const id = idParam(c, 'payment_profile_id', 'Payment profile');
    return sendJson(200, serializePaymentProfile(await c.var.site.paymentProfiles.changeDefault(subscriptionId, id)));
  });
}
