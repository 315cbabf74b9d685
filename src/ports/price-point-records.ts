/** Records and repository of price points of products and components. Same conventions as `storage.ts`. */

import type { ComponentPricing, ComponentRecord, ComponentVersionRecord } from './catalog-extras.js';
import type { ProductRecord, ProductTerms, ProductVersionRecord } from './catalog-records.js';

/**
 * What a price point is to its product: the one `default` new signups get, a `catalog` alternative
 * a signup or migration can name, or a `custom` one made for one subscription (a signup's or a
 * migration's `custom_price`), which no other subscription can be signed up or migrated on.
 */
export type PricePointType = 'default' | 'catalog' | 'custom';

/**
 * A price point of a product: a named, handled set of billing terms. Its terms are not stored
 * here: each revision of them is a product version (`product_versions`, marked with the price
 * point's id), and `version` names the current one. A subscription pins the product version it was
 * sold, so editing a price point never changes what an existing subscriber pays.
 */
export interface ProductPricePointRecord {
  readonly id: number;
  readonly siteId: number;
  readonly productId: number;
  readonly name: string;
  /** Unique per product. */
  readonly handle: string;
  readonly type: PricePointType;
  /** The product version holding the current terms. For the default it is the product's current version. */
  readonly version: number;
  readonly archivedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /**
   * The subscription a `custom` price point was made for (absent or null for the others, and for a
   * custom one in the moment between its insert and its subscription's).
   */
  readonly subscriptionId?: number | null;
}

/** Options of {@link PricePointsRepository.listProductPricePoints}. */
export interface ProductPricePointListOptions {
  /** Only this product's price points. */
  readonly productId?: number;
  /** Archived ones too (false by default). */
  readonly includeArchived?: boolean;
  /** Only archived ones. */
  readonly onlyArchived?: boolean;
}

/**
 * A price point of a component: a named, handled pricing (scheme and brackets). As with products,
 * its pricing is not stored here: each revision is a component version (`component_versions`,
 * marked with the price point's id) and `version` names the current one. A subscription's
 * component pins the version it is billed at, so editing a price point never changes what an
 * existing subscriber pays until the subscription is moved to it again.
 */
export interface ComponentPricePointRecord {
  readonly id: number;
  readonly siteId: number;
  readonly componentId: number;
  readonly name: string;
  /** Unique per component. */
  readonly handle: string;
  readonly type: PricePointType;
  /** The component version holding the current pricing. For the default it is the component's current version. */
  readonly version: number;
  readonly archivedAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Options of {@link PricePointsRepository.listComponentPricePoints}. */
export interface ComponentPricePointListOptions {
  /** Only this component's price points. */
  readonly componentId?: number;
  /** Archived ones too (false by default). */
  readonly includeArchived?: boolean;
  /** Only archived ones. */
  readonly onlyArchived?: boolean;
}

/**
 * Price points of products and components. Every product has exactly one of type `default` (made
 * with the product), and so has every component (made with the component: name `Original`, handle
 * `original`).
 */
export interface PricePointsRepository {
  /**
   * Inserts a `catalog` price point with its first terms as a new product version (numbered after
   * the product's highest, and not made current). A handle taken on the product gives `conflict`.
   */
  insertProductPricePoint(
    pricePoint: Omit<ProductPricePointRecord, 'id' | 'version' | 'type' | 'subscriptionId'>,
    terms: ProductTerms,
  ): Promise<{ pricePoint: ProductPricePointRecord; version: ProductVersionRecord }>;
  /**
   * Inserts a `custom` price point (one subscription's `custom_price`) with its terms as a new
   * product version, as {@link insertProductPricePoint} does a `catalog` one; `subscriptionId` may
   * be null when the subscription is written after it (a signup), and set with
   * {@link setProductPricePointSubscription}. A handle taken on the product gives `conflict`.
   */
  insertCustomProductPricePoint(
    pricePoint: Omit<ProductPricePointRecord, 'id' | 'version' | 'type'>,
    terms: ProductTerms,
  ): Promise<{ pricePoint: ProductPricePointRecord; version: ProductVersionRecord }>;
  /** Sets the subscription a price point belongs to; undefined when missing. */
  setProductPricePointSubscription(
    siteId: number,
    id: number,
    subscriptionId: number,
    now: Date,
  ): Promise<ProductPricePointRecord | undefined>;
  /**
   * Changes a price point's name or handle and, when `terms` is given, adds a product version with
   * them and points the price point at it (and the product, when it is the default). Undefined when
   * missing. A taken handle gives `conflict`.
   */
  reviseProductPricePoint(
    siteId: number,
    id: number,
    patch: { readonly name?: string; readonly handle?: string },
    terms: ProductTerms | undefined,
    now: Date,
  ): Promise<{ pricePoint: ProductPricePointRecord; version: ProductVersionRecord } | undefined>;
  /** Sets or clears `archivedAt`; undefined when missing. */
  setProductPricePointArchived(
    siteId: number,
    id: number,
    archivedAt: Date | null,
    now: Date,
  ): Promise<ProductPricePointRecord | undefined>;
  /**
   * Makes a price point its product's default: the previous default becomes `catalog` and the
   * product's current version becomes the price point's. Undefined when missing.
   */
  makeDefaultProductPricePoint(
    siteId: number,
    id: number,
    now: Date,
  ): Promise<{ pricePoint: ProductPricePointRecord; product: ProductRecord } | undefined>;
  findProductPricePoint(siteId: number, id: number): Promise<ProductPricePointRecord | undefined>;
  findProductPricePointByHandle(
    siteId: number,
    productId: number,
    handle: string,
  ): Promise<ProductPricePointRecord | undefined>;
  /** The product's default price point. */
  findDefaultProductPricePoint(siteId: number, productId: number): Promise<ProductPricePointRecord | undefined>;
  /** The site's price points (of one product when given) by id. */
  listProductPricePoints(siteId: number, options?: ProductPricePointListOptions): Promise<ProductPricePointRecord[]>;

  /**
   * Inserts a `catalog` price point of a component with its first pricing as a new component
   * version (numbered after the component's highest, and not made current). A handle taken on the
   * component gives `conflict`.
   */
  insertComponentPricePoint(
    pricePoint: Omit<ComponentPricePointRecord, 'id' | 'version' | 'type'>,
    pricing: ComponentPricing,
  ): Promise<{ pricePoint: ComponentPricePointRecord; version: ComponentVersionRecord }>;
  /**
   * Changes a component price point's name or handle and, when `pricing` is given, adds a component
   * version with it and points the price point at it (and the component, when it is the default).
   * Undefined when missing. A taken handle gives `conflict`.
   */
  reviseComponentPricePoint(
    siteId: number,
    id: number,
    patch: { readonly name?: string; readonly handle?: string },
    pricing: ComponentPricing | undefined,
    now: Date,
  ): Promise<{ pricePoint: ComponentPricePointRecord; version: ComponentVersionRecord } | undefined>;
  /** Sets or clears a component price point's `archivedAt`; undefined when missing. */
  setComponentPricePointArchived(
    siteId: number,
    id: number,
    archivedAt: Date | null,
    now: Date,
  ): Promise<ComponentPricePointRecord | undefined>;
  /**
   * Makes a price point its component's default: the previous default becomes `catalog` and the
   * component's current version becomes the price point's. Undefined when missing.
   */
  makeDefaultComponentPricePoint(
    siteId: number,
    id: number,
    now: Date,
  ): Promise<{ pricePoint: ComponentPricePointRecord; component: ComponentRecord } | undefined>;
  findComponentPricePoint(siteId: number, id: number): Promise<ComponentPricePointRecord | undefined>;
  findComponentPricePointByHandle(
    siteId: number,
    componentId: number,
    handle: string,
  ): Promise<ComponentPricePointRecord | undefined>;
  /** The component's default price point. */
  findDefaultComponentPricePoint(siteId: number, componentId: number): Promise<ComponentPricePointRecord | undefined>;
  /**
   * The price point a component version belongs to (the one it was made for); undefined for a
   * version made by no price point (none since migration 14) or a missing one.
   */
  findComponentVersionPricePoint(
    siteId: number,
    componentId: number,
    version: number,
  ): Promise<ComponentPricePointRecord | undefined>;
  /** The site's component price points (of one component when given) by id. */
  listComponentPricePoints(
    siteId: number,
    options?: ComponentPricePointListOptions,
  ): Promise<ComponentPricePointRecord[]>;
}
