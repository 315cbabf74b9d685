/** Read-only queries across a site's records for reports (statistics, MRR, site-wide lists). Same conventions as `storage.ts`. */

import type {
  ComponentKind,
  ComponentPricing,
  ComponentRecord,
  ComponentVersionRecord,
  MetadataRecord,
  MetafieldResource,
  SubscriptionComponentRecord,
} from './catalog-extras.js';
import type { ProductTerms } from './catalog-records.js';
import type { PageRequest } from './page-request.js';
import type { SubscriptionState } from './subscription-records.js';

/** How many subscriptions a site has: in all, by state, and created at or after a moment. */
export interface SubscriptionCounts {
  readonly total: number;
  /** Subscriptions whose `createdAt` is at or after the `createdSince` asked for. */
  readonly createdSince: number;
  /** Only states that have at least one subscription appear. */
  readonly byState: Readonly<Partial<Record<SubscriptionState, number>>>;
}

/** Ascending or descending id order of a report list. */
export type ReportDirection = 'asc' | 'desc';

/** Which subscriptions an MRR read covers. */
export interface MrrSubscriptionFilter {
  /** The states that count (the service decides which are billable). */
  readonly states: readonly SubscriptionState[];
  /** Only these subscriptions, when given (an empty list selects none). */
  readonly subscriptionIds?: readonly number[];
  /**
   * Only subscriptions with a greater id: keyset paging for a pass over the whole book, which an
   * offset would make quadratic.
   */
  readonly afterId?: number;
}

/** One component of a subscription as MRR needs it: its kind, quantities and pinned pricing. */
export interface MrrComponentInput {
  readonly componentId: number;
  readonly kind: ComponentKind;
  readonly allocatedQuantity: number;
  readonly unitBalance: number;
  readonly pricing: ComponentPricing;
}

/** What MRR is computed from for one subscription, read in one pass over a page of subscriptions. */
export interface MrrSubscriptionInput {
  readonly subscriptionId: number;
  readonly state: SubscriptionState;
  /** The terms of the product version the subscription is pinned to. */
  readonly terms: ProductTerms;
  readonly couponCodes: readonly string[];
  /** How many periods each coupon has discounted (`data.couponUses`), for a coupon's duration. */
  readonly couponUses: Readonly<Record<string, number>>;
  /** Coupons a trial deferred to the first amount due (`data.couponDeferred`). */
  readonly couponDeferred: readonly string[];
  /** In component id order. */
  readonly components: readonly MrrComponentInput[];
}

/** Which metadata values a site-wide metadata list returns. */
export interface MetadataListFilter {
  /** Only values of these customers or subscriptions, when given (an empty list selects none). */
  readonly resourceIds?: readonly number[];
  /** The timestamp the date bounds apply to. */
  readonly dateField?: 'created_at' | 'updated_at';
  /** Inclusive bounds on `dateField` (ignored without it). */
  readonly since?: Date;
  readonly until?: Date;
  /** Id order; ascending by default. */
  readonly direction?: ReportDirection;
}

/** Which subscription components a site-wide list returns. */
export interface SubscriptionComponentListFilter {
  readonly subscriptionIds?: readonly number[];
  /** Only components of these product families. */
  readonly productFamilyIds?: readonly number[];
  /** Only components of subscriptions in these states. */
  readonly subscriptionStates?: readonly SubscriptionState[];
  /** Inclusive bounds on the subscription component's `updatedAt`. */
  readonly updatedSince?: Date;
  readonly updatedUntil?: Date;
  /** `id`: the subscription component row's id (the default); `updated_at` then id. */
  readonly sort?: 'id' | 'updated_at';
  readonly direction?: ReportDirection;
}

/** A subscription component with its component and the pricing version it is pinned to. */
export interface SubscriptionComponentReportRow {
  readonly subscriptionComponent: SubscriptionComponentRecord;
  readonly component: ComponentRecord;
  readonly version: ComponentVersionRecord;
}

/** Site-wide reads: statistics, MRR, metadata of a resource type, subscription components. */
export interface ReportsRepository {
  /** Counts the site's subscriptions in all, by state, and created at or after `createdSince`. */
  countSubscriptions(siteId: number, createdSince: Date): Promise<SubscriptionCounts>;
  /**
   * Money received net of money returned, in minor units: the sum of `payment` ledger lines minus
   * the sum of `refund` lines, leaving out lines whose `success` is false, over lines created at
   * or after `from` (from the first line when null) and at or before `until`.
   */
  netRevenue(siteId: number, from: Date | null, until: Date): Promise<number>;
  /** How many subscriptions the filter selects. */
  countMrrSubscriptions(siteId: number, filter: MrrSubscriptionFilter): Promise<number>;
  /**
   * One page of the selected subscriptions with what MRR is computed from, by subscription id in
   * `direction`. Bounded statements per page, never one per subscription.
   */
  listMrrInputs(
    siteId: number,
    filter: MrrSubscriptionFilter,
    direction: ReportDirection,
    page: PageRequest,
  ): Promise<MrrSubscriptionInput[]>;
  /** How many metadata values of the resource type the filter selects. */
  countMetadata(siteId: number, resourceType: MetafieldResource, filter: MetadataListFilter): Promise<number>;
  /** One page of the metadata values of every record of a resource type, by value id. */
  listMetadata(
    siteId: number,
    resourceType: MetafieldResource,
    filter: MetadataListFilter,
    page: PageRequest,
  ): Promise<MetadataRecord[]>;
  /** One page of the site's subscription components, each with its component and pinned version. */
  listSubscriptionComponents(
    siteId: number,
    filter: SubscriptionComponentListFilter,
    page: PageRequest,
  ): Promise<SubscriptionComponentReportRow[]>;
}
