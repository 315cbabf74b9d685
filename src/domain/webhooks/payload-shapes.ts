import type {
  CustomerRecord,
  PaymentProfileRecord,
  ProductFamilyRecord,
  ProductRecord,
  ProductVersionRecord,
  SubscriptionRecord,
  SubscriptionState,
  TransactionRecord,
} from '../../ports/storage.js';
import { toMajorString } from '../money/index.js';
import type { FormInput, FormInputValue } from '../signing/index.js';
import { formatWebhookTimestamp } from '../time/index.js';

/**
 * Which spellings a webhook uses where the spec and the hosted service differ: `spec`
 * writes `cancelled` and timestamps in the site's zone; `chargify` writes `canceled` and US Eastern
 * timestamps, as the hosted service's webhook documentation says it does.
 */
export type WebhookCompat = 'spec' | 'chargify';

/** The zone of webhook timestamps under `chargify` compatibility (the service writes them in US Eastern time). */
export const CHARGIFY_WEBHOOK_TIME_ZONE = 'America/New_York';

/** The site a webhook is about, and how to spell its values. */
export interface WebhookPayloadContext {
  readonly site: {
    readonly id: number;
    readonly subdomain: string;
    readonly currency: string;
    readonly timeZone: string;
  };
  readonly compat: WebhookCompat;
}

/** A product at one version, with its family when it was loaded. */
export interface ProductSnapshot {
  readonly product: ProductRecord;
  readonly version: ProductVersionRecord;
  readonly family?: ProductFamilyRecord | undefined;
}

/** A subscription with what its payload nests: customer, pinned product, card and balance. */
export interface SubscriptionSnapshot {
  readonly subscription: SubscriptionRecord;
  readonly balanceInCents: number;
  readonly customer: CustomerRecord;
  readonly product: ProductSnapshot;
  readonly paymentProfile: PaymentProfileRecord | null;
}

/** The zone webhook timestamps of this context are written in. */
export function webhookTimeZone(context: WebhookPayloadContext): string {
  return context.compat === 'chargify' ? CHARGIFY_WEBHOOK_TIME_ZONE : context.site.timeZone;
}

/** A timestamp in the webhook format (`2016-11-04 17:06:43 -0400`), or nil. */
export function webhookTime(instant: Date | null | undefined, context: WebhookPayloadContext): string | null {
  return instant ? formatWebhookTimestamp(instant, webhookTimeZone(context)) : null;
}

/** A subscription state in the context's spelling. */
export function webhookState(state: string, context: WebhookPayloadContext): string {
  return context.compat === 'chargify' && state === 'cancelled' ? 'canceled' : state;
}

/** `payload[site]`: the site's id and subdomain. */
export function siteFields(context: WebhookPayloadContext): FormInput {
  return { id: context.site.id, subdomain: context.site.subdomain };
}

/** A customer's fields, address flat, as the API writes them. */
export function customerFields(customer: CustomerRecord, context: WebhookPayloadContext): FormInput {
  return {
    id: customer.id,
    first_name: customer.firstName,
    last_name: customer.lastName,
    email: customer.email,
    reference: customer.reference,
    organization: customer.organization,
    phone: customer.phone,
    address: customer.address.address,
    address_2: customer.address.address2,
    city: customer.address.city,
    state: customer.address.state,
    zip: customer.address.zip,
    country: customer.address.country,
    created_at: webhookTime(customer.createdAt, context),
    updated_at: webhookTime(customer.updatedAt, context),
  };
}

/** A product's fields at the snapshot's version, with its family (in full when loaded). */
export function productFields(snapshot: ProductSnapshot, context: WebhookPayloadContext): FormInput {
  const { product, version, family } = snapshot;
  const terms = version.terms;
  return {
    id: product.id,
    name: terms.name,
    handle: product.handle,
    description: terms.description,
    accounting_code: terms.accountingCode,
    price_in_cents: terms.priceInCents,
    interval: terms.interval,
    interval_unit: terms.intervalUnit,
    initial_charge_in_cents: terms.initialChargeInCents,
    trial_price_in_cents: terms.trialPriceInCents,
    trial_interval: terms.trialInterval,
    trial_interval_unit: terms.trialIntervalUnit,
    expiration_interval: terms.expirationInterval,
    expiration_interval_unit: terms.expirationIntervalUnit,
    request_credit_card: terms.requestCreditCard,
    require_credit_card: terms.requireCreditCard,
    taxable: terms.taxable,
    version_number: version.version,
    archived_at: webhookTime(product.archivedAt, context),
    created_at: webhookTime(product.createdAt, context),
    updated_at: webhookTime(product.updatedAt, context),
    product_family:
      family !== undefined && family.id === product.familyId
        ? { id: family.id, name: family.name, handle: family.handle, description: family.description }
        : { id: product.familyId },
  };
}

/** A stored card's fields: only the masked number, never more of it. */
export function creditCardFields(profile: PaymentProfileRecord): FormInput {
  return {
    id: profile.id,
    payment_type: profile.paymentType,
    masked_card_number: `XXXX-XXXX-XXXX-${profile.lastFour}`,
    card_type: profile.cardType,
    expiration_month: profile.expirationMonth,
    expiration_year: profile.expirationYear,
    first_name: profile.firstName,
    last_name: profile.lastName,
    customer_id: profile.customerId,
    current_vault: profile.currentVault,
    vault_token: profile.vaultToken,
    customer_vault_token: profile.customerVaultToken,
    billing_address: profile.billingAddress.address,
    billing_address_2: profile.billingAddress.address2,
    billing_city: profile.billingAddress.city,
    billing_state: profile.billingAddress.state,
    billing_zip: profile.billingAddress.zip,
    billing_country: profile.billingAddress.country,
  };
}

/** A ledger line's fields, as the API's transaction shape. */
export function transactionFields(line: TransactionRecord, context: WebhookPayloadContext): FormInput {
  return {
    id: line.id,
    subscription_id: line.subscriptionId,
    customer_id: line.customerId,
    transaction_type: line.type,
    kind: line.kind,
    amount_in_cents: line.amountInCents,
    memo: line.memo,
    success: line.success,
    starting_balance_in_cents: line.startingBalanceInCents,
    ending_balance_in_cents: line.endingBalanceInCents,
    payment_id: line.paymentId,
    product_id: line.productId,
    gateway_transaction_id: line.gatewayTransactionId,
    created_at: webhookTime(line.createdAt, context),
  };
}

/**
 * A subscription's fields with its customer, product and card nested. `previousState` is the state
 * it left in a `subscription_state_change` (the API writes the current state there); `state`
 * overrides the stored state with the one the event recorded, since several events of one command
 * share one snapshot taken after the command.
 */
export function subscriptionFields(
  snapshot: SubscriptionSnapshot,
  context: WebhookPayloadContext,
  overrides: { readonly state?: SubscriptionState | string; readonly previousState?: string } = {},
): FormInput {
  const s = snapshot.subscription;
  const state = webhookState(overrides.state ?? s.state, context);
  const fields: Record<string, FormInputValue> = {
    id: s.id,
    state,
    previous_state: overrides.previousState === undefined ? state : webhookState(overrides.previousState, context),
    balance_in_cents: snapshot.balanceInCents,
    product_price_in_cents: snapshot.product.version.terms.priceInCents,
    product_version_number: s.productVersion,
    current_period_started_at: webhookTime(s.currentPeriodStartedAt, context),
    current_period_ends_at: webhookTime(s.currentPeriodEndsAt, context),
    next_assessment_at: webhookTime(s.nextAssessmentAt, context),
    activated_at: webhookTime(s.activatedAt, context),
    trial_started_at: webhookTime(s.trialStartedAt, context),
    trial_ended_at: webhookTime(s.trialEndedAt, context),
    expires_at: webhookTime(s.expiresAt, context),
    created_at: webhookTime(s.createdAt, context),
    updated_at: webhookTime(s.updatedAt, context),
    canceled_at: webhookTime(s.canceledAt, context),
    cancellation_message: s.cancellationMessage,
    cancellation_method: s.cancellationMethod,
    cancel_at_end_of_period: s.cancelAtEndOfPeriod,
    delayed_cancel_at: webhookTime(s.delayedCancelAt, context),
    signup_payment_id: s.signupPaymentId,
    signup_revenue: toMajorString(s.signupRevenueInCents, context.site.currency),
    // A snapshot recorded before the field existed has none: automatic, the column's default. A
    // prepaid subscription is one with a configuration in its data (services/prepaid-configuration.ts).
    payment_collection_method:
      s.data?.prepaidConfiguration != null ? 'prepaid' : (s.paymentCollectionMethod ?? 'automatic'),
    coupon_code: s.couponCodes[0] ?? null,
    coupon_codes: [...s.couponCodes],
    referral_code: s.referralCode,
    customer: customerFields(snapshot.customer, context),
    product: productFields(snapshot.product, context),
  };
  if (snapshot.paymentProfile !== null) fields.credit_card = creditCardFields(snapshot.paymentProfile);
  return fields;
}
