/** Records and repositories of account balances (prepayments, service credits) and data exports. Same conventions as `storage.ts`. */

/** Prepayments and service credits of subscriptions. */
// biome-ignore lint/suspicious/noEmptyInterface: the repository's methods are added with the feature.
export interface AccountsRepository {}

/** Asynchronous data exports and their files. */
// biome-ignore lint/suspicious/noEmptyInterface: the repository's methods are added with the feature.
export interface ExportsRepository {}
