/** Migration 21: offers (a product at a price point, components at starting quantities, coupons). */
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/**
 * One row per offer, its components and coupon ids as JSON lists in the row. Catalog data: it
 * goes with the site (`ON DELETE CASCADE` on `site_id`) and stays when the site's data is cleared.
 * The product is referenced with the site (a product is never deleted, only archived).
 */
export const offersMigration: Migration = {
  id: 21,
  name: 'offers',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await finishTable(
      createTenantTable(db, dialect, 'offers')
        .addColumn('name', t.text, (col) => col.notNull())
        .addColumn('handle', t.text, (col) => col.notNull())
        .addColumn('description', t.text)
        .addColumn('product_id', t.id, (col) => col.notNull())
        .addColumn('product_price_point_id', t.id)
        .addColumn('items', t.json, (col) => col.notNull())
        .addColumn('coupon_ids', t.json, (col) => col.notNull())
        .addColumn('archived_at', t.instant)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('offers_site_id_handle_key', ['site_id', 'handle'])
        .addForeignKeyConstraint('offers_product_fkey', ['site_id', 'product_id'], 'products', ['site_id', 'id']),
      dialect,
    ).execute();
  },
};
