/**
 * Records and repositories of the billing slice: catalog, customers, payment profiles,
 * subscriptions, the ledger and payment attempts. Same conventions as `storage.ts`.
 */

/** A calendar unit of a billing interval. */
export type IntervalUnit = 'day' | 'month';

/** A product family: every product belongs to one. */
export interface ProductFamilyRecord {
  readonly id: number;
  readonly siteId: number;
  readonly name: string;
  /** Unique per site. */
  readonly handle: string;
  readonly description: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The billing terms of one immutable product version. Stored as one document per version. */
export interface ProductTerms {
  readonly name: string;
  readonly description: string | null;
  readonly accountingCode: string | null;
  readonly priceInCents: number;
  readonly interval: number;
  readonly intervalUnit: IntervalUnit;
  readonly trialPriceInCents: number | null;
  readonly trialInterval: number | null;
  readonly trialIntervalUnit: IntervalUnit | null;
  readonly initialChargeInCents: number | null;
  readonly initialChargeAfterTrial: boolean;
  readonly expirationInterval: number | null;
  readonly expirationIntervalUnit: IntervalUnit | null;
  readonly requestCreditCard: boolean;
  readonly requireCreditCard: boolean;
  readonly taxable: boolean;
}

/** A product: its identity and which version is current. The terms live in versions. */
export interface ProductRecord {
  readonly id: number;
  readonly siteId: number;
  readonly familyId: number;
  /** Unique per site. */
  readonly handle: string;
  /** The version new subscriptions get; starts at 1. */
  readonly currentVersion: number;
  readonly archivedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** One immutable version of a product. Subscriptions stay pinned to the version they were sold. */
export interface ProductVersionRecord {
  readonly siteId: number;
  readonly productId: number;
  readonly version: number;
  readonly terms: ProductTerms;
  readonly createdAt: Date;
}

/** Postal address fields shared by customers and payment profiles. */
export interface AddressFields {
  readonly address: string | null;
  readonly address2: string | null;
  readonly city: string | null;
  readonly state: string | null;
  readonly zip: string | null;
  readonly country: string | null;
}

/** A customer of a site. */
export interface CustomerRecord {
  readonly id: number;
  readonly siteId: number;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  /** The merchant's own id; unique per site when present. */
  readonly reference: string | null;
  readonly organization: string | null;
  readonly phone: string | null;
  readonly address: AddressFields;
  readonly version: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A stored payment method: a vault token and what may be shown of the card. Never a full number. */
export interface PaymentProfileRecord {
  readonly id: number;
  readonly siteId: number;
  readonly customerId: number;
  readonly paymentType: 'credit_card';
  readonly vaultToken: string;
  readonly customerVaultToken: string | null;
  readonly currentVault: string;
  readonly cardType: string;
  readonly lastFour: string;
  readonly expirationMonth: number;
  readonly expirationYear: number;
  readonly firstName: string | null;
  readonly lastName: string | null;
  readonly billingAddress: AddressFields;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

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

/** A subscription: customer, pinned product version, payment method, state and period. */
export interface SubscriptionRecord {
  readonly id: number;
  readonly siteId: number;
  readonly customerId: number;
  readonly productId: number;
  readonly productVersion: number;
  readonly paymentProfileId: number | null;
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

/** Ledger transaction types. */
export type TransactionType = 'charge' | 'credit' | 'adjustment' | 'payment' | 'refund' | 'info';

/** One ledger line. The subscription's balance is the ending balance of its last line. */
export interface TransactionRecord {
  readonly id: number;
  readonly siteId: number;
  readonly subscriptionId: number;
  readonly customerId: number;
  readonly type: TransactionType;
  readonly kind: string | null;
  /** As the service shows it: positive for charges, payments and refunds, negative for credits. */
  readonly amountInCents: number;
  readonly memo: string;
  readonly success: boolean | null;
  readonly startingBalanceInCents: number;
  readonly endingBalanceInCents: number;
  readonly paymentId: number | null;
  readonly productId: number | null;
  readonly componentId: number | null;
  readonly periodIndex: number | null;
  readonly gatewayTransactionId: string | null;
  /** For payments: how much has been refunded so far. */
  readonly refundedAmountInCents: number;
  readonly createdAt: Date;
}

/** A ledger line to append; the adapter chains the balances. */
export type NewTransaction = Omit<
  TransactionRecord,
  'id' | 'startingBalanceInCents' | 'endingBalanceInCents' | 'refundedAmountInCents'
> & {
  /** How the line moves the balance (signed); computed by the domain from type and amount. */
  readonly balanceDeltaInCents: number;
};

/** Outcome of a payment attempt as last known. */
export type PaymentAttemptStatus = 'pending' | 'succeeded' | 'declined' | 'failed' | 'unknown';

/**
 * A payment attempt, committed before the gateway is called. Its idempotency key is
 * deterministic, so a crash between call and result is reconciled by key, never charged twice.
 */
export interface PaymentAttemptRecord {
  readonly id: number;
  readonly siteId: number;
  readonly subscriptionId: number | null;
  /** Null for a signup payment, taken before the customer exists. */
  readonly customerId: number | null;
  /** Unique per site. */
  readonly idempotencyKey: string;
  readonly amountInCents: number;
  readonly currency: string;
  readonly purpose: string;
  readonly status: PaymentAttemptStatus;
  readonly gatewayTransactionId: string | null;
  readonly message: string | null;
  /** The ledger payment line recorded for a success. */
  readonly transactionId: number | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A page request: 1-based page, page size already clamped by the caller. */
export interface PageRequest {
  readonly page: number;
  readonly perPage: number;
}

/** Product families and products with their versions. */
export interface CatalogRepository {
  /** Inserts a family; a taken handle gives `conflict`. */
  insertFamily(family: Omit<ProductFamilyRecord, 'id'>): Promise<ProductFamilyRecord>;
  findFamily(siteId: number, id: number): Promise<ProductFamilyRecord | undefined>;
  findFamilyByHandle(siteId: number, handle: string): Promise<ProductFamilyRecord | undefined>;
  /** The site's families by id. */
  listFamilies(siteId: number): Promise<ProductFamilyRecord[]>;
  /** Changes a family; undefined when missing. A taken handle gives `conflict`. */
  updateFamily(
    siteId: number,
    id: number,
    patch: Partial<Pick<ProductFamilyRecord, 'name' | 'handle' | 'description' | 'updatedAt'>>,
  ): Promise<ProductFamilyRecord | undefined>;
  /** Inserts a product with version 1 of its terms; a taken handle gives `conflict`. */
  insertProduct(
    product: Omit<ProductRecord, 'id' | 'currentVersion'>,
    terms: ProductTerms,
  ): Promise<{ product: ProductRecord; version: ProductVersionRecord }>;
  /**
   * Adds version `expectedCurrent + 1` and makes it current, only if the product's current version
   * is still `expectedCurrent`; undefined when the product is missing or another edit won.
   */
  addProductVersion(
    siteId: number,
    productId: number,
    expectedCurrent: number,
    terms: ProductTerms,
    now: Date,
  ): Promise<{ product: ProductRecord; version: ProductVersionRecord } | undefined>;
  /** Sets or clears `archivedAt`; undefined when missing. */
  setProductArchived(
    siteId: number,
    productId: number,
    archivedAt: Date | null,
    now: Date,
  ): Promise<ProductRecord | undefined>;
  findProduct(siteId: number, id: number): Promise<ProductRecord | undefined>;
  findProductByHandle(siteId: number, handle: string): Promise<ProductRecord | undefined>;
  /** The site's products (of one family when given) by id. */
  listProducts(siteId: number, familyId?: number): Promise<ProductRecord[]>;
  /** One version of a product, current or old. */
  findProductVersion(siteId: number, productId: number, version: number): Promise<ProductVersionRecord | undefined>;
}

/** Customers and their payment profiles. */
export interface CustomersRepository {
  /** Inserts a customer; a taken reference gives `conflict`. */
  insert(customer: Omit<CustomerRecord, 'id' | 'version'>): Promise<CustomerRecord>;
  findById(siteId: number, id: number): Promise<CustomerRecord | undefined>;
  findByReference(siteId: number, reference: string): Promise<CustomerRecord | undefined>;
  /** Version-checked update; undefined when missing or the version moved on. A taken reference gives `conflict`. */
  updateAtVersion(
    siteId: number,
    id: number,
    expectedVersion: number,
    patch: Partial<Omit<CustomerRecord, 'id' | 'siteId' | 'version' | 'createdAt'>>,
  ): Promise<CustomerRecord | undefined>;
  /** One page of the site's customers matching `filter` (all without one), by id (ascending by default). */
  list(siteId: number, page: PageRequest, filter?: CustomerFilter): Promise<CustomerRecord[]>;
  /**
   * Deletes a customer with its payment profiles; false when missing. A customer who still has
   * subscriptions is not deleted: that gives `conflict` (the service refuses it earlier anyway).
   */
  delete(siteId: number, id: number): Promise<boolean>;
  insertPaymentProfile(profile: Omit<PaymentProfileRecord, 'id'>): Promise<PaymentProfileRecord>;
  findPaymentProfile(siteId: number, id: number): Promise<PaymentProfileRecord | undefined>;
  /** Replaces a profile's fields; undefined when missing. */
  updatePaymentProfile(
    siteId: number,
    id: number,
    patch: Partial<Omit<PaymentProfileRecord, 'id' | 'siteId' | 'customerId' | 'createdAt'>>,
  ): Promise<PaymentProfileRecord | undefined>;
}

/** Which customers a list keeps, and its order. Bounds are inclusive; every given condition must hold. */
export interface CustomerFilter {
  /**
   * Text found, ignoring case, in the first or last name, email, organization or reference; text
   * that is a whole number also matches the customer with that id.
   */
  readonly search?: string;
  /** The date a `start`/`end` bound applies to; default `created_at`. */
  readonly dateField?: 'created_at' | 'updated_at';
  readonly start?: Date;
  readonly end?: Date;
  /** By id; default `asc`. */
  readonly direction?: 'asc' | 'desc';
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

/** Subscriptions. */
export interface SubscriptionsRepository {
  insert(subscription: Omit<SubscriptionRecord, 'id' | 'version'>): Promise<SubscriptionRecord>;
  findById(siteId: number, id: number): Promise<SubscriptionRecord | undefined>;
  /** Version-checked update; undefined when missing or the version moved on. */
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
  /** How many subscriptions a customer has. */
  countForCustomer(siteId: number, customerId: number): Promise<number>;
}

/** Filter of a transaction list. Bounds are inclusive. */
export interface TransactionFilter {
  readonly subscriptionId?: number;
  readonly types?: readonly TransactionType[];
  readonly kinds?: readonly string[];
  readonly sinceId?: number;
  readonly maxId?: number;
  readonly since?: Date;
  readonly until?: Date;
  /** `id` (default) or `created_at`; ties broken by id. */
  readonly orderBy?: 'id' | 'created_at';
  readonly direction?: 'asc' | 'desc';
}

/** The ledger: append-only transactions whose balances chain per subscription. */
export interface LedgerRepository {
  /**
   * Appends lines in order, each starting at the previous line's ending balance (0 for the first
   * line of a subscription) and ending at start + `balanceDeltaInCents`. Concurrent appends to
   * one subscription are serialised by the adapter (row lock), so balances always chain.
   */
  append(lines: readonly NewTransaction[]): Promise<TransactionRecord[]>;
  /** The subscription's balance: the ending balance of its last line, 0 when it has none. */
  balance(siteId: number, subscriptionId: number): Promise<number>;
  /** The subscription's lines by id. */
  listForSubscription(siteId: number, subscriptionId: number): Promise<TransactionRecord[]>;
  findById(siteId: number, id: number): Promise<TransactionRecord | undefined>;
  /** One page of the site's lines matching the filter. */
  list(siteId: number, filter: TransactionFilter, page: PageRequest): Promise<TransactionRecord[]>;
  /**
   * Adds `amountInCents` to a payment line's `refundedAmountInCents`, only while the total stays
   * between 0 and the payment's amount; returns the updated line, or undefined when it would leave
   * that range or the line is not a payment of this site. A negative amount releases an earlier
   * reservation (a refund the gateway refused). Race-safe: concurrent refunds never over-refund.
   */
  addRefunded(siteId: number, paymentId: number, amountInCents: number): Promise<TransactionRecord | undefined>;
}

/** Payment attempts. */
export interface PaymentAttemptsRepository {
  /** Inserts an attempt; a taken idempotency key gives `conflict`. */
  insert(attempt: Omit<PaymentAttemptRecord, 'id'>): Promise<PaymentAttemptRecord>;
  findByKey(siteId: number, idempotencyKey: string): Promise<PaymentAttemptRecord | undefined>;
  /** Records an outcome; undefined when missing. */
  update(
    siteId: number,
    id: number,
    patch: Partial<
      Pick<PaymentAttemptRecord, 'status' | 'gatewayTransactionId' | 'message' | 'transactionId' | 'updatedAt'>
    >,
  ): Promise<PaymentAttemptRecord | undefined>;
  /** Attempts still `pending` or `unknown` created before `before`, oldest first: candidates for reconciliation. */
  listUnresolved(before: Date, limit: number): Promise<PaymentAttemptRecord[]>;
}
