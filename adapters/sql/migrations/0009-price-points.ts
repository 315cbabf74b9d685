/**
 * Migration 9: price points of products. A price point's terms stay in `product_versions` (each
 * revision one version row, marked with `price_point_id`), so billing keeps reading versions
 * alone. Every existing product gets its default price point, pointing at its current version,
 * and its existing versions are marked as that price point's.
 */
import { sql } from 'kysely';
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/** Price points of products. */
export const pricePointsMigration: Migration = {
  id: 9,
  name: 'price-points',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await finishTable(
      createTenantTable(db, dialect, 'product_price_points')
        .addColumn('product_id', t.id, (col) => col.notNull())
        .addColumn('name', t.text, (col) => col.notNull())
        .addColumn('handle', t.text, (col) => col.notNull())
        .addColumn('type', t.text, (col) => col.notNull())
        .addColumn('version', t.integer, (col) => col.notNull())
        .addColumn('archived_at', t.instant)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addForeignKeyConstraint('product_price_points_product_fkey', ['site_id', 'product_id'], 'products', [
          'site_id',
          'id',
        ])
        .addUniqueConstraint('product_price_points_handle_key', ['site_id', 'product_id', 'handle']),
      dialect,
    ).execute();
    await db.schema.alterTable('product_versions').addColumn('price_point_id', t.id).execute();
    // Backfill: the name and handle the service gives the price point a product is created with.
    await sql`
      insert into product_price_points (site_id, product_id, name, handle, type, version, archived_at, created_at, updated_at)
      select site_id, id, 'Original', 'original', 'default', current_version, null, created_at, updated_at from products
    `.execute(db);
    await sql`
      update product_versions set price_point_id = (
        select pp.id from product_price_points pp
        where pp.site_id = product_versions.site_id and pp.product_id = product_versions.product_id
      )
    `.execute(db);
  },
};
