/** Purging one subscription on SQL. */
import type { PurgeRepository } from 'billing-engine';
import type { RepositoryContext } from './repository-context.js';

/** Builds the purge repository of one transaction. */
export function createPurgeRepository(_ctx: RepositoryContext): PurgeRepository {
  return {};
}
