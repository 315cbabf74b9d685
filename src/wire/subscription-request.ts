import { z } from 'zod';
import type { SignupComponentInput } from '../services/component-billing.js';
import type { CreateSubscriptionInput } from '../services/subscription-service.js';
import { creditCardAttributesFields, paymentProfileImportFields } from './credit-card-request.js';
import { customPriceFields } from './custom-price-request.js';
import { customerFields } from './customer-request.js';
import { prepaidConfigurationFields } from './prepaid-wire.js';
import { defineWireRequest } from './wire-request.js';
import {
  wireBoolean,
  wireDecimal,
  wireId,
  wireIdOrHandle,
  wireSnapDay,
  wireText,
  wireTimestampInput,
} from './wire-scalars.js';

/**
 * Fields the engine cannot honour yet. They are refused (422) rather than ignored: dropping any of
 * them silently would bill the customer something other than what was asked, or at another time
 * (calendar billing, a prepaid plan, an imported period's start or a group's consolidated
 * billing).
 */
const UNSUPPORTED_SIGNUP_FIELDS = [
  'calendar_billing',
  'calendar_billing_first_charge',
  'previous_billing_at',
  'group',
] as const;

// A component field the engine cannot honour (a price point or a custom price would bill another
// price): refused when given. The check sits on the field, so it is reported beside other problems.
const unsupportedComponentField = z
  .unknown()
  .optional()
  .refine((v) => !isGiven(v), { message: 'is not supported by this server yet.' });

/**
 * A signup component's `component_id`: an id (a number or a string of digits), or a handle, which
 * the service writes `handle:<handle>` (a bare handle is taken as one too).
 */
const componentReference = z.unknown().transform((v, ctx): { componentId: number } | { handle: string } => {
  if (v === undefined || v === null || v === '') {
    ctx.addIssue({ code: 'custom', message: 'cannot be blank.' });
    return z.NEVER;
  }
  const id = wireId.safeParse(v);
  if (id.success) return { componentId: id.data };
  if (typeof v === 'string' && v.trim() !== '') {
    const text = v.trim();
    const handle = text.startsWith('handle:') ? text.slice('handle:'.length) : text;
    if (handle !== '') return { handle };
  }
  ctx.addIssue({ code: 'custom', message: 'must be a component id or handle:<handle>.' });
  return z.NEVER;
});

/**
 * One entry of the signup's `components[]`, read into a
 * {@link SignupComponentInput}: `component_id` (id or `handle:<handle>`), and `allocated_quantity`,
 * `quantity` or `unit_balance` passed on for the engine to pick by kind and check. `enabled` (the
 * SDK's on/off flag) counts as an allocated quantity of 1 or 0 when no quantity is given.
 */
export const signupComponentFields = z
  .object(
    {
      component_id: componentReference,
      allocated_quantity: wireDecimal.nullish(),
      quantity: wireDecimal.nullish(),
      unit_balance: wireDecimal.nullish(),
      enabled: wireBoolean.nullish(),
      price_point_id: wireIdOrHandle.nullish(),
      custom_price: unsupportedComponentField,
    },
    { error: 'must be an object.' },
  )
  .transform((c): SignupComponentInput => {
    const fromFlag = c.allocated_quantity == null && c.quantity == null && c.enabled != null;
    return {
      ...c.component_id,
      ...(c.allocated_quantity == null ? {} : { allocatedQuantity: c.allocated_quantity }),
      ...(fromFlag ? { allocatedQuantity: c.enabled ? 1 : 0 } : {}),
      ...(c.quantity == null ? {} : { quantity: c.quantity }),
      ...(c.unit_balance == null ? {} : { unitBalance: c.unit_balance }),
      ...(c.price_point_id == null ? {} : { pricePoint: c.price_point_id }),
    };
  });

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
 * The fields of `{"subscription":{...}}` on create (`POST /subscriptions.json`), read into
 * a {@link CreateSubscriptionInput}: `product_handle` or `product_id`, `customer_id`,
 * `customer_reference` or `customer_attributes`, `credit_card_attributes` or `payment_profile_id`
 * (an existing profile of the customer), `next_billing_at`, `initial_billing_at` (a delayed
 * signup), `expires_at`, `coupon_code` and
 * `coupon_codes[]`, `reference` (the merchant's own id), `metafields` (an object of field name to value), `snap_day` (1-28 or `end`),
 * `components[]` (see {@link signupComponentFields}) and `offer_id` (an offer instead of the product,
 * by id or `handle:<handle>`), `currency` (the site's, or the signup is refused). Unknown keys are ignored.
 */
export const createSubscriptionFields = z
  .object(
    {
      product_handle: wireText.nullish(),
      product_id: wireId.nullish(),
      product_price_point_id: wireId.nullish(),
      product_price_point_handle: wireText.nullish(),
      customer_id: wireId.nullish(),
      customer_attributes: customerFields.nullish(),
      credit_card_attributes: creditCardAttributesFields.nullish(),
      next_billing_at: wireTimestampInput.nullish(),
      payment_collection_method: wireText.nullish(),
      coupon_code: wireText.nullish(),
      coupon_codes: z.array(wireText, { error: 'must be a list of coupon codes.' }).nullish(),
      metafields: z.record(z.string(), wireText, { error: 'must be an object of field names and values.' }).nullish(),
      snap_day: wireSnapDay.nullish(),
      components: z.array(signupComponentFields, { error: 'must be a list of components.' }).nullish(),
      payment_profile_attributes: paymentProfileImportFields.nullish(),
      ref: wireText.nullish(),
      reference: wireText.nullish(),
      customer_reference: wireText.nullish(),
      payment_profile_id: wireId.nullish(),
      initial_billing_at: wireTimestampInput.nullish(),
      // The subscription's own terms (see custom-price-request.ts); an empty one says nothing.
      custom_price: z.preprocess((v) => (isGiven(v) ? v : undefined), customPriceFields.optional()),
      expires_at: wireTimestampInput.nullish(),
      calendar_billing: z.unknown().optional(),
      calendar_billing_first_charge: z.unknown().optional(),
      prepaid_configuration: prepaidConfigurationFields.nullish(),
      previous_billing_at: z.unknown().optional(),
      // An offer instead of the product fields: its id, or `handle:<handle>`.
      offer_id: wireIdOrHandle.nullish(),
      // Checked by the service against the site's one currency (see currency-prices.ts).
      currency: wireText.nullish(),
      group: z.unknown().optional(),
    },
    { error: 'must be an object.' },
  )
  .superRefine((s, ctx) => {
    for (const key of UNSUPPORTED_SIGNUP_FIELDS) {
      if (isGiven(s[key]))
        ctx.addIssue({ code: 'custom', path: [key], message: 'is not supported by this server yet.' });
    }
  })
  .transform((s): CreateSubscriptionInput => {
    const [couponCode, ...couponCodes] = signupCodes(s.coupon_code, s.coupon_codes);
    return {
      ...(s.product_handle == null ? {} : { productHandle: s.product_handle }),
      ...(s.product_id == null ? {} : { productId: s.product_id }),
      ...(s.product_price_point_id == null ? {} : { productPricePointId: s.product_price_point_id }),
      ...(s.product_price_point_handle == null || s.product_price_point_handle === ''
        ? {}
        : { productPricePointHandle: s.product_price_point_handle }),
      ...(s.custom_price == null ? {} : { customPrice: s.custom_price }),
      ...(s.customer_id == null ? {} : { customerId: s.customer_id }),
      ...(s.customer_reference == null || s.customer_reference.trim() === ''
        ? {}
        : { customerReference: s.customer_reference }),
      ...(s.payment_profile_id == null ? {} : { paymentProfileId: s.payment_profile_id }),
      ...(s.initial_billing_at == null || s.initial_billing_at === ''
        ? {}
        : { initialBillingAt: s.initial_billing_at }),
      ...(s.expires_at == null || s.expires_at === '' ? {} : { expiresAt: s.expires_at }),
      ...(s.customer_attributes == null ? {} : { customer: s.customer_attributes }),
      ...(s.credit_card_attributes == null ? {} : { creditCard: s.credit_card_attributes }),
      ...(s.payment_profile_attributes == null ? {} : { paymentProfile: s.payment_profile_attributes }),
      ...(s.ref == null || s.ref === '' ? {} : { ref: s.ref }),
      ...(s.reference == null ? {} : { reference: s.reference }),
      ...(s.next_billing_at == null ? {} : { nextBillingAt: s.next_billing_at }),
      // Checked by the service (one reading of the names, `invoice` included, for every caller).
      ...(s.payment_collection_method == null || s.payment_collection_method === ''
        ? {}
        : { paymentCollectionMethod: s.payment_collection_method }),
      ...(s.prepaid_configuration == null ? {} : { prepaidConfiguration: s.prepaid_configuration }),
      ...(s.offer_id == null ? {} : { offerId: s.offer_id }),
      ...(s.currency == null || s.currency.trim() === '' ? {} : { currency: s.currency }),
      ...(couponCode === undefined ? {} : { couponCode }),
      ...(couponCodes.length === 0 ? {} : { couponCodes }),
      ...(s.metafields == null || Object.keys(s.metafields).length === 0 ? {} : { metafields: s.metafields }),
      ...(s.snap_day == null ? {} : { snapDay: s.snap_day }),
      ...(s.components == null || s.components.length === 0 ? {} : { components: s.components }),
    };
  });

/** `POST /subscriptions.json`: body `{"subscription":{...}}`. */
export const createSubscriptionRequest = defineWireRequest('subscription', createSubscriptionFields);
