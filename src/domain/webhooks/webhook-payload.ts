import type { CustomerRecord, TransactionRecord } from '../../ports/storage.js';
import { encodeWebhookBody, type FormInput, type FormInputValue } from '../signing/index.js';
import {
  creditCardFields,
  customerFields,
  type ProductSnapshot,
  productFields,
  type SubscriptionSnapshot,
  siteFields,
  subscriptionFields,
  transactionFields,
  type WebhookPayloadContext,
  webhookState,
  webhookTime,
} from './payload-shapes.js';

/** The part of an outbox event a payload is built from (a `BillingEvent` fits). */
export interface WebhookEventInput {
  /** The outbox id: written as `payload[event_id]`. */
  readonly id: number;
  readonly key: string;
  readonly subjectType: string;
  readonly subjectId: number;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly occurredAt: Date;
}

/** The records a payload needs, loaded by the caller (see {@link webhookPayloadNeeds}). */
export interface WebhookSubjects {
  readonly subscription?: SubscriptionSnapshot | undefined;
  readonly customer?: CustomerRecord | undefined;
  readonly transaction?: TransactionRecord | undefined;
  /** Products named by the event (previous and target products), at their current version. */
  readonly products?: ReadonlyMap<number, ProductSnapshot>;
}

/** Which records {@link buildWebhookPayload} wants for an event; anything missing falls back to the event's own data. */
export interface WebhookPayloadNeeds {
  readonly subscriptionId?: number;
  readonly customerId?: number;
  readonly transactionId?: number;
  readonly productIds: readonly number[];
}

/**
 * Newer events whose payload is flat and already in the service's shape when recorded, with an
 * ISO 8601 UTC `timestamp`; they get only `event_id` appended.
 */
const FLAT_EVENTS: ReadonlySet<string> = new Set([
  'component_allocation_change',
  'metered_usage',
  'refund_success',
  'refund_failure',
  // Document events (issue #17): the invoice or credit note in the service's invoice shape.
  'invoice_issued',
  'invoice_voided',
  'credit_note_created',
]);

function idOf(value: unknown): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const id = (value as Record<string, unknown>).id;
  return typeof id === 'number' && Number.isSafeInteger(id) ? id : undefined;
}

function objectAt(payload: Readonly<Record<string, unknown>>, key: string): Readonly<Record<string, unknown>> {
  const value = payload[key];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The records to load for an event's payload: its subject, a payment's ledger line, named products. */
export function webhookPayloadNeeds(event: WebhookEventInput): WebhookPayloadNeeds {
  if (FLAT_EVENTS.has(event.key)) return { productIds: [] };
  const productIds = ['previous_product', 'target_product']
    .map((key) => idOf(event.payload[key]))
    .filter((id): id is number => id !== undefined);
  const transactionId = event.key.startsWith('payment_') ? idOf(event.payload.transaction) : undefined;
  return {
    ...(event.subjectType === 'subscription' ? { subscriptionId: event.subjectId } : {}),
    ...(event.subjectType === 'customer' ? { customerId: event.subjectId } : {}),
    ...(transactionId === undefined ? {} : { transactionId }),
    productIds,
  };
}

/**
 * Copies an event's JSON-like data into form input: Dates become webhook timestamps, subscription
 * states take the compat spelling, anything else non-plain becomes its string.
 */
function formValue(value: unknown, context: WebhookPayloadContext, key = ''): FormInputValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') {
    return key === 'state' || key === 'previous_state' ? webhookState(value, context) : value;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return value;
  if (value instanceof Date) return webhookTime(value, context);
  if (Array.isArray(value)) return value.map((item) => formValue(item, context));
  if (typeof value === 'object') {
    const out: Record<string, FormInputValue> = {};
    for (const [k, v] of Object.entries(value)) out[k] = formValue(v, context, k);
    return out;
  }
  return String(value);
}

function passThrough(
  payload: Readonly<Record<string, unknown>>,
  context: WebhookPayloadContext,
): Record<string, FormInputValue> {
  return formValue(payload, context) as Record<string, FormInputValue>;
}

/** An ISO 8601 instant written as the newer events do: UTC, whole seconds, `Z`. */
function isoUtc(value: unknown): FormInputValue {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') : null;
}

/** A date the event recorded as ISO text (or a Date), re-written as a webhook timestamp. */
function eventTime(value: unknown, context: WebhookPayloadContext): string | null {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) ? webhookTime(new Date(ms), context) : null;
}

function productOr(subjects: WebhookSubjects, recorded: unknown, context: WebhookPayloadContext): FormInputValue {
  const id = idOf(recorded);
  const snapshot = id === undefined ? undefined : subjects.products?.get(id);
  return snapshot ? productFields(snapshot, context) : formValue(recorded, context);
}

/** The `payload[...]` entries of an event about a subscription, before `site` and `event_id`. */
function subscriptionEvent(
  event: WebhookEventInput,
  snapshot: SubscriptionSnapshot,
  subjects: WebhookSubjects,
  context: WebhookPayloadContext,
): Record<string, FormInputValue> {
  const recorded = event.payload;
  const recordedSubscription = objectAt(recorded, 'subscription');
  const state = typeof recordedSubscription.state === 'string' ? recordedSubscription.state : undefined;
  const previousState =
    event.key === 'subscription_state_change' && typeof recordedSubscription.previous_state === 'string'
      ? recordedSubscription.previous_state
      : undefined;
  const subscription: Record<string, FormInputValue> = {
    ...subscriptionFields(snapshot, context, {
      ...(state === undefined ? {} : { state }),
      ...(previousState === undefined ? {} : { previousState }),
    }),
  };
  const out: Record<string, FormInputValue> = {};
  switch (event.key) {
    case 'billing_date_change':
      subscription.previous_billing_date = eventTime(recordedSubscription.previous_billing_date, context);
      out.subscription = subscription;
      break;
    case 'subscription_product_change':
      out.previous_product = productOr(subjects, recorded.previous_product, context);
      out.subscription = subscription;
      break;
    case 'upgrade_downgrade_success':
    case 'upgrade_downgrade_failure':
      out.subscription = subscription;
      out.previous_product = productOr(subjects, recorded.previous_product, context);
      out.target_product = productOr(subjects, recorded.target_product, context);
      break;
    case 'subscription_card_update':
      out.subscription = subscription;
      out.product = productFields(snapshot.product, context);
      out.previous_payment_profile = formValue(recorded.previous_payment_profile, context);
      out.updated_payment_profile = snapshot.paymentProfile
        ? creditCardFields(snapshot.paymentProfile)
        : formValue(recorded.updated_payment_profile, context);
      break;
    case 'upcoming_renewal_notice':
    case 'trial_end_notice':
      out.subscription = subscription;
      out.customer = customerFields(snapshot.customer, context);
      out.product = productFields(snapshot.product, context);
      out.payment_profile = snapshot.paymentProfile ? creditCardFields(snapshot.paymentProfile) : null;
      out.email_sent = formValue(recorded.email_sent ?? false, context);
      out.estimated_renewal_amount_in_cents = formValue(recorded.estimated_renewal_amount_in_cents, context);
      out.message = formValue(recorded.message, context);
      break;
    case 'payment_success':
    case 'payment_failure':
      out.subscription = subscription;
      out.transaction = subjects.transaction
        ? transactionFields(subjects.transaction, context)
        : formValue(recorded.transaction, context);
      break;
    default:
      out.subscription = subscription;
  }
  // Whatever else the event recorded (a failure message, the dunning step, an attempt) follows as is.
  for (const [key, value] of Object.entries(recorded)) {
    if (!(key in out) && key !== 'subscription' && key !== 'site') out[key] = formValue(value, context, key);
  }
  return out;
}

/**
 * The `payload` of an event's webhook in the service's shape:
 * subscription events carry the whole subscription (customer, product and card nested) plus what
 * the event adds (`previous_product`, `transaction`, ...); customer events the customer; the newer
 * flat events (`component_allocation_change`, `metered_usage`, `refund_*`) their recorded fields
 * with an ISO 8601 UTC `timestamp`. Classic events add `site` (`id`, `subdomain`), and every
 * payload ends with `event_id`, the outbox id. A record that could not be loaded falls back to what
 * the event recorded, so building never fails.
 */
export function buildWebhookPayload(
  event: WebhookEventInput,
  subjects: WebhookSubjects,
  context: WebhookPayloadContext,
): FormInput {
  let body: Record<string, FormInputValue>;
  if (FLAT_EVENTS.has(event.key)) {
    body = passThrough(event.payload, context);
    if ('timestamp' in body) body.timestamp = isoUtc(event.payload.timestamp);
  } else {
    if (subjects.subscription && event.subjectType === 'subscription') {
      body = subscriptionEvent(event, subjects.subscription, subjects, context);
    } else if (subjects.customer && event.subjectType === 'customer') {
      body = { customer: customerFields(subjects.customer, context) };
    } else {
      body = passThrough(event.payload, context);
    }
    delete body.site;
    body.site = siteFields(context);
  }
  delete body.event_id;
  // `event_id` goes last, as in the service's bodies.
  body.event_id = event.id;
  return body;
}

/**
 * The exact form body of a webhook: `id=<webhook id>&event=<key>&payload[...]...&payload[event_id]=...`.
 * Built once when the webhook is created and sent byte for byte on every attempt and replay, so its
 * signature never changes for a given shared key.
 */
export function webhookBody(webhookId: number, eventKey: string, payload: FormInput): string {
  return encodeWebhookBody({ id: webhookId, event: eventKey, payload });
}

/** The documented test webhook body: `id=<id>&event=test&payload[chargify]=testing`. */
export function testWebhookBody(webhookId: number): string {
  return encodeWebhookBody({ id: webhookId, event: 'test', payload: { chargify: 'testing' } });
}
