/** Records and repositories of the ledger (transactions) and payment attempts. Same conventions as `storage.ts`. */

import type { PageRequest } from './page-request.js';

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
