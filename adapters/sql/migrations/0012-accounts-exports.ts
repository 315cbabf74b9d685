/**
 * Migration 12: prepayments, service credits and data exports. No foreign key from account
 * entries to subscriptions or the ledger: the rows are cleared with the customer data, before
 * the subscriptions they name (see `repositories/accounts.ts`).
 */
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/** Prepayments, service credits and data exports. */
export const accountsExportsMigration: Migration = {
  id: 12,
  name: 'accounts-exports',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await finishTable(
      createTenantTable(db, dialect, 'account_entries')
        .addColumn('subscription_id', t.id, (col) => col.notNull())
        .addColumn('account', t.text, (col) => col.notNull())
        .addColumn('entry_type', t.text, (col) => col.notNull())
        .addColumn('amount_in_cents', t.money, (col) => col.notNull())
        .addColumn('memo', t.text, (col) => col.notNull())
        .addColumn('details', t.text)
        .addColumn('method', t.text)
        .addColumn('external', t.boolean, (col) => col.notNull())
        .addColumn('prepayment_id', t.id)
        .addColumn('transaction_id', t.id, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull()),
      dialect,
    ).execute();
    await db.schema
      .createIndex('account_entries_subscription_idx')
      .on('account_entries')
      .columns(['site_id', 'subscription_id', 'id'])
      .execute();

    await finishTable(
      createTenantTable(db, dialect, 'data_exports')
        .addColumn('kind', t.text, (col) => col.notNull())
        .addColumn('status', t.text, (col) => col.notNull())
        .addColumn('row_count', t.integer)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('finished_at', t.instant),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'data_export_rows')
        .addColumn('export_id', t.id, (col) => col.notNull())
        .addColumn('row', t.json, (col) => col.notNull()),
      dialect,
    ).execute();
    await db.schema
      .createIndex('data_export_rows_export_idx')
      .on('data_export_rows')
      .columns(['site_id', 'export_id', 'id'])
      .execute();
  },
};
