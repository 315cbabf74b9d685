/** Records and repositories of churn reason codes and coupon subcodes. Same conventions as `storage.ts`. */

/** Churn reason codes of a site. */
// biome-ignore lint/suspicious/noEmptyInterface: the repository's methods are added with the feature.
export interface ReasonCodesRepository {}

/** Subcodes of coupons. */
// biome-ignore lint/suspicious/noEmptyInterface: the repository's methods are added with the feature.
export interface CouponSubcodesRepository {}
