import { BillingError, type CouponsRepository } from 'billing-engine';
import { subcodeKey } from '../extra-tables/site-extras.js';
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
      const coupon = state.coupons.find((c) => c.siteId === siteId && c.code === code);
      if (coupon !== undefined) return coupon;
      // Not a coupon's own code: a subcode applies its coupon.
      const tables = state.siteExtraTables;
      const subcode = tables.couponSubcodes.findIndexed(
        tables.subcodesByCode,
        subcodeKey(siteId, code),
        (s) => s.siteId === siteId && s.code === code,
      );
      const parent = subcode === undefined ? undefined : state.coupons.get(subcode.couponId);
      return parent?.siteId === siteId ? parent : undefined;
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
