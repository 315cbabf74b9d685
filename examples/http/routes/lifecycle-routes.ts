import type { Hono } from 'hono';
import { type HttpAppEnv, idParam, JSON_SEGMENT, readJsonBody, sendJson, wireContext } from '../http-context.js';
import {
  cancelSubscriptionRequest,
  delayedCancelRequest,
  holdRequest,
  isPlainObject,
  parseOptionalWireRequest,
  parseQueryString,
  parseWireParams,
  parseWireRequest,
  reactivateParams,
  readRenewalPreviewBody,
  serializeRenewalPreview,
} from '../wire-bridge.js';
import { subscriptionBody } from './subscription-routes.js';

/** The message of a delayed cancellation (the SDK reads a non-empty `message`). */
export const DELAYED_CANCEL_MESSAGE = 'This subscription will be canceled at the end of the current billing period.';
/** The message of undoing a delayed cancellation (the service's wording). */
export const UNDO_DELAYED_CANCEL_MESSAGE = 'This subscription will no longer be canceled';

/**
 * Subscription lifecycle: cancel now or at period end and undo, reactivate, hold (and change its
 * resume date) and resume, retry a payment in dunning now or stop dunning, and activate a trial now.
 */
export function registerLifecycleRoutes(app: Hono<HttpAppEnv>): void {
  // A DELETE with a JSON body (the SDK's cancelSubscription) or without one.
  app.delete(`/subscriptions/:id${JSON_SEGMENT}`, async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const input = parseOptionalWireRequest(cancelSubscriptionRequest, await readJsonBody(c));
    return sendJson(200, await subscriptionBody(c, await c.var.site.subscriptions.cancel(id, input)));
  });

  app.post('/subscriptions/:id/delayed_cancel.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const input = parseOptionalWireRequest(delayedCancelRequest, await readJsonBody(c));
    await c.var.site.subscriptions.cancelAtEndOfPeriod(id, input);
    return sendJson(200, { message: DELAYED_CANCEL_MESSAGE });
  });

  app.delete('/subscriptions/:id/delayed_cancel.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    await c.var.site.subscriptions.undoCancelAtEndOfPeriod(id);
    return sendJson(200, { message: UNDO_DELAYED_CANCEL_MESSAGE });
  });

  // Reactivation options come unwrapped, in the query or the body; the body wins where both give one.
  app.put('/subscriptions/:id/reactivate.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const body = await readJsonBody(c);
    const params = { ...parseQueryString(new URL(c.req.url).search), ...(isPlainObject(body) ? body : {}) };
    const input = parseWireParams(reactivateParams, params);
    return sendJson(200, await subscriptionBody(c, await c.var.site.subscriptions.reactivate(id, input)));
  });

  app.post('/subscriptions/:id/hold.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const input = parseOptionalWireRequest(holdRequest, await readJsonBody(c));
    return sendJson(200, await subscriptionBody(c, await c.var.site.subscriptions.hold(id, input)));
  });

  // The SDK's updateAutomaticSubscriptionResumption: a new resume date for a subscription on hold (null: none).
  app.put('/subscriptions/:id/hold.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    const input = parseWireRequest(holdRequest, await readJsonBody(c));
    return sendJson(200, await subscriptionBody(c, await c.var.site.subscriptions.changeAutoResume(id, input)));
  });

  // Retry now: the next dunning retry of a past-due subscription runs at once.
  app.put('/subscriptions/:id/retry.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    return sendJson(200, await subscriptionBody(c, await c.var.site.subscriptions.retry(id)));
  });

  // Ends a trial now and charges the first period. The SDK's optional `revert_on_failure` body is
  // read and ignored: a failed first charge already leaves the subscription as a failed trial end would.
  app.put('/subscriptions/:id/activate.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    await readJsonBody(c);
    return sendJson(200, await subscriptionBody(c, await c.var.site.subscriptions.activate(id)));
  });

  // Stops dunning: a past-due subscription returns to active with its retries canceled. The SDK
  // posts it; a PUT is taken the same way.
  for (const method of ['POST', 'PUT'] as const) {
    app.on(method, '/subscriptions/:id/cancel_dunning.json', async (c) => {
      const id = idParam(c, 'id', 'Subscription');
      return sendJson(200, await subscriptionBody(c, await c.var.site.subscriptions.cancelDunning(id)));
    });
  }

  app.post('/subscriptions/:id/renewals/preview.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    readRenewalPreviewBody(await readJsonBody(c));
    const preview = await c.var.site.subscriptions.previewRenewal(id);
    return sendJson(200, serializeRenewalPreview(preview, await wireContext(c)));
  });

  app.post('/subscriptions/:id/resume.json', async (c) => {
    const id = idParam(c, 'id', 'Subscription');
    return sendJson(200, await subscriptionBody(c, await c.var.site.subscriptions.resume(id)));
  });
}
