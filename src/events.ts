/**
 * Event keys the engine records and the shape listeners receive. Every event is
 * written to the outbox in the transaction of the change that caused it; in-process listeners
 * hear it only after that transaction commits.
 */

/** Event keys, in the service's spelling. */
export const EVENT_KEYS = [
  'signup_success',
  'signup_failure',
  'renewal_success',
  'renewal_failure',
  'payment_success',
  'payment_failure',
  'billing_date_change',
  'subscription_state_change',
  'subscription_product_change',
  'subscription_card_update',
  'expiring_card',
  'customer_create',
  'customer_update',
  'component_allocation_change',
  'metered_usage',
  'upgrade_downgrade_success',
  'upgrade_downgrade_failure',
  'refund_success',
  'refund_failure',
  'upcoming_renewal_notice',
  'trial_end_notice',
  'expiration_date_change',
  'dunning_step_reached',
  'delayed_subscription_creation_success',
  'site_update',
  'invoice_issued',
  'invoice_voided',
  'credit_note_created',
  'test',
] as const;

/** One event key. */
export type EventKey = (typeof EVENT_KEYS)[number];

/** An event as listeners and the outbox see it. */
export interface BillingEvent {
  /** The outbox id: increases with commit order within a site. */
  readonly id: number;
  readonly siteId: number;
  readonly key: EventKey;
  readonly subjectType: string;
  readonly subjectId: number;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly occurredAt: Date;
}

/** The listener map of the engine's emitter: one entry per key. */
export type BillingEventMap = { [K in EventKey]: BillingEvent };
