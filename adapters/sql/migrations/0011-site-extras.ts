/** Migration 11: Churn reason codes and coupon subcodes. */
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/**
 * Churn reason codes and coupon subcodes. Both are site configuration, so they go with the site
 * (`ON DELETE CASCADE` from `createTenantTable`) and stay when its customer data is cleared. A
 * subcode references its coupon and goes with it.
 */
export const siteExtrasMigration: Migration = {
  id: 11,
  name: 'site-extras',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await finishTable(
      createTenantTable(db, dialect, 'reason_codes')
        .addColumn('code', t.text, (col) => col.notNull())
        // Lower-cased code: codes are unique in any letter case, and the constraint keeps it so under races.
        .addColumn('code_key', t.text, (col) => col.notNull())
        .addColumn('description', t.text, (col) => col.notNull())
        .addColumn('position', t.integer, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('reason_codes_site_id_code_key_key', ['site_id', 'code_key']),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'coupon_subcodes')
        .addColumn('coupon_id', t.id, (col) => col.notNull())
        .addColumn('code', t.text, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('coupon_subcodes_site_id_code_key', ['site_id', 'code'])
        .addForeignKeyConstraint(
          'coupon_subcodes_coupon_fkey',
          ['site_id', 'coupon_id'],
          'coupons',
          ['site_id', 'id'],
          (fk) => fk.onDelete('cascade'),
        ),
      dialect,
    ).execute();
    await db.schema
      .createIndex('coupon_subcodes_coupon_idx')
      .on('coupon_subcodes')
      .columns(['site_id', 'coupon_id', 'id'])
      .execute();
  },
};
