/**
 * The storage port: what the engine needs from a database, shaped by use case rather than as
 * generic CRUD. Every repository method is scoped by `siteId` except the few that
 * find a site (by subdomain, by direct `api_id`) and the worker's cross-site claim of due work.
 *
 * Conventions every adapter keeps (the conformance suite in `billing-engine/testing` checks them):
 * - Finders return `undefined` when nothing matches; they never throw for "not found".
 * - Records handed out are copies: mutating one never changes what is stored.
 * - Instants are `Date`s with millisecond precision, stored in UTC.
 * - Money is integer minor units in a safe integer `number`.
 * - A unique-key violation surfaces as `BillingError('conflict')`; other driver failures as
 *   `BillingError('storage')` with the driver error as `cause`.
 */

import type {
  CatalogRepository,
  CustomersRepository,
  LedgerRepository,
  PaymentAttemptsRepository,
  SubscriptionsRepository,
} from './billing-records.js';

import type {
  ComponentsRepository,
  CouponsRepository,
  MetafieldsRepository,
  NotesRepository,
  SubscriptionComponentsRepository,
} from './catalog-extras.js';

export type * from './billing-records.js';

import type { AccountsRepository, ExportsRepository } from './account-records.js';
import type { DirectCallsRepository, WebhooksRepository } from './delivery-records.js';
import type { InvoicesRepository } from './invoice-records.js';
import type { MrrMovementsRepository } from './mrr-movement-records.js';
import type { OffersRepository } from './offer-records.js';
import type { PortalAccessRepository } from './portal-access-records.js';
import type { PricePointsRepository } from './price-point-records.js';
import type { ProformaInvoicesRepository } from './proforma-records.js';
import type { PurgeRepository } from './purge-records.js';
import type { ReportsRepository } from './report-records.js';
import type { CouponSubcodesRepository, ReasonCodesRepository } from './site-extra-records.js';

export type * from './account-records.js';
export type * from './catalog-extras.js';
export type * from './delivery-records.js';
export type * from './invoice-records.js';
export type * from './mrr-movement-records.js';
export type * from './offer-records.js';
export type * from './portal-access-records.js';
export type * from './price-point-records.js';
export type * from './proforma-records.js';
export type * from './purge-records.js';
export type * from './report-records.js';
export type * from './site-extra-records.js';
export * from './work-records.js';

import type { DueWorkRepository, OutboxRepository } from './work-records.js';

/** Test or live; a site goes live only after its test data has been cleared. */
export type SiteMode = 'test' | 'live';

/** Site settings that shape billing. Stored as one JSON document so new settings need no migration. */
export interface SiteSettings {
  /** How renewals find the next period end: `anchor` (default, no drift) or the hosted service's `sticky` clamping. */
  readonly periodRule: 'anchor' | 'sticky';
  /** Whether subscriptions get referral codes. */
  readonly referralsEnabled: boolean;
  /** Dunning: how many retries after the first failed renewal, how far apart, and the final action. */
  readonly dunning: {
    readonly retryCount: number;
    readonly retryIntervalHours: number;
    readonly finalAction: 'canceled' | 'unpaid';
  };
  /** Whether webhooks are sent for this site. */
  readonly webhooksEnabled: boolean;
  /**
   * Invoice numbering and terms: `prefix` goes before the site's gap-free number (`INV-` gives
   * `INV-1`), `netTermsDays` puts the due date after the issue date. Absent on sites made before
   * invoices: no prefix, due on issue.
   */
  readonly invoices?: { readonly prefix: string; readonly netTermsDays: number };
  /** Billing-portal actions the merchant allows. */
  readonly portal: {
    readonly allowPlanChange: boolean;
    readonly allowCancel: boolean;
    readonly allowCardUpdate: boolean;
    readonly allowComponentChange: boolean;
  };
}

/** A site: the tenant. Every other record belongs to exactly one. */
export interface SiteRecord {
  readonly id: number;
  readonly subdomain: string;
  readonly name: string;
  /** ISO 4217 code, upper case. */
  readonly currency: string;
  /** IANA time zone name. */
  readonly timeZone: string;
  readonly dateFormat: string;
  readonly timeFormat: string;
  readonly mode: SiteMode;
  /** Secret for webhook signatures and hosted-page tokens; needed in clear for HMAC. */
  readonly sharedKey: string;
  readonly settings: SiteSettings;
  /** Optimistic-concurrency version; bumped by every update. */
  readonly version: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Fields of a new site; the adapter assigns `id` and sets `version` to 1. */
export type NewSite = Omit<SiteRecord, 'id' | 'version'>;

/** Fields an update may change; `subdomain` and `id` never change. */
export type SitePatch = Partial<Omit<SiteRecord, 'id' | 'subdomain' | 'version' | 'createdAt'>>;

/** An API key of the main API. Only a hash of the secret is stored; the key is shown once. */
export interface ApiKeyRecord {
  readonly id: number;
  readonly siteId: number;
  readonly name: string;
  /** The public first part of the key, shown in lists so a key can be recognised. */
  readonly prefix: string;
  /** Hex SHA-256 of the whole key. */
  readonly secretHash: string;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

/** Direct-post credentials: `api_id` is public, `api_secret` signs (kept in clear), the password is hashed. */
export interface DirectCredentialRecord {
  readonly id: number;
  readonly siteId: number;
  readonly apiId: string;
  readonly apiSecret: string;
  /** Hex SHA-256 of the password. */
  readonly apiPasswordHash: string;
  readonly defaultRedirectUri: string | null;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

/** Sites: the tenant records. */
export interface SitesRepository {
  /** Inserts a site. A taken subdomain gives `conflict`. */
  insert(site: NewSite): Promise<SiteRecord>;
  /** The site with this id, or undefined. */
  findById(id: number): Promise<SiteRecord | undefined>;
  /** The site with this subdomain (exact, lower case), or undefined. */
  findBySubdomain(subdomain: string): Promise<SiteRecord | undefined>;
  /** All sites, by id. */
  list(): Promise<SiteRecord[]>;
  /**
   * Applies `patch` only if the stored version is `expectedVersion`; returns the new record, or
   * undefined when the site is missing or its version moved on (a concurrent update won).
   */
  updateAtVersion(id: number, expectedVersion: number, patch: SitePatch): Promise<SiteRecord | undefined>;
  /** Deletes the site and every record that belongs to it. Returns false when there was no such site. */
  delete(id: number): Promise<boolean>;
}

/** Counts of the customer data of a site, to decide whether it may go live or change currency. */
export interface SiteDataCounts {
  readonly customers: number;
  readonly subscriptions: number;
  readonly transactions: number;
}

/** Which part of a site's data {@link SiteDataRepository.clear} removes. */
export type ClearScope = 'all' | 'customers';

/** Whole-site data operations. */
export interface SiteDataRepository {
  /** Counts customers, subscriptions and ledger transactions of the site. */
  counts(siteId: number): Promise<SiteDataCounts>;
  /**
   * Removes the site's customer data: customers, subscriptions, payment profiles, transactions,
   * payment attempts, notes, metadata, all of the site's due work (webhook deliveries included:
   * they are about the cleared records), outbox events, webhook deliveries and direct-post calls,
   * and (as every subscription goes) every custom price point with the product versions holding
   * its terms. The catalog, credentials, settings and webhook endpoints stay.
   */
  clear(siteId: number, scope: ClearScope): Promise<void>;
}

/** API keys and direct-post credentials. */
export interface CredentialsRepository {
  insertApiKey(key: Omit<ApiKeyRecord, 'id'>): Promise<ApiKeyRecord>;
  /** The site's keys that are not revoked, by id. */
  activeApiKeys(siteId: number): Promise<ApiKeyRecord[]>;
  /** Marks a key revoked at `at`; false when the site has no such active key. */
  revokeApiKey(siteId: number, keyId: number, at: Date): Promise<boolean>;
  insertDirect(credential: Omit<DirectCredentialRecord, 'id'>): Promise<DirectCredentialRecord>;
  /** The active direct credential with this `api_id` on any site, or undefined. */
  findDirectByApiId(apiId: string): Promise<DirectCredentialRecord | undefined>;
  /** The site's active direct credentials. */
  activeDirect(siteId: number): Promise<DirectCredentialRecord[]>;
  /** Marks every active direct credential of the site revoked. */
  revokeDirect(siteId: number, at: Date): Promise<number>;
}

/** Insert-if-absent keys: uniqueness tokens, direct-post nonces, any "exactly once" claim. */
export interface IdempotencyRepository {
  /**
   * Claims `(siteId, scope, key)`. Returns true when this call made the claim; false when the key is
   * already held and has not expired. An expired claim (`expiresAt <= now`) is taken over.
   * Race-safe: of any number of concurrent claims of one key, exactly one returns true.
   */
  claim(siteId: number, scope: string, key: string, now: Date, expiresAt: Date | null): Promise<boolean>;
  /**
   * Gives up the claim of `(siteId, scope, key)` so it can be claimed again at once (an exclusive
   * claim whose work has ended). Returns whether a claim was held. Claims that are never released
   * (a uniqueness token, a nonce) simply never call it.
   */
  release(siteId: number, scope: string, key: string): Promise<boolean>;
}

/**
 * The repositories visible inside one transaction. Everything done through them commits together
 * or not at all.
 */
export interface StorageTransaction {
  readonly sites: SitesRepository;
  readonly siteData: SiteDataRepository;
  readonly credentials: CredentialsRepository;
  readonly idempotency: IdempotencyRepository;
  readonly dueWork: DueWorkRepository;
  readonly outbox: OutboxRepository;
  readonly catalog: CatalogRepository;
  readonly customers: CustomersRepository;
  readonly subscriptions: SubscriptionsRepository;
  readonly ledger: LedgerRepository;
  readonly payments: PaymentAttemptsRepository;
  readonly components: ComponentsRepository;
  readonly coupons: CouponsRepository;
  readonly metafields: MetafieldsRepository;
  readonly notes: NotesRepository;
  readonly subscriptionComponents: SubscriptionComponentsRepository;
  readonly webhooks: WebhooksRepository;
  readonly directCalls: DirectCallsRepository;
  readonly invoices: InvoicesRepository;
  readonly pricePoints: PricePointsRepository;
  readonly reasonCodes: ReasonCodesRepository;
  readonly couponSubcodes: CouponSubcodesRepository;
  readonly accounts: AccountsRepository;
  readonly exports: ExportsRepository;
  readonly proformaInvoices: ProformaInvoicesRepository;
  readonly reports: ReportsRepository;
  readonly purge: PurgeRepository;
  /** Customers' billing-portal access (enabled, invited, revoked). */
  readonly portalAccess: PortalAccessRepository;
  /** Offers: packages of a product, components and coupons that a signup can name. */
  readonly offers: OffersRepository;
  /** The history of each subscription's MRR, one row per change (see `mrr-movements.ts` of the services). */
  readonly mrrMovements: MrrMovementsRepository;
}

/** What an adapter can do; conformance cases that need a capability skip, with a printed reason, without it. */
export interface StorageCapabilities {
  /** Several transactions may run at once (real concurrency, not a serialised queue). */
  readonly concurrentTransactions: boolean;
  /** Separate processes can share this storage (SQLite file, Postgres). */
  readonly multiProcess: boolean;
  /** The dialect's name, for reports. */
  readonly dialect: 'memory' | 'sqlite' | 'postgres';
  /**
   * Statements issued at once inside one transaction travel together, each without waiting for
   * the answer of the one before (Postgres over a `pg` pool in pipeline mode). A transaction that
   * runs several independent commands then runs them at once ({@link TransactionOptions.concurrentCommands}):
   * one round trip carries a statement of each, where each round trip costs the process far more
   * than the statement (issue 18). Absent means false.
   */
  readonly pipelining?: boolean;
}

/** Options of one transaction. */
export interface TransactionOptions {
  /**
   * `serializable` for commands whose correctness depends on reads that other writers could
   * invalidate; the default `read_committed` relies on row locks and conditional updates.
   * Adapters whose writers are serialised ignore it.
   */
  readonly isolation?: 'read_committed' | 'serializable';
  /**
   * A transaction that only reads. It sees one consistent, committed state from its first read to
   * its end and never waits for writers: SQLite runs it on a read connection beside the writer
   * (WAL), Postgres as `REPEATABLE READ READ ONLY`. A write inside it fails with
   * `BillingError('storage')` on both SQL adapters (the memory adapter, whose transactions run one
   * at a time, does not check). `isolation` is ignored when it is set.
   */
  readonly readOnly?: boolean;
  /**
   * `work` runs several independent commands at once on this one transaction (on a storage with
   * `pipelining`). Statements that need the connection to themselves between two of their own (a
   * savepoint around an expected constraint violation) then refuse with `BillingError('storage')`
   * before they run, so that the caller runs the command again in a transaction of its own.
   */
  readonly concurrentCommands?: boolean;
}

/** A storage: the engine's database. */
export interface Storage {
  readonly capabilities: StorageCapabilities;
  /**
   * Runs `work` in one transaction. If `work` throws, nothing it did through `tx` remains and the
   * error is rethrown; otherwise everything commits before the returned promise resolves.
   */
  transaction<T>(work: (tx: StorageTransaction) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Creates or upgrades the schema; safe to call on an up-to-date database. */
  migrate(): Promise<void>;
  /** Releases connections. The storage is unusable afterwards. */
  close(): Promise<void>;
}
