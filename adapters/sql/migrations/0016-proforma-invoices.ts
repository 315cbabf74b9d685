/**
 * Migration 16: proforma invoices. Each is stored as a JSON document (snapshots, lines, discounts)
 * beside the columns that lists filter and sort on. No foreign key to subscriptions or customers:
 * a signup's proforma invoice has no subscription, and the rows are removed with the customer
 * data (see `repositories/site-data.ts` and `repositories/purge.ts`). Numbers come from the site's
 * `document_sequences` row of the `proforma` series.
 */
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/** Creates the proforma invoice table. */
export const proformaInvoicesMigration: Migration = {
  id: 16,
  name: 'proforma-invoices',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await finishTable(
      createTenantTable(db, dialect, 'proforma_invoices')
        .addColumn('uid', t.text, (col) => col.notNull())
        .addColumn('number', t.bigInteger, (col) => col.notNull())
        .addColumn('subscription_id', t.id)
        .addColumn('customer_id', t.id)
        .addColumn('status', t.text, (col) => col.notNull())
        .addColumn('delivery_date', t.text, (col) => col.notNull())
        .addColumn('document', t.json, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('voided_at', t.instant)
        .addUniqueConstraint('proforma_invoices_site_id_uid_key', ['site_id', 'uid'])
        .addUniqueConstraint('proforma_invoices_site_id_number_key', ['site_id', 'number']),
      dialect,
    ).execute();
    await db.schema
      .createIndex('proforma_invoices_subscription_idx')
      .on('proforma_invoices')
      .columns(['site_id', 'subscription_id', 'number'])
      .execute();
  },
};
