import type { CouponSubcodesRepository, ReasonCodesRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Reason codes over the memory tables (`state.siteExtraTables`). */
export function memoryReasonCodes(_state: MemoryState, _journal: Journal): ReasonCodesRepository {
  return {};
}

/** Coupon subcodes over the memory tables (`state.siteExtraTables`). */
export function memoryCouponSubcodes(_state: MemoryState, _journal: Journal): CouponSubcodesRepository {
  return {};
}
