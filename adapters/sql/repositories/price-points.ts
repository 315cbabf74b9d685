/** Price points of products and components on SQL. */
import type { PricePointsRepository } from 'billing-engine';
import type { RepositoryContext } from './repository-context.js';

/** Builds the price-points repository of one transaction. */
export function createPricePointsRepository(_ctx: RepositoryContext): PricePointsRepository {
  return {};
}
