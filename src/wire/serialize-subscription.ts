import { toMajorString } from '../domain/money/index.js';
import type { ProductFamilyRecord } from '../ports/storage.js';
import { prepaidConfigurationOf, shownCollectionMethod } from '../services/prepaid-configuration.js';
import type { SubscriptionView } from '../services/subscription-service.js';
import { type PrepaidConfigurationJson, prepaidConfigurationJson } from './prepaid-wire.js';
import { type CreditCardJson, creditCardJson } from './serialize-credit-card.js';
import { type CustomerJson, customerJson } from './serialize-customer.js';
import { type ProductJson, productJson } from './serialize-product.js';
import { type WireContext, wireState, wireTimestamp } from './wire-context.js';

/**
 * A subscription as the service writes it (inside `{"subscription":{...}}`): integer
 * `*_in_cents`, timestamps as strings with the site's offset, `signup_revenue` as a decimal
 * string, the customer, the product at the subscriber's pinned version, and `credit_card` only
 * when there is a card (an object without `payment_type` would fail the official SDK).
 */
export interface SubscriptionJson {
  readonly id: number;
  /** The merchant's own id of the subscription, or null. */
  readonly reference: string | null;
  readonly state: string;
  /** Equals `state` in API reads; it differs only in webhooks. */
  readonly previous_state: string;
  readonly balance_in_cents: number;
  readonly product_price_in_cents: number;
  readonly product_version_number: number;
  /** The price point the subscriber is on (its terms are the pinned version's); null for records from before price points. */
  readonly product_price_point_id: number | null;
  readonly product_price_point_handle: string | null;
  readonly product_price_point_type: string | null;
  readonly current_period_started_at: string | null;
  readonly current_period_ends_at: string | null;
  readonly next_assessment_at: string | null;
  readonly activated_at: string | null;
  readonly trial_started_at: string | null;
  readonly trial_ended_at: string | null;
  readonly expires_at: string | null;
  readonly created_at: string | null;
  readonly updated_at: string | null;
  readonly canceled_at: string | null;
  readonly cancellation_message: string | null;
  readonly cancellation_method: string | null;
  readonly cancel_at_end_of_period: boolean;
  readonly delayed_cancel_at: string | null;
  readonly signup_payment_id: number | null;
  readonly signup_revenue: string;
  /** The site's currency (ISO 4217): a site has exactly one, and every subscription is billed in it. */
  readonly currency: string;
  /** `automatic`, `remittance` or `prepaid` (never the older `invoice`, which is read as remittance). */
  readonly payment_collection_method: 'automatic' | 'remittance' | 'prepaid';
  /** A prepaid subscription's configuration; present only on prepaid subscriptions. */
  readonly prepaid_configuration?: PrepaidConfigurationJson;
  /**
   * What the subscription's prepayments still hold (its prepayment account, as the account
   * balances show it), on every subscription: 0 without prepayments.
   */
  readonly prepayment_balance_in_cents?: number;
  /** The offer the subscription was signed up with (`offer_id` at signup), or null. */
  readonly offer_id: number | null;
  readonly coupon_code: string | null;
  readonly coupon_codes: readonly string[];
  /** The product a delayed product change moves to at the next renewal, or null. */
  readonly next_product_id: number | null;
  readonly referral_code: string | null;
  /** The referral code under the spec's name (`ref`); present only when the subscription has one. */
  readonly ref?: string;
  readonly customer: CustomerJson;
  readonly product: ProductJson;
  readonly credit_card?: CreditCardJson;
}

/** The fields of a subscription, unwrapped. Pass the product's family to have it written in full. */
export function subscriptionJson(
  view: SubscriptionView,
  context: WireContext,
  family?: ProductFamilyRecord,
): SubscriptionJson {
  const s = view.subscription;
  const state = wireState(s.state, context.compat);
  return {
    id: s.id,
    // Records written before references existed may lack the field.
    reference: s.reference ?? null,
    state,
    previous_state: state,
    balance_in_cents: view.balanceInCents,
    product_price_in_cents: view.product.version.terms.priceInCents,
    product_version_number: s.productVersion,
    product_price_point_id: view.product.pricePoint?.id ?? view.product.version.pricePointId ?? null,
    product_price_point_handle: view.product.pricePoint?.handle ?? null,
    product_price_point_type: view.product.pricePoint?.type ?? null,
    current_period_started_at: wireTimestamp(s.currentPeriodStartedAt, context),
    current_period_ends_at: wireTimestamp(s.currentPeriodEndsAt, context),
    next_assessment_at: wireTimestamp(s.nextAssessmentAt, context),
    activated_at: wireTimestamp(s.activatedAt, context),
    trial_started_at: wireTimestamp(s.trialStartedAt, context),
    trial_ended_at: wireTimestamp(s.trialEndedAt, context),
    expires_at: wireTimestamp(s.expiresAt, context),
    created_at: wireTimestamp(s.createdAt, context),
    updated_at: wireTimestamp(s.updatedAt, context),
    canceled_at: wireTimestamp(s.canceledAt, context),
    cancellation_message: s.cancellationMessage,
    cancellation_method: s.cancellationMethod,
    cancel_at_end_of_period: s.cancelAtEndOfPeriod,
    delayed_cancel_at: wireTimestamp(s.delayedCancelAt, context),
    signup_payment_id: s.signupPaymentId,
    signup_revenue: toMajorString(s.signupRevenueInCents, context.currency),
    currency: context.currency,
    payment_collection_method: shownCollectionMethod(s),
    ...prepaidField(s),
    ...(view.prepaymentBalanceInCents === undefined
      ? {}
      : { prepayment_balance_in_cents: view.prepaymentBalanceInCents }),
    // Recorded at signup under `OFFER_ID_DATA_KEY` (offer-service.ts).
    offer_id: typeof s.data.offerId === 'number' ? s.data.offerId : null,
    coupon_code: s.couponCodes[0] ?? null,
    coupon_codes: [...s.couponCodes],
    next_product_id: typeof s.data.nextProductId === 'number' ? s.data.nextProductId : null,
    referral_code: s.referralCode,
    ...(s.referralCode === null ? {} : { ref: s.referralCode }),
    customer: customerJson(view.customer, context),
    product: productJson(view.product, context, family),
    ...(view.paymentProfile === null ? {} : { credit_card: creditCardJson(view.paymentProfile) }),
  };
}

/** `{"subscription":{...}}`, the body of a subscription create or read and the item of a list. */
export function serializeSubscription(
  view: SubscriptionView,
  context: WireContext,
  family?: ProductFamilyRecord,
): { subscription: SubscriptionJson } {
  return { subscription: subscriptionJson(view, context, family) };
}

function prepaidField(subscription: SubscriptionView['subscription']): {
  prepaid_configuration?: PrepaidConfigurationJson;
} {
  const config = prepaidConfigurationOf(subscription);
  return config === undefined ? {} : { prepaid_configuration: prepaidConfigurationJson(config) };
}
