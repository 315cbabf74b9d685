/** Site-wide report reads on SQL. */
import type { ReportsRepository } from 'billing-engine';
import type { RepositoryContext } from './repository-context.js';

/** Builds the reports repository of one transaction. */
export function createReportsRepository(_ctx: RepositoryContext): ReportsRepository {
  return {};
}
