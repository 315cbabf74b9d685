import type { CouponSubcodeRecord, ReasonCodeRecord } from 'billing-engine';
import type { SiteOwnedTable } from '../memory-state.js';
import { MemoryTable } from '../memory-table.js';

/** Tables of churn reason codes and coupon subcodes in memory; `MemoryState` holds one. */
export class SiteExtraTables {
  readonly reasonCodes = new MemoryTable<ReasonCodeRecord>();
  readonly couponSubcodes = new MemoryTable<CouponSubcodeRecord>();
  /** Subcodes by site and code (unique): every coupon lookup by code that misses a coupon reads it. */
  readonly subcodesByCode = this.couponSubcodes.index((s) => subcodeKey(s.siteId, s.code));

  /** Tables whose rows belong to a site: removed when the site is deleted. */
  siteOwned(): SiteOwnedTable[] {
    // Site configuration, not customer data: a data clear keeps them.
    return [this.reasonCodes, this.couponSubcodes, ...this.customerOwned()];
  }

  /** Tables of customer data: removed when the site's data is cleared. */
  customerOwned(): SiteOwnedTable[] {
    return [];
  }
}

/** The key of {@link SiteExtraTables.subcodesByCode} (built here: memory-state imports this file). */
export function subcodeKey(siteId: number, code: string): string {
  return `${siteId}\u0000${code}`;
}
