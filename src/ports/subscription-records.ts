/** Records and repository of subscriptions. Same conventions as `storage.ts`. */

import type { PageRequest } from './page-request.js';

/** Subscription states; the spec's spelling `cancelled` is canonical. */
export type SubscriptionState =
  | 'trialing'
  | 'active'
  | 'soft_failure'
  | 'past_due'
  | 'unpaid'
  | 'cancelled'
  | 'expired'
  | 'trial_ended'
  | 'on_hold'
  | 'suspended'
  | 'failed_to_create'
  | 'awaiting_signup';

/**
 * How a subscription's invoices are paid. `automatic`: the engine charges the payment profile when
 * an invoice is issued (renewal, allocation, migration, one-time charge) and dunning follows a
 * failure. `remittance`: the invoice is issued and left open for the customer to pay (an external
 * payment, a prepayment, or the invoice card-payment path); the engine never charges it by itself
 * and never starts dunning for it. The service's older spelling `invoice` is read as `remittance`.
 */
export type PaymentCollectionMethod = 'automatic' | 'remittance';

/** A subscription: customer, pinned product version, payment method, state and period. */
export interface SubscriptionRecord {
  readonly id: number;
  readonly siteId: number;
  readonly customerId: number;
  readonly productId: number;
  readonly productVersion: number;
  /** The merchant's own id of the subscription; unique per site when present. */
  readonly reference: string | null;
  readonly paymentProfileId: number | null;
  /** Whether the engine charges its invoices or leaves them open for the customer to pay. */
  readonly paymentCollectionMethod: PaymentCollectionMethod;
  readonly state: SubscriptionState;
  /** Periods are computed from this anchor and an index, never chained (no drift). */
  readonly periodAnchorAt: Date;
  readonly periodIndex: number;
  readonly currentPeriodStartedAt: Date;
  readonly currentPeriodEndsAt: Date;
  /** When billing next happens; null when nothing is scheduled (canceled, expired). */
  readonly nextAssessmentAt: Date | null;
  readonly trialStartedAt: Date | null;
  readonly trialEndedAt: Date | null;
  readonly activatedAt: Date | null;
  readonly canceledAt: Date | null;
  readonly expiresAt: Date | null;
  readonly delayedCancelAt: Date | null;
  readonly cancelAtEndOfPeriod: boolean;
  readonly cancellationMessage: string | null;
  readonly cancellationMethod: string | null;
  readonly signupPaymentId: number | null;
  readonly signupRevenueInCents: number;
  readonly couponCodes: readonly string[];
  readonly referralCode: string | null;
  /** Extension document for lifecycle details (dunning attempt, pending product change, ...). */
  readonly data: Readonly<Record<string, unknown>>;
  readonly version: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Date fields a subscription list can filter and sort on. */
export type SubscriptionDateField =
  | 'current_period_ends_at'
  | 'current_period_starts_at'
  | 'created_at'
  | 'activated_at'
  | 'canceled_at'
  | 'expires_at'
  | 'trial_started_at'
  | 'trial_ended_at'
  | 'updated_at'
  | 'next_assessment_at';

/** Filter and order of a subscription list. Date bounds are inclusive. */
export interface SubscriptionFilter {
  readonly states?: readonly SubscriptionState[];
  readonly productId?: number;
  readonly customerId?: number;
  /** Only subscriptions whose default payment profile is this one. */
  readonly paymentProfileId?: number;
  /** Only subscriptions whose `couponCodes` contain this code. */
  readonly couponCode?: string;
  /** Only these ids (e.g. from a metadata filter); an empty list matches nothing. */
  readonly ids?: readonly number[];
  readonly dateField?: SubscriptionDateField;
  readonly start?: Date;
  readonly end?: Date;
  /** Sort key; default `created_at` (then id). Nulls sort last. */
  readonly sort?: SubscriptionDateField;
  /** Default `desc` (newest first). */
  readonly direction?: 'asc' | 'desc';
}

/**
 * What {@link SubscriptionsRepository.insert} takes: a record without its id and version; the
 * reference may be left out (no reference), and the collection method (automatic).
 */
export type NewSubscription = Omit<SubscriptionRecord, 'id' | 'version' | 'reference' | 'paymentCollectionMethod'> & {
  readonly reference?: string | null;
  /** Default `automatic`, as the column's default. */
  readonly paymentCollectionMethod?: PaymentCollectionMethod;
};

/** Subscriptions. */
export interface SubscriptionsRepository {
  /** Inserts a subscription; a taken referral code or reference gives `conflict`. */
  insert(subscription: NewSubscription): Promise<SubscriptionRecord>;
  findById(siteId: number, id: number): Promise<SubscriptionRecord | undefined>;
  /**
   * Version-checked update; undefined when missing or the version moved on. A taken referral code
   * or reference gives `conflict`.
   */
  updateAtVersion(
    siteId: number,
    id: number,
    expectedVersion: number,
    patch: Partial<Omit<SubscriptionRecord, 'id' | 'siteId' | 'version' | 'createdAt'>>,
  ): Promise<SubscriptionRecord | undefined>;
  /**
   * One page of the site's subscriptions matching the filter, ordered by `sort` (default
   * `created_at`) in `direction` (default `desc`), ties broken by id in the same direction.
   */
  list(siteId: number, filter: SubscriptionFilter, page: PageRequest): Promise<SubscriptionRecord[]>;
  /** The subscription with this referral code, or undefined. Codes are unique per site. */
  findByReferralCode(siteId: number, code: string): Promise<SubscriptionRecord | undefined>;
  /** The subscription with this reference (exact match), or undefined. References are unique per site. */
  findByReference(siteId: number, reference: string): Promise<SubscriptionRecord | undefined>;
  /** How many subscriptions a customer has. */
  countForCustomer(siteId: number, customerId: number): Promise<number>;
}
