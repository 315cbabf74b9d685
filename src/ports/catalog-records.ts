/** Records and repository of the catalog: product families, products and their versioned terms. Same conventions as `storage.ts`. */

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
  /**
   * The price point whose terms these are (see `price-point-records.ts`). Every version made since
   * price points exist has one; absent on records built by callers that predate them.
   */
  readonly pricePointId?: number | null;
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
  /**
   * Inserts a product with version 1 of its terms and its default price point (name `Original`,
   * handle `original`, as the service names it) pointing at that version; a taken handle gives
   * `conflict`.
   */
  insertProduct(
    product: Omit<ProductRecord, 'id' | 'currentVersion'>,
    terms: ProductTerms,
  ): Promise<{ product: ProductRecord; version: ProductVersionRecord }>;
  /**
   * Adds a version of the default price point's terms (numbered after the product's highest, which
   * is `expectedCurrent + 1` when the product has no other price points) and makes it current for
   * the product and its default price point, only if the product's current version is still
   * `expectedCurrent`; undefined when the product is missing or another edit won.
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
