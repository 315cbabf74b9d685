/** Read-only queries across a site's records for reports (statistics, MRR, site-wide lists). Same conventions as `storage.ts`. */

/** Site-wide reads: statistics, MRR, metadata of a resource type, subscription components. */
// biome-ignore lint/suspicious/noEmptyInterface: the repository's methods are added with the feature.
export interface ReportsRepository {}
