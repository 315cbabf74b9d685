/** Removing one subscription and every record it owns. Same conventions as `storage.ts`. */

/** Deletes one subscription's rows from every table that holds them. */
// biome-ignore lint/suspicious/noEmptyInterface: the repository's methods are added with the feature.
export interface PurgeRepository {}
