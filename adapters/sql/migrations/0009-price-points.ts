/** Migration 9: Price points of products and components. */
import type { Migration } from './migration.js';

/** Price points of products and components. */
export const pricePointsMigration: Migration = {
  id: 9,
  name: 'price-points',
  async up(_db, _dialect) {},
};
