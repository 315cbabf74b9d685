/**
 * Migration 3: components with immutable pricing versions, coupons, metafields with their values,
 * and notes on subscriptions.
 */
import { sql } from 'kysely';
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/** Creates the catalog-extras tables. */
export const catalogExtrasMigration: Migration = {
  id: 3,
  name: 'catalog-extras',
  async up(db, dialect) {
    const t = columnTypes(dialect);

    await finishTable(
      createTenantTable(db, dialect, 'components')
        .addColumn('family_id', t.id, (col) => col.notNull())
        .addColumn('kind', t.text, (col) => col.notNull())
        .addColumn('name', t.text, (col) => col.notNull())
        .addColumn('handle', t.text)
        .addColumn('unit_name', t.text, (col) => col.notNull())
        .addColumn('description', t.text)
        .addColumn('taxable', t.boolean, (col) => col.notNull())
        .addColumn('current_version', t.integer, (col) => col.notNull())
        .addColumn('archived_at', t.instant)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('components_site_id_handle_key', ['site_id', 'handle'])
        .addForeignKeyConstraint('components_family_fkey', ['site_id', 'family_id'], 'product_families', [
          'site_id',
          'id',
        ]),
      dialect,
    ).execute();
    await db.schema
      .createIndex('components_family_idx')
      .on('components')
      .columns(['site_id', 'family_id', 'id'])
      .execute();

    await finishTable(
      db.schema
        .createTable('component_versions')
        .addColumn('site_id', t.id, (col) => col.notNull().references('sites.id').onDelete('cascade'))
        .addColumn('component_id', t.id, (col) => col.notNull())
        .addColumn('version', t.integer, (col) => col.notNull())
        .addColumn('pricing', t.json, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addPrimaryKeyConstraint('component_versions_pkey', ['site_id', 'component_id', 'version'])
        .addForeignKeyConstraint('component_versions_component_fkey', ['site_id', 'component_id'], 'components', [
          'site_id',
          'id',
        ]),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'coupons')
        .addColumn('family_id', t.id, (col) => col.notNull())
        .addColumn('name', t.text, (col) => col.notNull())
        .addColumn('code', t.text, (col) => col.notNull())
        .addColumn('description', t.text)
        // Exact: NUMERIC without a scale keeps "12.5" as "12.5" (a scale would pad it to "12.5000").
        .addColumn('percentage', t.decimal)
        .addColumn('amount_in_cents', t.money)
        .addColumn('recurring', t.boolean, (col) => col.notNull())
        .addColumn('duration_period_count', t.integer)
        .addColumn('end_date', t.instant)
        .addColumn('allow_negative_balance', t.boolean, (col) => col.notNull())
        .addColumn('stackable', t.boolean, (col) => col.notNull())
        .addColumn('compounding_strategy', t.text, (col) => col.notNull())
        .addColumn('conversion_limit', t.integer)
        .addColumn('redemptions', t.integer, (col) => col.notNull())
        .addColumn('archived_at', t.instant)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('coupons_site_id_code_key', ['site_id', 'code'])
        .addForeignKeyConstraint('coupons_family_fkey', ['site_id', 'family_id'], 'product_families', ['site_id', 'id'])
        // The limit is enforced by the redeem statement; the check keeps any other writer honest too.
        .addCheckConstraint(
          'coupons_redemptions_check',
          sql`redemptions >= 0 and (conversion_limit is null or redemptions <= conversion_limit)`,
        ),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'metafields')
        .addColumn('resource_type', t.text, (col) => col.notNull())
        .addColumn('name', t.text, (col) => col.notNull())
        .addColumn('input_type', t.text, (col) => col.notNull())
        .addColumn('enum_values', t.json)
        .addColumn('scope', t.json, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('metafields_site_id_resource_type_name_key', ['site_id', 'resource_type', 'name']),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'metadata')
        .addColumn('resource_type', t.text, (col) => col.notNull())
        // A customer or a subscription id, by resource_type; polymorphic, so no foreign key.
        .addColumn('resource_id', t.id, (col) => col.notNull())
        .addColumn('metafield_id', t.id, (col) => col.notNull())
        .addColumn('name', t.text, (col) => col.notNull())
        .addColumn('value', t.text, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('metadata_site_id_resource_metafield_key', [
          'site_id',
          'resource_type',
          'resource_id',
          'metafield_id',
        ])
        // Deleting a definition deletes its values (port contract).
        .addForeignKeyConstraint(
          'metadata_metafield_fkey',
          ['site_id', 'metafield_id'],
          'metafields',
          ['site_id', 'id'],
          (fk) => fk.onDelete('cascade'),
        ),
      dialect,
    ).execute();
    await db.schema
      .createIndex('metadata_value_idx')
      .on('metadata')
      .columns(['site_id', 'resource_type', 'name', 'value'])
      .execute();
    await db.schema.createIndex('metadata_metafield_idx').on('metadata').columns(['site_id', 'metafield_id']).execute();

    await finishTable(
      createTenantTable(db, dialect, 'notes')
        .addColumn('subscription_id', t.id, (col) => col.notNull())
        .addColumn('body', t.text, (col) => col.notNull())
        .addColumn('sticky', t.boolean, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addForeignKeyConstraint('notes_subscription_fkey', ['site_id', 'subscription_id'], 'subscriptions', [
          'site_id',
          'id',
        ]),
      dialect,
    ).execute();
    await db.schema
      .createIndex('notes_subscription_idx')
      .on('notes')
      .columns(['site_id', 'subscription_id', 'id'])
      .execute();
  },
};
