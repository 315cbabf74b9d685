/** Tables of churn reason codes and coupon subcodes (see `schema.ts`). */

/** Tables of churn reason codes and coupon subcodes, by table name. */
// biome-ignore lint/suspicious/noEmptyInterface: tables are added with the feature.
export interface SiteExtraTables {}
