/** Migration 19: customers' billing-portal access (enabled, invited, revoked). */
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/**
 * One row per customer whose billing-portal access was ever enabled. It is customer data: it goes
 * with its customer (`ON DELETE CASCADE`), so with a data clear and with the site too.
 */
export const portalAccessMigration: Migration = {
  id: 19,
  name: 'portal-access',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await finishTable(
      createTenantTable(db, dialect, 'portal_access')
        .addColumn('customer_id', t.id, (col) => col.notNull())
        .addColumn('enabled', t.boolean, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('invite_last_sent_at', t.instant)
        .addColumn('invite_last_accepted_at', t.instant)
        .addColumn('revoked_at', t.instant)
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('portal_access_site_id_customer_id_key', ['site_id', 'customer_id'])
        .addForeignKeyConstraint(
          'portal_access_customer_fkey',
          ['site_id', 'customer_id'],
          'customers',
          ['site_id', 'id'],
          (fk) => fk.onDelete('cascade'),
        ),
      dialect,
    ).execute();
  },
};
