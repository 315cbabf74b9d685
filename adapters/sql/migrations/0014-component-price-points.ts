/** Migration 14: Price points of components. */
import { columnTypes } from './ddl.js';
import type { Migration } from './migration.js';

/** Price points of components. */
export const componentPricePointsMigration: Migration = {
  id: 14,
  name: 'component-price-points',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await db.schema.alterTable('component_versions').addColumn('price_point_id', t.id).execute();
  },
};
