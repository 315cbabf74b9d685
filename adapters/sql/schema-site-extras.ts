/** Tables of churn reason codes and coupon subcodes (see `schema.ts`). */
import type { IdColumn, InstantColumn, Int8Column } from './schema.js';

/** A churn reason code; `code_key` is the lower-cased code the uniqueness is kept on. */
export interface ReasonCodesTable {
  id: IdColumn;
  site_id: Int8Column;
  code: string;
  code_key: string;
  description: string;
  position: number;
  created_at: InstantColumn;
  updated_at: InstantColumn;
}

/** A subcode of a coupon (normalised upper case, unique per site). */
export interface CouponSubcodesTable {
  id: IdColumn;
  site_id: Int8Column;
  coupon_id: Int8Column;
  code: string;
  created_at: InstantColumn;
}

/** Tables of churn reason codes and coupon subcodes, by table name. */
export interface SiteExtraTables {
  reason_codes: ReasonCodesTable;
  coupon_subcodes: CouponSubcodesTable;
}
