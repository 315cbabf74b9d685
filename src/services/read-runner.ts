import type { SiteRecord, Storage, StorageTransaction } from '../ports/storage.js';
import { loadSite } from './site-lookup.js';

/** What a query sees: its read-only transaction and the site it was asked about, read once. */
export interface ReadContext {
  readonly tx: StorageTransaction;
  readonly site: SiteRecord;
}

/** The dependencies of {@link runRead}: only the storage (queries record no events and read no clock). */
export interface ReadDeps {
  readonly storage: Storage;
}

/**
 * Runs one engine query in one read-only transaction: the site is resolved once, by subdomain
 * (`not_found` when there is none), and `work` reads everything else through the same
 * transaction, so it sees one committed state and, on SQLite, never waits for a writer (see
 * `TransactionOptions.readOnly`). `work` must not write: the SQL adapters refuse it.
 */
export function runRead<T>(deps: ReadDeps, subdomain: string, work: (ctx: ReadContext) => Promise<T>): Promise<T> {
  return deps.storage.transaction(async (tx) => work({ tx, site: await loadSite(tx, subdomain) }), { readOnly: true });
}

/**
 * Like {@link runRead} for queries that are not about one site (a site list, a lookup across
 * sites by a direct-post `api_id`).
 */
export function runReadWithoutSite<T>(deps: ReadDeps, work: (tx: StorageTransaction) => Promise<T>): Promise<T> {
  return deps.storage.transaction(work, { readOnly: true });
}
