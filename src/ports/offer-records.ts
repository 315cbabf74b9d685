/** Records and repository of offers (catalog packages of a product, components and coupons). Same conventions as `storage.ts`. */

/** One component of an offer: the component, its price point (null: the component's default) and its starting quantity. */
export interface OfferItemRecord {
  readonly componentId: number;
  readonly pricePointId: number | null;
  /** Whole units (quantity-based), 0 or 1 (on/off) or a starting balance (metered). */
  readonly startingQuantity: number;
}

/**
 * An offer: a product (at one of its price points, or its default when null), components at
 * starting quantities and coupons, which a signup can name (`offer_id`) instead of giving them.
 * Catalog data: kept when the site's data is cleared, removed with the site.
 */
export interface OfferRecord {
  readonly id: number;
  readonly siteId: number;
  readonly name: string;
  /** Unique per site. */
  readonly handle: string;
  readonly description: string | null;
  readonly productId: number;
  /** The product's price point; null means the product's default (whichever it is at signup). */
  readonly productPricePointId: number | null;
  /** In the order given at create. */
  readonly items: readonly OfferItemRecord[];
  /** Coupon ids, in the order given at create. */
  readonly couponIds: readonly number[];
  readonly archivedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A page of the offer list. */
export interface OfferListOptions {
  /** Archived offers too (false by default). */
  readonly includeArchived?: boolean;
  readonly offset: number;
  readonly limit: number;
}

/** Offers of a site. */
export interface OffersRepository {
  /** Inserts an offer; a handle taken on the site gives `conflict`. */
  insert(offer: Omit<OfferRecord, 'id'>): Promise<OfferRecord>;
  findById(siteId: number, id: number): Promise<OfferRecord | undefined>;
  findByHandle(siteId: number, handle: string): Promise<OfferRecord | undefined>;
  /** One page of the site's offers by id. */
  list(siteId: number, options: OfferListOptions): Promise<OfferRecord[]>;
  /** Sets or clears `archivedAt`; undefined when missing. */
  setArchived(siteId: number, id: number, archivedAt: Date | null, now: Date): Promise<OfferRecord | undefined>;
}
