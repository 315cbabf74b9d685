import { BillingError, type CouponSubcodesRepository, type ReasonCodesRepository } from 'billing-engine';
import { subcodeKey } from '../extra-tables/site-extras.js';
import type { MemoryState } from '../memory-state.js';
import type { Journal } from '../memory-table.js';

/** Reason codes over the memory tables (`state.siteExtraTables`); codes are unique in any letter case. */
export function memoryReasonCodes(state: MemoryState, journal: Journal): ReasonCodesRepository {
  const table = state.siteExtraTables.reasonCodes;
  const taken = (siteId: number, code: string | undefined, exceptId?: number) =>
    code !== undefined &&
    table.count((r) => r.siteId === siteId && r.code.toLowerCase() === code.toLowerCase() && r.id !== exceptId) > 0;
  const conflict = (code: string) => new BillingError('conflict', `Reason code ${code} is already taken.`);
  return {
    async insert(code) {
      if (taken(code.siteId, code.code)) throw conflict(code.code);
      return table.insert(journal, { ...code, id: table.nextId() });
    },
    async findById(siteId, id) {
      const row = table.get(id);
      return row?.siteId === siteId ? row : undefined;
    },
    async findByCode(siteId, code) {
      return table.find((r) => r.siteId === siteId && r.code.toLowerCase() === code.toLowerCase());
    },
    async list(siteId, page) {
      return table
        .filter((r) => r.siteId === siteId)
        .sort((a, b) => a.position - b.position || a.id - b.id)
        .slice((page.page - 1) * page.perPage, page.page * page.perPage);
    },
    async update(siteId, id, patch) {
      const row = table.get(id);
      if (row === undefined || row.siteId !== siteId) return undefined;
      if (taken(siteId, patch.code, id)) throw conflict(patch.code as string);
      const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
      return table.replace(journal, { ...row, ...defined });
    },
    async delete(siteId, id) {
      const row = table.peek(id);
      if (row === undefined || row.siteId !== siteId) return false;
      return table.delete(journal, id);
    },
  };
}

/** Coupon subcodes over the memory tables (`state.siteExtraTables`). */
export function memoryCouponSubcodes(state: MemoryState, journal: Journal): CouponSubcodesRepository {
  const tables = state.siteExtraTables;
  const table = tables.couponSubcodes;
  const byCode = (siteId: number, code: string) =>
    table.findIndexed(tables.subcodesByCode, subcodeKey(siteId, code), (s) => s.siteId === siteId && s.code === code);
  return {
    async insert(subcode) {
      if (byCode(subcode.siteId, subcode.code) !== undefined) return undefined;
      return table.insert(journal, { ...subcode, id: table.nextId() });
    },
    async findByCode(siteId, code) {
      return byCode(siteId, code);
    },
    async list(siteId, couponId, page) {
      return table
        .filter((s) => s.siteId === siteId && s.couponId === couponId)
        .slice((page.page - 1) * page.perPage, page.page * page.perPage);
    },
    async delete(siteId, couponId, code) {
      const row = byCode(siteId, code);
      if (row === undefined || row.couponId !== couponId) return false;
      return table.delete(journal, row.id);
    },
    async deleteAll(siteId, couponId) {
      return table.deleteWhere(journal, (s) => s.siteId === siteId && s.couponId === couponId);
    },
  };
}
