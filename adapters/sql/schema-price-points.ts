/** Tables of product and component price points (see `schema.ts`). */

/** Tables of product and component price points, by table name. */
// biome-ignore lint/suspicious/noEmptyInterface: tables are added with the feature.
export interface PricePointTables {}
