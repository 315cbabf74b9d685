/** Records and repositories of account balances (prepayments, service credits) and data exports. Same conventions as `storage.ts`. */

import type { PageRequest } from './page-request.js';

/** Which account of a subscription an entry belongs to. */
export type AccountName = 'prepayment' | 'service_credit';

/**
 * What an account entry did: a prepayment received, (part of) a prepayment refunded, a service
 * credit issued (`credit`) or deducted (`debit`).
 */
export type AccountEntryType = 'prepayment' | 'prepayment_refund' | 'credit' | 'debit';

/**
 * One movement of a subscription's prepayment or service-credit account. Each entry has exactly
 * one ledger line that moves the subscription's balance by it (`transactionId`): the money is in
 * the ledger, the entry says which account it belongs to.
 */
export interface AccountEntryRecord {
  readonly id: number;
  readonly siteId: number;
  readonly subscriptionId: number;
  readonly account: AccountName;
  readonly entryType: AccountEntryType;
  /** Positive, in minor units. */
  readonly amountInCents: number;
  readonly memo: string;
  /** A prepayment's free-text details (a check number, a wire reference); null otherwise. */
  readonly details: string | null;
  /** A prepayment's payment type (`check`, `cash`, `ach`, ...); null otherwise. */
  readonly method: string | null;
  /** A prepayment received outside the gateway (always true today). */
  readonly external: boolean;
  /** For a `prepayment_refund`: the prepayment entry it returns money of; null otherwise. */
  readonly prepaymentId: number | null;
  /** The ledger line that moves the balance by this entry. */
  readonly transactionId: number;
  readonly createdAt: Date;
}

/** Filter of an account entry list; date bounds are inclusive. */
export interface AccountEntryFilter {
  readonly subscriptionId: number;
  readonly entryTypes?: readonly AccountEntryType[];
  readonly since?: Date;
  readonly until?: Date;
}

/** Prepayments and service credits of subscriptions. */
export interface AccountsRepository {
  /** Inserts an entry and returns it with its id. */
  insert(entry: Omit<AccountEntryRecord, 'id'>): Promise<AccountEntryRecord>;
  /** An entry of the site by id; undefined when missing or another site's. */
  findById(siteId: number, id: number): Promise<AccountEntryRecord | undefined>;
  /** Every entry of one subscription, oldest (lowest id) first; [] when it has none. */
  listForSubscription(siteId: number, subscriptionId: number): Promise<AccountEntryRecord[]>;
  /** One page of a subscription's entries matching the filter, oldest (lowest id) first. */
  list(siteId: number, filter: AccountEntryFilter, page: PageRequest): Promise<AccountEntryRecord[]>;
}

/** The kinds of data export. */
export type ExportKind = 'subscriptions' | 'invoices' | 'proforma_invoices';

/**
 * An export job and, once finished, its rows: each row is one record as the API serializes it,
 * frozen at the instant the job ran.
 */
export interface ExportRecord {
  readonly id: number;
  readonly siteId: number;
  readonly kind: ExportKind;
  /** `pending` until the rows are written, then `completed`. */
  readonly status: 'pending' | 'completed';
  readonly rowCount: number | null;
  readonly createdAt: Date;
  readonly finishedAt: Date | null;
}

/** Asynchronous data exports and their files. */
export interface ExportsRepository {
  /** Inserts a pending job. */
  insert(job: Omit<ExportRecord, 'id' | 'status' | 'rowCount' | 'finishedAt'>): Promise<ExportRecord>;
  /** A job of the site by id; undefined when missing or another site's. */
  findById(siteId: number, id: number): Promise<ExportRecord | undefined>;
  /**
   * Stores the rows of a pending job and completes it; returns the completed job, or undefined
   * when the job is missing or no longer pending (a second completion changes nothing).
   */
  complete(
    siteId: number,
    id: number,
    rows: readonly Readonly<Record<string, unknown>>[],
    finishedAt: Date,
  ): Promise<ExportRecord | undefined>;
  /** One page of a job's rows in the order they were stored; [] past the end. */
  rows(siteId: number, id: number, page: PageRequest): Promise<Record<string, unknown>[]>;
}
