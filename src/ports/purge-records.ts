/** Removing one subscription and every record it owns. Same conventions as `storage.ts`. */
import type { PaymentAttemptRecord } from './ledger-records.js';

/** What a purge removes besides the subscription's own records. */
export interface PurgeOptions {
  /**
   * Also remove the subscription's customer: its row, its metadata (custom field values), all of
   * its payment profiles (a profile cannot outlive its customer), its payment attempts that belong
   * to no subscription, its billing-portal access, and the events about it. Only when the
   * customer has no other subscription: with another one the customer is kept and
   * `customerRemoved` is false (the engine refuses such a purge before it reaches the repository).
   */
  readonly customer: boolean;
  /**
   * Also remove the customer's payment profiles that no remaining subscription uses (a profile
   * another subscription pays with is kept, so no other subscription's row changes).
   */
  readonly paymentProfiles: boolean;
}

/**
 * How many rows a purge removed, per kind of record. Every adapter counts the same rows, so the
 * conformance suite can compare them.
 */
export interface PurgeSummary {
  readonly subscriptions: number;
  readonly ledgerLines: number;
  readonly paymentAttempts: number;
  readonly subscriptionComponents: number;
  readonly allocations: number;
  readonly usages: number;
  readonly notes: number;
  /** Custom field values of the subscription (and of the customer, when it is removed). */
  readonly metadata: number;
  readonly invoices: number;
  readonly creditNotes: number;
  readonly invoiceEvents: number;
  /** Prepayment and service-credit entries. */
  readonly accountEntries: number;
  /**
   * Due work about the removed records, whatever its status: the subscription's own work
   * (renewals, notices, retries, ...), the reconciliations of its payment attempts, the deliveries
   * of removed webhooks, its prepaid replenishment checks (kind `reconcile_payment`, subject 0,
   * keyed `prepaid_replenishment:<subscription id>:...`) and the mail jobs about it (kind
   * `mail_delivery`, keyed `mail:<kind>:<subject id>:...`: its `payment_update_request` mails,
   * the `invoice` mails of its invoices and, with the customer, the customer's
   * `portal_invitation` mails).
   */
  readonly dueWork: number;
  /** Outbox events whose subject is a removed record (the subscription, its attempts, invoices, credit notes, the customer). */
  readonly events: number;
  /** Webhooks built from removed events. */
  readonly webhooks: number;
  readonly paymentProfiles: number;
  /**
   * The subscription's custom price points (type `custom`, made for it by a signup's or a
   * migration's `custom_price`) with the product versions holding their terms.
   */
  readonly customPricePoints: number;
  /** Whether the customer was removed. */
  readonly customerRemoved: boolean;
}

/**
 * Deletes one subscription's rows from every table that holds them. Records that are the site's
 * rather than the subscription's stay: the catalog (but for the subscription's own custom price
 * points), coupons and their redemption counts (a
 * conversion happened), document numbering (a number is never issued twice), data exports
 * already written, direct-post call records, and other subscriptions (a subscription it referred
 * keeps its `referredBy`).
 */
export interface PurgeRepository {
  /**
   * The payment attempts still `pending` or `unknown` that a purge would remove: those of the
   * subscription, and with `customerId` also the customer's attempts of no subscription (a signup
   * in flight). Their outcome is not known, so a purge must wait for them.
   */
  openPaymentAttempts(
    siteId: number,
    subscriptionId: number,
    customerId: number | null,
  ): Promise<PaymentAttemptRecord[]>;
  /**
   * Removes the subscription and every record it owns (see {@link PurgeSummary}); undefined, with
   * nothing removed, when the site has no such subscription.
   */
  purgeSubscription(siteId: number, subscriptionId: number, options: PurgeOptions): Promise<PurgeSummary | undefined>;
}
