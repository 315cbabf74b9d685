/**
 * Migration 20: custom price points. A subscription's `custom_price` is a product price point of
 * type `custom`; `subscription_id` names the subscription it was made for (null for the others).
 */
import { columnTypes } from './ddl.js';
import type { Migration } from './migration.js';

/** The subscription a custom price point belongs to. */
export const customPricesMigration: Migration = {
  id: 20,
  name: 'custom-prices',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await db.schema.alterTable('product_price_points').addColumn('subscription_id', t.id).execute();
  },
};
