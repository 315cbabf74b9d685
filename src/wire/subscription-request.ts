import { z } from 'zod';
import type { CreateSubscriptionInput } from '../services/subscription-service.js';
import { creditCardAttributesFields } from './credit-card-request.js';
import { customerFields } from './customer-request.js';
import { defineWireRequest } from './wire-request.js';
import { wireId, wireSnapDay, wireText, wireTimestampInput } from './wire-scalars.js';

/**
 * Spec fields the engine cannot honour yet. They are refused (422) rather than ignored: dropping a
 * component silently would bill the customer something other than what was asked.
 */
const UNSUPPORTED_SIGNUP_FIELDS = ['components', 'payment_profile_attributes', 'payment_profile_id'] as const;

/** The coupon codes of a signup, `coupon_code` first, each once (letter case does not make a new code). */
function signupCodes(code: string | null | undefined, codes: readonly string[] | null | undefined): string[] {
  const all = [code, ...(codes ?? [])].filter((c): c is string => typeof c === 'string' && c.trim() !== '');
  const seen = new Set<string>();
  return all.filter((c) => {
    const key = c.trim().toUpperCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** True when a field carries something: not missing, null, blank, or an empty list or object. */
export function isGiven(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/**
 * The fields of `{"subscription":{...}}` on create (spec §4 `POST /subscriptions.json`), read into
 * a {@link CreateSubscriptionInput}: `product_handle` or `product_id`, `customer_id` or
 * `customer_attributes`, `credit_card_attributes`, `next_billing_at`, `coupon_code` and
 * `coupon_codes[]`, `metafields` (an object of field name to value) and `snap_day` (1-28 or
 * `end`). Unknown keys are ignored.
 */
export const createSubscriptionFields = z
  .object(
    {
      product_handle: wireText.nullish(),
      product_id: wireId.nullish(),
      customer_id: wireId.nullish(),
      customer_attributes: customerFields.nullish(),
      credit_card_attributes: creditCardAttributesFields.nullish(),
      next_billing_at: wireTimestampInput.nullish(),
      payment_collection_method: wireText.nullish(),
      coupon_code: wireText.nullish(),
      coupon_codes: z.array(wireText, { error: 'must be a list of coupon codes.' }).nullish(),
      metafields: z.record(z.string(), wireText, { error: 'must be an object of field names and values.' }).nullish(),
      snap_day: wireSnapDay.nullish(),
      components: z.unknown().optional(),
      payment_profile_attributes: z.unknown().optional(),
      payment_profile_id: z.unknown().optional(),
    },
    { error: 'must be an object.' },
  )
  .superRefine((s, ctx) => {
    for (const key of UNSUPPORTED_SIGNUP_FIELDS) {
      if (isGiven(s[key]))
        ctx.addIssue({ code: 'custom', path: [key], message: 'is not supported by this server yet.' });
    }
    if (s.payment_collection_method != null && s.payment_collection_method !== 'automatic') {
      ctx.addIssue({
        code: 'custom',
        path: ['payment_collection_method'],
        message: "must be 'automatic'; other collection methods are not supported by this server yet.",
      });
    }
  })
  .transform((s): CreateSubscriptionInput => {
    const [couponCode, ...couponCodes] = signupCodes(s.coupon_code, s.coupon_codes);
    return {
      ...(s.product_handle == null ? {} : { productHandle: s.product_handle }),
      ...(s.product_id == null ? {} : { productId: s.product_id }),
      ...(s.customer_id == null ? {} : { customerId: s.customer_id }),
      ...(s.customer_attributes == null ? {} : { customer: s.customer_attributes }),
      ...(s.credit_card_attributes == null ? {} : { creditCard: s.credit_card_attributes }),
      ...(s.next_billing_at == null ? {} : { nextBillingAt: s.next_billing_at }),
      ...(couponCode === undefined ? {} : { couponCode }),
      ...(couponCodes.length === 0 ? {} : { couponCodes }),
      ...(s.metafields == null || Object.keys(s.metafields).length === 0 ? {} : { metafields: s.metafields }),
      ...(s.snap_day == null ? {} : { snapDay: s.snap_day }),
    };
  });

/** `POST /subscriptions.json`: body `{"subscription":{...}}` (spec §4). */
export const createSubscriptionRequest = defineWireRequest('subscription', createSubscriptionFields);
