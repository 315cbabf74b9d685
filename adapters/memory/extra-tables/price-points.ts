import type { ProductPricePointRecord } from 'billing-engine';
import { keyOf, type SiteOwnedTable } from '../memory-state.js';
import { MemoryTable } from '../memory-table.js';

/** Tables of product and component price points in memory; `MemoryState` holds one. */
export class PricePointTables {
  readonly productPricePoints = new MemoryTable<ProductPricePointRecord>();
  /** Price points by site and product: every product read and signup on a price point looks here. */
  readonly productPricePointsByProduct = this.productPricePoints.index((p) => keyOf(p.siteId, p.productId));

  /** Tables whose rows belong to a site: removed when the site is deleted. */
  siteOwned(): SiteOwnedTable[] {
    // Catalog, not customer data: a data clear keeps them, as it keeps products.
    return [this.productPricePoints, ...this.customerOwned()];
  }

  /** Tables of customer data: removed when the site's data is cleared. */
  customerOwned(): SiteOwnedTable[] {
    return [];
  }
}
