/**
 * Migration 14: price points of components. As with products (migration 9), a price point's
 * pricing stays in `component_versions` (each revision one version row, marked with
 * `price_point_id`), so billing keeps reading versions alone. Every existing component gets its
 * default price point, pointing at its current version, and its existing versions are marked as
 * that price point's.
 */
import { sql } from 'kysely';
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/** Price points of components. */
export const componentPricePointsMigration: Migration = {
  id: 14,
  name: 'component-price-points',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await db.schema.alterTable('component_versions').addColumn('price_point_id', t.id).execute();
    await finishTable(
      createTenantTable(db, dialect, 'component_price_points')
        .addColumn('component_id', t.id, (col) => col.notNull())
        .addColumn('name', t.text, (col) => col.notNull())
        .addColumn('handle', t.text, (col) => col.notNull())
        .addColumn('type', t.text, (col) => col.notNull())
        .addColumn('version', t.integer, (col) => col.notNull())
        .addColumn('archived_at', t.instant)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addForeignKeyConstraint('component_price_points_component_fkey', ['site_id', 'component_id'], 'components', [
          'site_id',
          'id',
        ])
        .addUniqueConstraint('component_price_points_handle_key', ['site_id', 'component_id', 'handle']),
      dialect,
    ).execute();
    // Backfill: the name and handle the repository gives the price point a component is created with.
    await sql`
      insert into component_price_points (site_id, component_id, name, handle, type, version, archived_at, created_at, updated_at)
      select site_id, id, 'Original', 'original', 'default', current_version, null, created_at, updated_at from components
    `.execute(db);
    await sql`
      update component_versions set price_point_id = (
        select pp.id from component_price_points pp
        where pp.site_id = component_versions.site_id and pp.component_id = component_versions.component_id
      )
    `.execute(db);
  },
};
