import { z } from 'zod';
import { BillingError, invalid } from '../errors.js';
import type { CancelInput, HoldInput, ReactivateInput } from '../services/lifecycle-service.js';
import type { ProductChangeInput } from '../services/migration-service.js';
import { creditCardAttributesFields, type WireCardInput } from './credit-card-request.js';
import { isGiven } from './subscription-request.js';
import { defineWireRequest, isPlainObject } from './wire-request.js';
import { wireBoolean, wireId, wireText, wireTimestampInput } from './wire-scalars.js';

/**
 * A product change asked for through a subscription update: a product now or at
 * the next renewal (`delayed`), or the cancellation of a pending delayed change.
 */
export type SubscriptionProductChange = ProductChangeInput | { readonly delayed: true; readonly productId: null };

/** What `PUT`/`POST /subscriptions/{id}.json` asks for: a new card, a new billing date, a product change, a collection method. */
export interface SubscriptionUpdate {
  readonly creditCard?: WireCardInput;
  readonly nextBillingAt?: string;
  readonly productChange?: SubscriptionProductChange;
  /** `automatic`, `remittance` or `invoice`; the service reads the names. */
  readonly paymentCollectionMethod?: string;
}

// Fields of a subscription update that other endpoints of the service handle or that the engine
// cannot do yet; refused so that a client never believes a component or coupon change took effect.
const UNSUPPORTED_UPDATE_FIELDS = [
  'components',
  'coupon_code',
  'coupon_codes',
  'payment_profile_id',
  'snap_day',
] as const;

// `next_product_id`: "" cancels a pending delayed change; an id schedules one;
// null, like a missing key, asks for nothing.
const nextProductId = z.unknown().transform((v, ctx): number | 'cancel' | undefined => {
  if (v === undefined || v === null) return undefined;
  if (v === '') return 'cancel';
  const id = wireId.safeParse(v);
  if (id.success) return id.data;
  ctx.addIssue({ code: 'custom', message: 'must be a product id, or "" to cancel a delayed product change.' });
  return z.NEVER;
});

/**
 * The fields of `{"subscription":{...}}` on update: `credit_card_attributes` replaces the
 * card, `next_billing_at` changes the billing date, and `product_handle` or `product_id` changes the
 * product without proration, now or (with `product_change_delayed`) at the next renewal;
 * `next_product_id: ""` cancels a delayed change. Unknown keys are ignored.
 */
export const updateSubscriptionFields = z
  .object(
    {
      credit_card_attributes: creditCardAttributesFields.nullish(),
      next_billing_at: wireTimestampInput.nullish(),
      payment_collection_method: wireText.nullish(),
      product_handle: wireText.nullish(),
      product_id: wireId.nullish(),
      product_change_delayed: wireBoolean.nullish(),
      next_product_id: nextProductId.optional(),
      components: z.unknown().optional(),
      coupon_code: z.unknown().optional(),
      coupon_codes: z.unknown().optional(),
      payment_profile_id: z.unknown().optional(),
      snap_day: z.unknown().optional(),
    },
    { error: 'must be an object.' },
  )
  .superRefine((s, ctx) => {
    for (const key of UNSUPPORTED_UPDATE_FIELDS) {
      if (isGiven(s[key]))
        ctx.addIssue({ code: 'custom', path: [key], message: 'cannot be changed here by this server yet.' });
    }
    const namesProduct = isGiven(s.product_handle) || s.product_id != null;
    if (s.next_product_id !== undefined && namesProduct) {
      ctx.addIssue({
        code: 'custom',
        path: ['next_product_id'],
        message: 'cannot be combined with product_handle or product_id.',
      });
    }
    if (s.product_change_delayed === true && !namesProduct && s.next_product_id === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['product_change_delayed'],
        message: 'needs a product_handle or product_id to change to.',
      });
    }
  })
  .transform((s): SubscriptionUpdate => {
    const delayed = s.product_change_delayed === true;
    let productChange: SubscriptionProductChange | undefined;
    if (s.next_product_id === 'cancel') productChange = { delayed: true, productId: null };
    else if (s.next_product_id !== undefined) productChange = { productId: s.next_product_id, delayed: true };
    else if (s.product_id != null) productChange = { productId: s.product_id, delayed };
    else if (isGiven(s.product_handle)) productChange = { productHandle: s.product_handle as string, delayed };
    return {
      ...(s.credit_card_attributes == null ? {} : { creditCard: s.credit_card_attributes }),
      ...(s.next_billing_at == null ? {} : { nextBillingAt: s.next_billing_at }),
      ...(productChange === undefined ? {} : { productChange }),
      ...(s.payment_collection_method == null || s.payment_collection_method === ''
        ? {}
        : { paymentCollectionMethod: s.payment_collection_method }),
    };
  });

/** `PUT` or `POST /subscriptions/{id}.json`: body `{"subscription":{credit_card_attributes?, next_billing_at?, product_handle?, ...}}`. */
export const updateSubscriptionRequest = defineWireRequest('subscription', updateSubscriptionFields);

/**
 * The fields of a cancellation (`DELETE /subscriptions/{id}.json`, body optional):
 * `cancellation_message`, `reason_code`, and `cancel_at_end_of_period` as a flag (`1`, `"1"`, `true`).
 */
export const cancelSubscriptionFields = z
  .object(
    {
      cancellation_message: wireText.nullish(),
      reason_code: wireText.nullish(),
      cancel_at_end_of_period: wireBoolean.nullish(),
    },
    { error: 'must be an object.' },
  )
  .transform(
    (c): CancelInput => ({
      ...(c.cancellation_message === undefined ? {} : { cancellationMessage: c.cancellation_message }),
      ...(c.reason_code === undefined ? {} : { reasonCode: c.reason_code }),
      ...(c.cancel_at_end_of_period == null ? {} : { cancelAtEndOfPeriod: c.cancel_at_end_of_period }),
    }),
  );

/** `DELETE /subscriptions/{id}.json`: optional body `{"subscription":{cancellation_message?, cancel_at_end_of_period?}}`. */
export const cancelSubscriptionRequest = defineWireRequest('subscription', cancelSubscriptionFields);

/** The fields of a delayed cancellation: `cancellation_message` and `reason_code`. */
export const delayedCancelFields = z
  .object(
    { cancellation_message: wireText.nullish(), reason_code: wireText.nullish() },
    { error: 'must be an object.' },
  )
  .transform(
    (c): Omit<CancelInput, 'cancelAtEndOfPeriod'> => ({
      ...(c.cancellation_message === undefined ? {} : { cancellationMessage: c.cancellation_message }),
      ...(c.reason_code === undefined ? {} : { reasonCode: c.reason_code }),
    }),
  );

/** `POST /subscriptions/{id}/delayed_cancel.json`: optional body `{"subscription":{cancellation_message?}}`. */
export const delayedCancelRequest = defineWireRequest('subscription', delayedCancelFields);

/** The fields of a hold: `automatically_resume_at`, a timestamp or date, or null for an open hold. */
export const holdFields = z
  .object({ automatically_resume_at: wireTimestampInput.nullish() }, { error: 'must be an object.' })
  .transform(
    (h): HoldInput => (h.automatically_resume_at == null ? {} : { automaticallyResumeAt: h.automatically_resume_at }),
  );

/** `POST /subscriptions/{id}/hold.json`: optional body `{"hold":{automatically_resume_at?}}`. */
export const holdRequest = defineWireRequest('hold', holdFields);

/**
 * Reactivation parameters, which the service takes unwrapped in the query or the body
 * (`include_trial=1`, `preserve_balance=1`, `resume=true` or `resume[require_resume]=true`).
 * `coupon_code` is refused while the engine cannot apply one here.
 */
export const reactivateParams = z
  .object(
    {
      include_trial: wireBoolean.nullish(),
      preserve_balance: wireBoolean.nullish(),
      resume: z.unknown().optional(),
      coupon_code: z.unknown().optional(),
    },
    { error: 'must be an object.' },
  )
  .superRefine((r, ctx) => {
    if (isGiven(r.coupon_code))
      ctx.addIssue({ code: 'custom', path: ['coupon_code'], message: 'is not supported by this server yet.' });
    const resume = r.resume;
    if (resume !== undefined && resume !== null && !isPlainObject(resume) && !wireBoolean.safeParse(resume).success) {
      ctx.addIssue({ code: 'custom', path: ['resume'], message: 'must be true or false.' });
    }
    if (
      isPlainObject(resume) &&
      resume.require_resume != null &&
      !wireBoolean.safeParse(resume.require_resume).success
    ) {
      ctx.addIssue({ code: 'custom', path: ['resume', 'require_resume'], message: 'must be true or false.' });
    }
  })
  .transform((r): ReactivateInput => {
    const resume = r.resume;
    // `resume[require_resume]=true` both asks to resume and forbids falling back to a plain reactivation.
    const requireResume =
      isPlainObject(resume) && resume.require_resume != null && wireBoolean.parse(resume.require_resume);
    const wantsResume = requireResume || (resume != null && !isPlainObject(resume) && wireBoolean.parse(resume));
    return {
      ...(r.include_trial == null ? {} : { includeTrial: r.include_trial }),
      ...(r.preserve_balance == null ? {} : { preserveBalance: r.preserve_balance }),
      ...(wantsResume ? { resume: true } : {}),
      ...(requireResume ? { requireResume: true } : {}),
    };
  });

/**
 * Re-shapes the engine's `not_found` for the product a subscription update names: an unknown
 * product in the body is the body's fault (422, with the signup's message "Product with API Handle
 * 'x' does not exist for this site."), not a missing resource of the path (404). Any other error,
 * a missing subscription included, is returned unchanged.
 */
export function asProductChangeError(error: unknown, change: SubscriptionProductChange): unknown {
  if (!(error instanceof BillingError) || error.code !== 'not_found' || error.data.what !== 'Product') return error;
  if ('productHandle' in change && change.productHandle !== undefined) {
    return invalid(`Product with API Handle '${change.productHandle}' does not exist for this site.`, 'product_handle');
  }
  return invalid(`Product with id '${String(change.productId)}' does not exist for this site.`, 'product_id');
}
