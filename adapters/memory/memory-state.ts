import type {
  AllocationRecord,
  ApiKeyRecord,
  ComponentRecord,
  ComponentVersionRecord,
  CouponRecord,
  CreditNoteRecord,
  CustomerRecord,
  DirectCallRecord,
  DirectCredentialRecord,
  DueWorkRecord,
  InvoiceEventRecord,
  InvoiceRecord,
  MetadataRecord,
  MetafieldRecord,
  NoteRecord,
  OutboxEventRecord,
  PaymentAttemptRecord,
  PaymentProfileRecord,
  ProductFamilyRecord,
  ProductRecord,
  ProductVersionRecord,
  SiteRecord,
  SubscriptionComponentRecord,
  SubscriptionRecord,
  TransactionRecord,
  UsageRecord,
  WebhookEndpointRecord,
  WebhookRecord,
} from 'billing-engine';
import { AccountTables } from './extra-tables/accounts.js';
import { PricePointTables } from './extra-tables/price-points.js';
import { SiteExtraTables } from './extra-tables/site-extras.js';
import { type Journal, MemoryTable } from './memory-table.js';
import { MrrMovementTables } from './repositories/mrr-movements.js';
import { OfferTables } from './repositories/offers.js';
import { PortalAccessTables } from './repositories/portal-access.js';
import { ProformaTables } from './repositories/proforma-invoices.js';

/** An idempotency claim row; the id is synthetic so it fits {@link MemoryTable}. */
export interface IdempotencyRow {
  readonly id: number;
  readonly siteId: number;
  readonly scope: string;
  readonly key: string;
  readonly expiresAt: Date | null;
  readonly createdAt: Date;
}

/** A product version row; the id is synthetic so it fits {@link MemoryTable}. */
export interface ProductVersionRow extends ProductVersionRecord {
  readonly id: number;
}

/** A component version row; the id is synthetic. */
export interface ComponentVersionRow extends ComponentVersionRecord {
  readonly id: number;
}

/** A direct call row: the numeric id is synthetic, the record keeps its hex id. */
export interface DirectCallRow {
  readonly id: number;
  readonly siteId: number;
  readonly call: DirectCallRecord;
}

/** A direct-post replay claim: the synthetic id fits {@link MemoryTable}. */
export interface DirectPostClaimRow {
  readonly id: number;
  readonly siteId: number;
  readonly inputHash: string;
  readonly nonceKey: string | null;
  readonly createdAt: Date;
}

/** The last number taken in one numbering series of a site (invoices, credit notes). */
export interface DocumentSequenceRow {
  readonly id: number;
  readonly siteId: number;
  readonly series: string;
  readonly last: number;
}

/**
 * The key of a secondary index: the looked-up fields joined by NUL. Lookups check the fields
 * themselves too, so even a key that could be spelled two ways only widens the candidates.
 */
export function keyOf(...parts: readonly (string | number)[]): string {
  return parts.join('\u0000');
}

/**
 * What site deletion and data clearing need of a table whose rows carry a site id. Method syntax,
 * so that a table of any such record fits.
 */
export interface SiteOwnedTable {
  deleteWhere(journal: Journal, predicate: (row: { readonly id: number; readonly siteId: number }) => boolean): number;
}

/** Every table of the memory adapter. New repositories add their tables here. */
export class MemoryState {
  readonly sites = new MemoryTable<SiteRecord>();
  readonly apiKeys = new MemoryTable<ApiKeyRecord>();
  readonly directCredentials = new MemoryTable<DirectCredentialRecord>();
  readonly idempotency = new MemoryTable<IdempotencyRow>();
  readonly dueWork = new MemoryTable<DueWorkRecord>();
  readonly outbox = new MemoryTable<OutboxEventRecord>();
  readonly families = new MemoryTable<ProductFamilyRecord>();
  readonly products = new MemoryTable<ProductRecord>();
  readonly productVersions = new MemoryTable<ProductVersionRow>();
  readonly customers = new MemoryTable<CustomerRecord>();
  readonly paymentProfiles = new MemoryTable<PaymentProfileRecord>();
  readonly subscriptions = new MemoryTable<SubscriptionRecord>();
  readonly transactions = new MemoryTable<TransactionRecord>();
  readonly payments = new MemoryTable<PaymentAttemptRecord>();
  readonly components = new MemoryTable<ComponentRecord>();
  readonly componentVersions = new MemoryTable<ComponentVersionRow>();
  readonly coupons = new MemoryTable<CouponRecord>();
  readonly metafields = new MemoryTable<MetafieldRecord>();
  readonly metadata = new MemoryTable<MetadataRecord>();
  readonly notes = new MemoryTable<NoteRecord>();
  readonly subscriptionComponents = new MemoryTable<SubscriptionComponentRecord>();
  readonly allocations = new MemoryTable<AllocationRecord>();
  readonly usages = new MemoryTable<UsageRecord>();
  readonly webhookEndpoints = new MemoryTable<WebhookEndpointRecord>();
  readonly webhooks = new MemoryTable<WebhookRecord>();
  /** Direct calls keyed by their hex id; not a MemoryTable because the id is a string. */
  readonly directCalls = new MemoryTable<DirectCallRow>();
  /** Replay claims of signed direct posts; kept when a site's data is cleared. */
  readonly directPostClaims = new MemoryTable<DirectPostClaimRow>();
  readonly invoices = new MemoryTable<InvoiceRecord>();
  readonly creditNotes = new MemoryTable<CreditNoteRecord>();
  readonly invoiceEvents = new MemoryTable<InvoiceEventRecord & { readonly siteId: number }>();
  /** Numbering counters; kept when a site's data is cleared, so numbers are never reused. */
  readonly documentSequences = new MemoryTable<DocumentSequenceRow>();
  readonly invoicesByUid = this.invoices.index((i) => keyOf(i.siteId, i.uid));
  readonly invoicesBySubscription = this.invoices.index((i) => keyOf(i.siteId, i.subscriptionId));
  readonly documentSequencesByKey = this.documentSequences.index((r) => keyOf(r.siteId, r.series));
  /** Payment attempts by site and idempotency key (unique): every payment looks its key up. */
  readonly paymentsByKey = this.payments.index((p) => keyOf(p.siteId, p.idempotencyKey));
  /** Due work by site and unique key: every schedule checks it. */
  readonly dueWorkByKey = this.dueWork.index((r) => keyOf(r.siteId, r.uniqueKey));
  /** Due work by site and subject: commands cancel or list a subscription's open work. */
  readonly dueWorkBySubject = this.dueWork.index((r) => keyOf(r.siteId, r.subjectId));
  /** Idempotency claims by site, scope and key. */
  readonly idempotencyByKey = this.idempotency.index((r) => keyOf(r.siteId, r.scope, r.key));
  /** Direct-post claims by site and signed-input hash (unique). */
  readonly directPostClaimsByHash = this.directPostClaims.index((r) => keyOf(r.siteId, r.inputHash));
  /** Direct-post claims by site and nonce key (unique where set). */
  readonly directPostClaimsByNonce = this.directPostClaims.index((r) =>
    r.nonceKey === null ? '' : keyOf(r.siteId, r.nonceKey),
  );
  /** The tables of later features, each kept in its own file. */
  readonly pricePointTables = new PricePointTables();
  readonly siteExtraTables = new SiteExtraTables();
  readonly accountTables = new AccountTables();
  readonly portalAccessTables = new PortalAccessTables();
  readonly proformaTables = new ProformaTables();
  readonly offerTables = new OfferTables();
  readonly mrrMovementTables = new MrrMovementTables();
  /** Last ledger line id per subscription, so a balance read is O(1). */
  readonly lastLine = new Map<number, number>();

  /** Tables holding rows that belong to a site, for site deletion. */
  siteOwnedTables(): SiteOwnedTable[] {
    return [
      this.apiKeys,
      this.directCredentials,
      this.idempotency,
      this.directPostClaims,
      this.dueWork,
      this.outbox,
      this.families,
      this.products,
      this.productVersions,
      this.components,
      this.componentVersions,
      this.coupons,
      this.metafields,
      this.webhookEndpoints,
      this.documentSequences,
      ...this.pricePointTables.siteOwned(),
      ...this.siteExtraTables.siteOwned(),
      ...this.accountTables.siteOwned(),
      ...this.offerTables.siteOwned(),
      ...this.customerTables(),
    ];
  }

  /** Tables of customer data, cleared by a site data clear. */
  customerTables(): SiteOwnedTable[] {
    return [
      this.customers,
      this.paymentProfiles,
      this.subscriptions,
      this.transactions,
      this.payments,
      this.metadata,
      this.notes,
      this.subscriptionComponents,
      this.allocations,
      this.usages,
      this.webhooks,
      this.directCalls,
      this.invoices,
      this.creditNotes,
      this.invoiceEvents,
      ...this.pricePointTables.customerOwned(),
      ...this.siteExtraTables.customerOwned(),
      ...this.accountTables.customerOwned(),
      ...this.portalAccessTables.customerOwned(),
      ...this.proformaTables.customerOwned(),
      ...this.mrrMovementTables.customerOwned(),
    ];
  }
}
