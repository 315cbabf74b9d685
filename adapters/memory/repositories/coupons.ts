import { BillingError, type CouponsRepository } from 'billing-engine';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Coupons over the memory tables; writers are serialised, so redeem's check-then-increment is atomic. */
export function memoryCoupons(state: MemoryState, journal: Journal): CouponsRepository {
  const codeTaken = (siteId: number, code: string | undefined, exceptId?: number) =>
    code !== undefined && state.coupons.count((c) => c.siteId === siteId && c.code === code && c.id !== exceptId) > 0;
  return {
    async insert(coupon) {
      if (codeTaken(coupon.siteId, coupon.code)) throw new BillingError('conflict', 'Code is already taken.');
      return state.coupons.insert(journal, { ...coupon, id: state.coupons.nextId(), redemptions: 0 });
    },
    async findById(siteId, id) {
      const coupon = state.coupons.get(id);
      return coupon?.siteId === siteId ? coupon : undefined;
    },
    async findByCode(siteId, code) {
      return state.coupons.find((c) => c.siteId === siteId && c.code === code);
    },
    async list(siteId, page) {
      return state.coupons
        .filter((c) => c.siteId === siteId)
        .slice((page.page - 1) * page.perPage, page.page * page.perPage);
    },
    async update(siteId, id, patch) {
      const coupon = state.coupons.get(id);
      if (coupon === undefined || coupon.siteId !== siteId) return undefined;
      if (codeTaken(siteId, patch.code, id)) throw new BillingError('conflict', 'Code is already taken.');
      return state.coupons.replace(journal, { ...coupon, ...patch });
    },
    async redeem(siteId, id, now) {
      const coupon = state.coupons.get(id);
      if (coupon === undefined || coupon.siteId !== siteId) return undefined;
      if (coupon.conversionLimit !== null && coupon.redemptions >= coupon.conversionLimit) return undefined;
      return state.coupons.replace(journal, { ...coupon, redemptions: coupon.redemptions + 1, updatedAt: now });
    },
    async releaseRedemption(siteId, id, now) {
      const coupon = state.coupons.get(id);
      if (coupon === undefined || coupon.siteId !== siteId) return undefined;
      return state.coupons.replace(journal, {
        ...coupon,
        redemptions: Math.max(0, coupon.redemptions - 1),
        updatedAt: now,
      });
    },
  };
}
