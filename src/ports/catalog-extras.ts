/**
 * Records and repositories for components, coupons, metafields/metadata and notes. Same
 * conventions as `storage.ts`: site-scoped, copies out, `undefined` for not found, `conflict` for
 * unique violations.
 */
import type { PageRequest } from './page-request.js';

/** Component kinds. */
export type ComponentKind = 'quantity_based_component' | 'on_off_component' | 'metered_component';

/** Pricing schemes. */
export type PricingScheme = 'per_unit' | 'volume' | 'tiered' | 'stairstep';

/** One price bracket. Unit prices are exact decimal strings with up to 4 places (`"0.0125"`). */
export interface PriceBracket {
  readonly startingQuantity: number;
  /** Null for the one open-ended (last) bracket. */
  readonly endingQuantity: number | null;
  /** Per unit for per_unit/volume/tiered; per bracket for stairstep. Major units, decimal string. */
  readonly unitPrice: string;
}

/** The pricing of one component version. */
export interface ComponentPricing {
  readonly scheme: PricingScheme;
  readonly brackets: readonly PriceBracket[];
}

/** A component of a product family: identity and current version. */
export interface ComponentRecord {
  readonly id: number;
  readonly siteId: number;
  readonly familyId: number;
  readonly kind: ComponentKind;
  readonly name: string;
  /** Unique per site when present. */
  readonly handle: string | null;
  readonly unitName: string;
  readonly description: string | null;
  readonly taxable: boolean;
  readonly currentVersion: number;
  readonly archivedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** One immutable pricing version of a component. */
export interface ComponentVersionRecord {
  readonly siteId: number;
  readonly componentId: number;
  readonly version: number;
  readonly pricing: ComponentPricing;
  readonly createdAt: Date;
}

/** Components and their versions. */
export interface ComponentsRepository {
  /**
   * Inserts a component with version 1 of its pricing and its default price point (name
   * `Original`, handle `original`) pointing at that version; a taken handle gives `conflict`.
   */
  insert(
    component: Omit<ComponentRecord, 'id' | 'currentVersion'>,
    pricing: ComponentPricing,
  ): Promise<{ component: ComponentRecord; version: ComponentVersionRecord }>;
  /**
   * Adds a version of the default price point's pricing (numbered after the component's highest,
   * which is `expectedCurrent + 1` when the component has no other price points) and makes it
   * current for the component and its default price point, only if the current version is still
   * `expectedCurrent`; else undefined.
   */
  addVersion(
    siteId: number,
    componentId: number,
    expectedCurrent: number,
    pricing: ComponentPricing,
    now: Date,
  ): Promise<{ component: ComponentRecord; version: ComponentVersionRecord } | undefined>;
  /** Changes non-pricing fields (name, unit name, description, handle, archive); undefined when missing. */
  update(
    siteId: number,
    componentId: number,
    patch: Partial<
      Pick<ComponentRecord, 'name' | 'unitName' | 'description' | 'handle' | 'taxable' | 'archivedAt' | 'updatedAt'>
    >,
  ): Promise<ComponentRecord | undefined>;
  findById(siteId: number, id: number): Promise<ComponentRecord | undefined>;
  findByHandle(siteId: number, handle: string): Promise<ComponentRecord | undefined>;
  /** The site's components (of one family when given), by id. */
  list(siteId: number, familyId?: number): Promise<ComponentRecord[]>;
  findVersion(siteId: number, componentId: number, version: number): Promise<ComponentVersionRecord | undefined>;
}

/** How several coupons combine. */
export type CompoundingStrategy = 'compound' | 'full-price';

/** A coupon. Exactly one of `percentage` and `amountInCents` is set. */
export interface CouponRecord {
  readonly id: number;
  readonly siteId: number;
  readonly familyId: number;
  readonly name: string;
  /** Normalised upper case; unique per site. */
  readonly code: string;
  readonly description: string | null;
  /** Exact decimal string, 0-100, up to 4 places. */
  readonly percentage: string | null;
  readonly amountInCents: number | null;
  readonly recurring: boolean;
  /** With `recurring`: how many periods; null = forever. */
  readonly durationPeriodCount: number | null;
  /** After this instant (end of the day in the site zone) the coupon can no longer be added. */
  readonly endDate: Date | null;
  readonly allowNegativeBalance: boolean;
  readonly stackable: boolean;
  readonly compoundingStrategy: CompoundingStrategy;
  /** Maximum number of redemptions; null = unlimited. */
  readonly conversionLimit: number | null;
  readonly redemptions: number;
  readonly archivedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Coupons. */
export interface CouponsRepository {
  /** Inserts a coupon with 0 redemptions; a taken code gives `conflict`. */
  insert(coupon: Omit<CouponRecord, 'id' | 'redemptions'>): Promise<CouponRecord>;
  findById(siteId: number, id: number): Promise<CouponRecord | undefined>;
  /**
   * By normalised code (the caller upper-cases): the coupon with that code, else the coupon that
   * has it as a subcode (see `CouponSubcodesRepository`), so every use of a code accepts subcodes.
   */
  findByCode(siteId: number, code: string): Promise<CouponRecord | undefined>;
  /** The site's coupons by id, one page. */
  list(siteId: number, page: PageRequest): Promise<CouponRecord[]>;
  /** Changes fields; undefined when missing. A taken code gives `conflict`. */
  update(
    siteId: number,
    id: number,
    patch: Partial<Omit<CouponRecord, 'id' | 'siteId' | 'redemptions' | 'createdAt'>>,
  ): Promise<CouponRecord | undefined>;
  /**
   * Counts one redemption, only while `redemptions < conversionLimit` (or there is no limit);
   * returns the updated coupon, or undefined when the limit is reached or the coupon is missing.
   * Race-safe: of N concurrent redemptions with one use left, exactly one succeeds.
   */
  redeem(siteId: number, id: number, now: Date): Promise<CouponRecord | undefined>;
  /**
   * Gives back one redemption (never below zero), for a redemption reserved before a payment that
   * was then declined; returns the updated coupon, or undefined when missing.
   */
  releaseRedemption(siteId: number, id: number, now: Date): Promise<CouponRecord | undefined>;
}

/** Which resource a metafield belongs to. */
export type MetafieldResource = 'customer' | 'subscription';

/** Where a metafield shows. */
export interface MetafieldScope {
  /** Hosted pages it shows on; `all` means every one. */
  readonly hosted: readonly string[];
  readonly csv: boolean;
  readonly invoices: boolean;
  readonly statements: boolean;
  readonly portal: boolean;
}

/** A custom field definition. */
export interface MetafieldRecord {
  readonly id: number;
  readonly siteId: number;
  readonly resourceType: MetafieldResource;
  /** Unique per site and resource type. */
  readonly name: string;
  readonly inputType: 'text' | 'dropdown' | 'radio';
  /** Allowed values for dropdown and radio. */
  readonly enumValues: readonly string[] | null;
  readonly scope: MetafieldScope;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A value of a metafield for one resource. Values are strings. */
export interface MetadataRecord {
  readonly id: number;
  readonly siteId: number;
  readonly resourceType: MetafieldResource;
  readonly resourceId: number;
  readonly metafieldId: number;
  readonly name: string;
  readonly value: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Metafields and their values. */
export interface MetafieldsRepository {
  /** Inserts a definition; a taken name (per site and resource type) gives `conflict`. */
  insertField(field: Omit<MetafieldRecord, 'id'>): Promise<MetafieldRecord>;
  findField(siteId: number, resourceType: MetafieldResource, name: string): Promise<MetafieldRecord | undefined>;
  /** The site's definitions for a resource type, by id. */
  listFields(siteId: number, resourceType: MetafieldResource): Promise<MetafieldRecord[]>;
  /** Changes a definition (renaming renames its values); undefined when missing. A taken name gives `conflict`. */
  updateField(
    siteId: number,
    id: number,
    patch: Partial<Pick<MetafieldRecord, 'name' | 'inputType' | 'enumValues' | 'scope' | 'updatedAt'>>,
  ): Promise<MetafieldRecord | undefined>;
  /** Deletes a definition and every value of it; false when missing. */
  deleteField(siteId: number, id: number): Promise<boolean>;
  /** Sets the value of one field for one resource (insert or replace). */
  setValue(value: Omit<MetadataRecord, 'id' | 'createdAt'> & { readonly now: Date }): Promise<MetadataRecord>;
  /** The values of one resource, by field name. */
  listValues(siteId: number, resourceType: MetafieldResource, resourceId: number): Promise<MetadataRecord[]>;
  /** Deletes one value; false when there was none. */
  deleteValue(siteId: number, resourceType: MetafieldResource, resourceId: number, name: string): Promise<boolean>;
  /** Ids of resources whose field `name` has exactly `value` (for list filters). */
  resourcesWithValue(siteId: number, resourceType: MetafieldResource, name: string, value: string): Promise<number[]>;
}

/** A note on a subscription. */
export interface NoteRecord {
  readonly id: number;
  readonly siteId: number;
  readonly subscriptionId: number;
  readonly body: string;
  readonly sticky: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Notes. */
export interface NotesRepository {
  insert(note: Omit<NoteRecord, 'id'>): Promise<NoteRecord>;
  findById(siteId: number, id: number): Promise<NoteRecord | undefined>;
  /** The subscription's notes by id. */
  listForSubscription(siteId: number, subscriptionId: number): Promise<NoteRecord[]>;
  update(
    siteId: number,
    id: number,
    patch: Partial<Pick<NoteRecord, 'body' | 'sticky' | 'updatedAt'>>,
  ): Promise<NoteRecord | undefined>;
  delete(siteId: number, id: number): Promise<boolean>;
}

/** A component on a subscription: its allocation (or metered balance) and pinned price version. */
export interface SubscriptionComponentRecord {
  readonly id: number;
  readonly siteId: number;
  readonly subscriptionId: number;
  readonly componentId: number;
  /** The component version the subscription is billed at (pinned like the product version). */
  readonly componentVersion: number;
  /** Quantity-based units, or 0/1 for on/off. */
  readonly allocatedQuantity: number;
  /** Metered usage accumulated in the current period; reset at renewal. */
  readonly unitBalance: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** One allocation change, kept as history. */
export interface AllocationRecord {
  readonly id: number;
  readonly siteId: number;
  readonly subscriptionId: number;
  readonly componentId: number;
  readonly previousQuantity: number;
  readonly quantity: number;
  readonly memo: string | null;
  /** How the change was charged or credited: `full`, `prorated` or `none`. */
  readonly upgradeCharge: string | null;
  readonly downgradeCredit: string | null;
  readonly accrueCharge: boolean;
  readonly createdAt: Date;
}

/** One metered usage record. */
export interface UsageRecord {
  readonly id: number;
  readonly siteId: number;
  readonly subscriptionId: number;
  readonly componentId: number;
  readonly quantity: number;
  readonly memo: string | null;
  readonly createdAt: Date;
}

/** Components of subscriptions, their allocation history and metered usage. */
export interface SubscriptionComponentsRepository {
  /**
   * Sets a subscription's component (insert, or replace the allocation, version, balance and
   * `updatedAt` of the existing row for that component, keeping its `id` and `createdAt`);
   * returns the stored row.
   */
  upsert(
    row: Omit<SubscriptionComponentRecord, 'id' | 'createdAt'> & { readonly createdAt: Date },
  ): Promise<SubscriptionComponentRecord>;
  /**
   * Inserts the row unless the subscription already has that component; returns the stored row
   * either way. Race-safe: concurrent first uses of a component never overwrite each other.
   */
  ensure(row: Omit<SubscriptionComponentRecord, 'id'>): Promise<SubscriptionComponentRecord>;
  find(siteId: number, subscriptionId: number, componentId: number): Promise<SubscriptionComponentRecord | undefined>;
  /** The subscription's components by component id. */
  listForSubscription(siteId: number, subscriptionId: number): Promise<SubscriptionComponentRecord[]>;
  /**
   * Adds `quantity` (which may be negative: the renewal takes the billed usage off, so usage
   * recorded meanwhile carries over) to the metered `unitBalance` of an existing row atomically
   * (concurrent usage records never lose an update); returns the row before and after, or
   * undefined when missing.
   */
  addUsage(
    siteId: number,
    subscriptionId: number,
    componentId: number,
    quantity: number,
    now: Date,
  ): Promise<{ before: SubscriptionComponentRecord; after: SubscriptionComponentRecord } | undefined>;
  insertAllocation(allocation: Omit<AllocationRecord, 'id'>): Promise<AllocationRecord>;
  /** The subscription's allocations of one component (or all), by id. */
  listAllocations(siteId: number, subscriptionId: number, componentId?: number): Promise<AllocationRecord[]>;
  insertUsage(usage: Omit<UsageRecord, 'id'>): Promise<UsageRecord>;
  /** The subscription's usages of one component, by id. */
  listUsages(siteId: number, subscriptionId: number, componentId: number): Promise<UsageRecord[]>;
}
