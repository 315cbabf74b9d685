/** Migration 14: Price points of components. */
import type { Migration } from './migration.js';

/** Price points of components. */
export const componentPricePointsMigration: Migration = {
  id: 14,
  name: 'component-price-points',
  async up(_db, _dialect) {},
};
