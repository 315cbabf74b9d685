/**
 * Records and repositories of the billing slice, one file per part: catalog, customers and payment
 * profiles, subscriptions, the ledger and payment attempts. Same conventions as `storage.ts`.
 */

export type * from './catalog-records.js';
export type * from './customer-records.js';
export type * from './ledger-records.js';
export type { PageRequest } from './page-request.js';
export type * from './subscription-records.js';
