/** Records and repositories of churn reason codes and coupon subcodes. Same conventions as `storage.ts`. */
import type { PageRequest } from './page-request.js';

/** A churn reason code: why customers cancel (offered on cancellation, kept on the subscription). */
export interface ReasonCodeRecord {
  readonly id: number;
  readonly siteId: number;
  /** As the merchant spelled it; unique per site in any letter case. */
  readonly code: string;
  readonly description: string;
  /** The order codes are listed in (lower first; ties by id). */
  readonly position: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** Churn reason codes of a site. */
export interface ReasonCodesRepository {
  /** Inserts a code; a code taken on the site (in any letter case) gives `conflict`. */
  insert(code: Omit<ReasonCodeRecord, 'id'>): Promise<ReasonCodeRecord>;
  findById(siteId: number, id: number): Promise<ReasonCodeRecord | undefined>;
  /** By code in any letter case. */
  findByCode(siteId: number, code: string): Promise<ReasonCodeRecord | undefined>;
  /** One page of the site's codes by position, then id. */
  list(siteId: number, page: PageRequest): Promise<ReasonCodeRecord[]>;
  /** Changes fields; undefined when missing. A code taken by another (in any letter case) gives `conflict`. */
  update(
    siteId: number,
    id: number,
    patch: Partial<Pick<ReasonCodeRecord, 'code' | 'description' | 'position' | 'updatedAt'>>,
  ): Promise<ReasonCodeRecord | undefined>;
  /** Deletes a code; false when missing. */
  delete(siteId: number, id: number): Promise<boolean>;
}

/** An extra code of a coupon: using it applies the coupon. */
export interface CouponSubcodeRecord {
  readonly id: number;
  readonly siteId: number;
  readonly couponId: number;
  /** Normalised upper case, like coupon codes; unique per site among subcodes. */
  readonly code: string;
  readonly createdAt: Date;
}

/** Subcodes of coupons. */
export interface CouponSubcodesRepository {
  /**
   * Inserts a subcode; returns undefined (and writes nothing) when the site already has that
   * subcode, on any coupon. Race-safe: of concurrent inserts of one code, one gets the row.
   */
  insert(subcode: Omit<CouponSubcodeRecord, 'id'>): Promise<CouponSubcodeRecord | undefined>;
  /** By normalised code (the caller upper-cases). */
  findByCode(siteId: number, code: string): Promise<CouponSubcodeRecord | undefined>;
  /** One page of a coupon's subcodes, by id. */
  list(siteId: number, couponId: number, page: PageRequest): Promise<CouponSubcodeRecord[]>;
  /** Deletes one subcode of a coupon; false when the coupon has no such subcode. */
  delete(siteId: number, couponId: number, code: string): Promise<boolean>;
  /** Deletes every subcode of a coupon; returns how many. */
  deleteAll(siteId: number, couponId: number): Promise<number>;
}
