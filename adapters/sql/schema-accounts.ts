/** Tables of prepayments, service credits and data exports (see `schema.ts`). */

/** Tables of prepayments, service credits and data exports, by table name. */
// biome-ignore lint/suspicious/noEmptyInterface: tables are added with the feature.
export interface AccountTables {}
