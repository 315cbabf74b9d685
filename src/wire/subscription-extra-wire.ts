/** The wire format of subscription references and lookups, purge, override, payment profiles. */
import { z } from 'zod';
import { invalid } from '../errors.js';
import type { OverrideInput } from '../services/subscription-service.js';
import { defineWireRequest, isPlainObject } from './wire-request.js';
import { wireText } from './wire-scalars.js';

/**
 * The `reference` of a subscription update body (`{"subscription":{"reference":...}}`), read
 * beside the other update fields: `undefined` when the body does not name it (nothing changes),
 * null or a blank string to clear it, else the new reference (a number is read as its text, as
 * the other text fields are). Anything else is a 422.
 */
export function subscriptionReferenceChange(body: unknown): string | null | undefined {
  const wrapped = isPlainObject(body) ? body.subscription : undefined;
  if (!isPlainObject(wrapped) || wrapped.reference === undefined) return undefined;
  const value = wrapped.reference;
  if (value === null || typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw invalid('Reference: must be a string.', 'subscription.reference');
}

// The payment profile create form lives beside the other card forms; exported here, where the
// wire index re-exports everything.
export { createPaymentProfileFields, createPaymentProfileRequest } from './credit-card-request.js';

/**
 * The fields of an override (`PUT /subscriptions/{id}/override.json`, body `{"subscription":{...}}`):
 * `activated_at`, `canceled_at`, `cancellation_message`, `expires_at`, `current_period_starts_at`
 * (ISO 8601 instants, checked by the engine), read into an {@link OverrideInput}. A null clears
 * the field; unknown keys are ignored.
 */
export const overrideSubscriptionFields = z
  .object(
    {
      activated_at: wireText.nullish(),
      canceled_at: wireText.nullish(),
      cancellation_message: wireText.nullish(),
      expires_at: wireText.nullish(),
      current_period_starts_at: wireText.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform(
    (o): OverrideInput => ({
      ...(o.activated_at === undefined ? {} : { activatedAt: o.activated_at }),
      ...(o.canceled_at === undefined ? {} : { canceledAt: o.canceled_at }),
      ...(o.cancellation_message === undefined ? {} : { cancellationMessage: o.cancellation_message }),
      ...(o.expires_at === undefined ? {} : { expiresAt: o.expires_at }),
      ...(o.current_period_starts_at === undefined ? {} : { currentPeriodStartsAt: o.current_period_starts_at }),
    }),
  );

/** `PUT /subscriptions/{id}/override.json`: body `{"subscription":{activated_at?, canceled_at?, ...}}`. */
export const overrideSubscriptionRequest = defineWireRequest('subscription', overrideSubscriptionFields);
