import type { ComponentPricePointRecord, ProductPricePointRecord } from 'billing-engine';
import { keyOf, type SiteOwnedTable } from '../memory-state.js';
import { MemoryTable } from '../memory-table.js';

/**
 * Which price point a component version was made for: the `component_versions.price_point_id`
 * column of the SQL storages, kept beside the version rows so those stay plain records.
 */
export interface ComponentVersionPricePointRow {
  readonly id: number;
  readonly siteId: number;
  readonly componentId: number;
  readonly version: number;
  readonly pricePointId: number;
}

/** Tables of product and component price points in memory; `MemoryState` holds one. */
export class PricePointTables {
  readonly productPricePoints = new MemoryTable<ProductPricePointRecord>();
  /** Price points by site and product: every product read and signup on a price point looks here. */
  readonly productPricePointsByProduct = this.productPricePoints.index((p) => keyOf(p.siteId, p.productId));
  readonly componentPricePoints = new MemoryTable<ComponentPricePointRecord>();
  /** Price points by site and component: every component read and allocation on a price point looks here. */
  readonly componentPricePointsByComponent = this.componentPricePoints.index((p) => keyOf(p.siteId, p.componentId));
  readonly componentVersionPricePoints = new MemoryTable<ComponentVersionPricePointRow>();
  readonly componentVersionPricePointsByVersion = this.componentVersionPricePoints.index((r) =>
    keyOf(r.siteId, r.componentId, r.version),
  );

  /** Tables whose rows belong to a site: removed when the site is deleted. */
  siteOwned(): SiteOwnedTable[] {
    // Catalog, not customer data: a data clear keeps them, as it keeps products.
    return [
      this.productPricePoints,
      this.componentPricePoints,
      this.componentVersionPricePoints,
      ...this.customerOwned(),
    ];
  }

  /** Tables of customer data: removed when the site's data is cleared. */
  customerOwned(): SiteOwnedTable[] {
    return [];
  }
}
