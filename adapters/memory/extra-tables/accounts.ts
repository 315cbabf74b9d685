import type { SiteOwnedTable } from '../memory-state.js';

/** Tables of prepayments, service credits and data exports in memory; `MemoryState` holds one. */
export class AccountTables {
  /** Tables whose rows belong to a site: removed when the site is deleted. */
  siteOwned(): SiteOwnedTable[] {
    return [...this.customerOwned()];
  }

  /** Tables of customer data: removed when the site's data is cleared. */
  customerOwned(): SiteOwnedTable[] {
    return [];
  }
}
