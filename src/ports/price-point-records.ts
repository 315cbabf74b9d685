/** Records and repository of price points of products and components. Same conventions as `storage.ts`. */

/** Price points of products and components (filled in by the price-points work). */
// biome-ignore lint/suspicious/noEmptyInterface: the repository's methods are added with the feature.
export interface PricePointsRepository {}
