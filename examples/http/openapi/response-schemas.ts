/**
 * The response bodies of the main resources as zod schemas, written to match what the wire
 * serializers (`src/wire/serialize-*.ts`) produce. Each schema's type is checked against the
 * serializer's own `*Json` type at compile time (the `matches` lines at the end), so a field added
 * to a serializer and not here fails `tsc`. The `id` in `.meta()` makes each one a named component
 * of the OpenAPI document.
 */
import { z } from 'zod';
import type {
  ComponentJson,
  CouponJson,
  CreditCardJson,
  CustomerJson,
  EndpointJson,
  ErrorJson,
  ProductFamilyJson,
  ProductJson,
  SubscriptionJson,
  TransactionJson,
  WebhookJson,
} from '../wire-bridge.js';

/** A time as the service writes it: ISO 8601 with the site's UTC offset, or null when unset. */
const timestamp = z
  .string()
  .nullable()
  .meta({ description: "ISO 8601 with the site's UTC offset, e.g. 2026-01-15T07:00:00-05:00.", format: 'date-time' });

/** Whole minor units (cents); money is never a float on the wire. */
const cents = z.int().meta({ description: 'Integer minor units of the site currency.' });

const intervalUnit = z.enum(['day', 'month']);

export const productFamilySchema = z
  .object({
    id: z.int(),
    name: z.string(),
    handle: z.string(),
    description: z.string().nullable(),
    accounting_code: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'ProductFamily' });

export const customerSchema = z
  .object({
    id: z.int(),
    first_name: z.string(),
    last_name: z.string(),
    email: z.string(),
    reference: z.string().nullable(),
    organization: z.string().nullable(),
    phone: z.string().nullable(),
    address: z.string().nullable(),
    address_2: z.string().nullable(),
    city: z.string().nullable(),
    state: z.string().nullable(),
    zip: z.string().nullable(),
    country: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Customer' });

export const productSchema = z
  .object({
    id: z.int(),
    name: z.string(),
    handle: z.string(),
    description: z.string().nullable(),
    accounting_code: z.string().nullable(),
    price_in_cents: cents,
    interval: z.int(),
    interval_unit: intervalUnit,
    initial_charge_in_cents: cents.nullable(),
    initial_charge_after_trial: z.boolean(),
    trial_price_in_cents: cents.nullable(),
    trial_interval: z.int().nullable(),
    trial_interval_unit: intervalUnit.nullable(),
    expiration_interval: z.int().nullable(),
    expiration_interval_unit: intervalUnit.nullable(),
    request_credit_card: z.boolean(),
    require_credit_card: z.boolean(),
    taxable: z.boolean(),
    version_number: z.int(),
    product_version: z.int(),
    product_price_point_id: z.int().optional().meta({ description: "The price point this product's terms are from." }),
    product_price_point_handle: z.string().optional(),
    product_price_point_name: z.string().optional(),
    default_product_price_point_id: z.int().optional(),
    archived_at: timestamp,
    created_at: timestamp,
    updated_at: timestamp,
    product_family: z
      .union([productFamilySchema, z.object({ id: z.int() })])
      .meta({ description: 'The full family when the response has it, else just its id.' }),
  })
  .meta({ id: 'Product' });

export const creditCardSchema = z
  .object({
    id: z.int(),
    payment_type: z.literal('credit_card'),
    masked_card_number: z.string().meta({ description: 'Only ever the masked form, e.g. XXXX-XXXX-XXXX-1111.' }),
    card_type: z.string(),
    expiration_month: z.int(),
    expiration_year: z.int(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    current_vault: z.string(),
    vault_token: z.string(),
    customer_vault_token: z.string().nullable(),
    customer_id: z.int(),
    billing_address: z.string().nullable(),
    billing_address_2: z.string().nullable(),
    billing_city: z.string().nullable(),
    billing_state: z.string().nullable(),
    billing_zip: z.string().nullable(),
    billing_country: z.string().nullable(),
  })
  .meta({ id: 'CreditCard' });

export const subscriptionSchema = z
  .object({
    id: z.int(),
    state: z.string(),
    previous_state: z.string(),
    balance_in_cents: cents,
    product_price_in_cents: cents,
    product_version_number: z.int(),
    reference: z
      .string()
      .nullable()
      .meta({ description: "The merchant's own id of the subscription, unique per site." }),
    product_price_point_id: z.int().nullable(),
    product_price_point_handle: z.string().nullable(),
    product_price_point_type: z.string().nullable(),
    current_period_started_at: timestamp,
    current_period_ends_at: timestamp,
    next_assessment_at: timestamp,
    activated_at: timestamp,
    trial_started_at: timestamp,
    trial_ended_at: timestamp,
    expires_at: timestamp,
    created_at: timestamp,
    updated_at: timestamp,
    canceled_at: timestamp,
    cancellation_message: z.string().nullable(),
    cancellation_method: z.string().nullable(),
    cancel_at_end_of_period: z.boolean(),
    delayed_cancel_at: timestamp,
    signup_payment_id: z.int().nullable(),
    signup_revenue: z.string().meta({ description: 'A decimal string in major units, e.g. "10.00".' }),
    currency: z.string().meta({ description: "The site's currency (ISO 4217); a site has exactly one." }),
    payment_collection_method: z.enum(['automatic', 'remittance', 'prepaid']),
    prepaid_configuration: z
      .object({
        id: z.int(),
        initial_funding_amount_in_cents: z.int(),
        replenish_to_amount_in_cents: z.int().nullable(),
        auto_replenish: z.boolean(),
        replenish_threshold_amount_in_cents: z.int().nullable(),
      })
      .optional()
      .meta({ description: 'Present only on prepaid subscriptions.' }),
    prepayment_balance_in_cents: cents.optional().meta({
      description: "What the subscription's prepayments still hold (0 without prepayments); on every engine read.",
    }),
    offer_id: z.int().nullable().meta({ description: 'The offer the subscription was signed up with, or null.' }),
    coupon_code: z.string().nullable(),
    coupon_codes: z.array(z.string()).readonly(),
    next_product_id: z.int().nullable(),
    referral_code: z.string().nullable(),
    ref: z.string().optional(),
    customer: customerSchema,
    product: productSchema,
    credit_card: creditCardSchema.optional(),
  })
  .meta({ id: 'Subscription' });

export const componentSchema = z
  .object({
    id: z.int(),
    name: z.string(),
    handle: z.string().nullable(),
    kind: z.enum(['quantity_based_component', 'on_off_component', 'metered_component']),
    unit_name: z.string(),
    description: z.string().nullable(),
    taxable: z.boolean(),
    pricing_scheme: z.enum(['per_unit', 'volume', 'tiered', 'stairstep']),
    unit_price: z.string().nullable(),
    prices: z
      .array(
        z.object({
          component_id: z.int(),
          starting_quantity: z.int(),
          ending_quantity: z.int().nullable(),
          unit_price: z.string(),
        }),
      )
      .readonly(),
    product_family_id: z.int(),
    archived: z.boolean(),
    archived_at: timestamp,
    version: z.int(),
    created_at: timestamp,
    updated_at: timestamp,
    // The component's price points: its default (the pricing new allocations get) and how many it has.
    default_price_point_id: z.int().nullable().optional(),
    default_price_point_name: z.string().optional(),
    price_point_count: z.int().optional(),
  })
  .meta({ id: 'Component' });

export const couponSchema = z
  .object({
    id: z.int(),
    name: z.string(),
    code: z.string(),
    description: z.string().nullable(),
    discount_type: z.enum(['percent', 'amount']),
    percentage: z.string().nullable(),
    amount_in_cents: cents.nullable(),
    product_family_id: z.int(),
    product_family_name: z.string().optional(),
    recurring: z.boolean(),
    recurring_scheme: z.enum(['do_not_recur', 'recur_indefinitely', 'recur_with_duration']),
    duration_period_count: z.int().nullable(),
    allow_negative_balance: z.boolean(),
    stackable: z.boolean(),
    compounding_strategy: z.string(),
    conversion_limit: z.string().nullable(),
    start_date: timestamp,
    end_date: timestamp,
    archived_at: timestamp,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Coupon' });

export const transactionSchema = z
  .object({
    id: z.int(),
    transaction_type: z.enum(['charge', 'credit', 'adjustment', 'payment', 'refund', 'info']),
    type: z.string(),
    kind: z.string().nullable(),
    amount_in_cents: cents,
    memo: z.string(),
    success: z.boolean().nullable(),
    starting_balance_in_cents: cents,
    ending_balance_in_cents: cents,
    created_at: timestamp,
    subscription_id: z.int(),
    customer_id: z.int(),
    payment_id: z.int().nullable(),
    product_id: z.int().nullable(),
    component_id: z.int().nullable(),
    gateway_transaction_id: z.string().nullable(),
    refunded_amount_in_cents: cents,
  })
  .meta({ id: 'Transaction' });

export const endpointSchema = z
  .object({
    id: z.int(),
    url: z.string(),
    webhook_subscriptions: z.array(z.string()).readonly(),
    status: z.enum(['enabled', 'paused', 'disabled']),
    site_id: z.int(),
  })
  .meta({ id: 'WebhookEndpoint' });

export const webhookSchema = z
  .object({
    id: z.int(),
    event: z.string(),
    body: z.string().meta({ description: 'The exact form-encoded body that is sent.' }),
    signature: z.string(),
    signature_hmac_sha_256: z.string(),
    successful: z.boolean(),
    status: z.enum(['pending', 'successful', 'failed']),
    endpoint_id: z.int(),
    created_at: z.string(),
    accepted_at: z.string().nullable(),
    last_sent_at: z.string().nullable(),
    last_sent_url: z.string().nullable(),
    last_error_at: z.string().nullable(),
    last_error: z.string().nullable(),
  })
  .meta({ id: 'Webhook' });

/** The error bodies of the service; most errors are the first shape. */
export const errorBodySchema = z
  .union([
    z.object({ errors: z.array(z.string()).readonly() }),
    z.object({ errors: z.string() }),
    z.object({ error: z.string() }),
    z.object({ errors: z.record(z.string(), z.array(z.string()).readonly()).readonly() }),
    z.object({ errors: z.array(z.record(z.string(), z.union([z.string(), z.number()])).readonly()).readonly() }),
  ])
  .meta({ id: 'ErrorBody', description: 'A list of messages (most errors), a string, or a map of field to messages.' });

/** The plain-text body of a 401: `HTTP Basic: Access denied.` and a newline. */
export const accessDeniedSchema = z.string().meta({ id: 'AccessDenied', example: 'HTTP Basic: Access denied.\n' });

/** A resource wrapped in its key, as every single-resource body is (`{"customer":{...}}`). */
export function wrapped<K extends string, S extends z.ZodType>(key: K, schema: S) {
  return z.object({ [key]: schema } as { [P in K]: S });
}

// Compile-time checks that each schema describes exactly what its serializer returns.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Described = [
  Same<z.infer<typeof productFamilySchema>, ProductFamilyJson>,
  Same<z.infer<typeof customerSchema>, CustomerJson>,
  Same<z.infer<typeof productSchema>, ProductJson>,
  Same<z.infer<typeof creditCardSchema>, CreditCardJson>,
  Same<z.infer<typeof subscriptionSchema>, SubscriptionJson>,
  Same<z.infer<typeof componentSchema>, ComponentJson>,
  Same<z.infer<typeof couponSchema>, CouponJson>,
  Same<z.infer<typeof transactionSchema>, TransactionJson>,
  Same<z.infer<typeof endpointSchema>, EndpointJson>,
  Same<z.infer<typeof webhookSchema>, WebhookJson>,
  Same<z.infer<typeof errorBodySchema>, ErrorJson>,
];
/** Fails to compile when a serializer and its schema drift apart. */
export const SCHEMAS_MATCH_SERIALIZERS: Described = [true, true, true, true, true, true, true, true, true, true, true];
