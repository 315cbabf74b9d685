/**
 * Migration 7: invoices, credit notes, invoice events and the per-site numbering counters
 * (issue #17). An invoice or credit note is stored as a JSON document (line items, snapshots,
 * applications) beside the columns that lists filter and sort on. No foreign key to subscriptions:
 * a document is a record of what was billed and outlives a cleared customer.
 */
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/** Creates the invoice tables. */
export const invoicesMigration: Migration = {
  id: 7,
  name: 'invoices',
  async up(db, dialect) {
    const t = columnTypes(dialect);

    await finishTable(
      db.schema
        .createTable('document_sequences')
        .addColumn('site_id', t.id, (col) => col.notNull().references('sites.id').onDelete('cascade'))
        .addColumn('series', t.text, (col) => col.notNull())
        .addColumn('last_value', t.bigInteger, (col) => col.notNull())
        .addPrimaryKeyConstraint('document_sequences_pkey', ['site_id', 'series']),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'invoices')
        .addColumn('uid', t.text, (col) => col.notNull())
        .addColumn('sequence_number', t.bigInteger, (col) => col.notNull())
        .addColumn('number', t.text, (col) => col.notNull())
        .addColumn('subscription_id', t.id, (col) => col.notNull())
        .addColumn('customer_id', t.id, (col) => col.notNull())
        .addColumn('status', t.text, (col) => col.notNull())
        .addColumn('issue_date', t.text, (col) => col.notNull())
        .addColumn('due_date', t.text, (col) => col.notNull())
        .addColumn('paid_date', t.text)
        .addColumn('document', t.json, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('invoices_site_id_uid_key', ['site_id', 'uid'])
        .addUniqueConstraint('invoices_site_id_sequence_key', ['site_id', 'sequence_number']),
      dialect,
    ).execute();
    await db.schema
      .createIndex('invoices_subscription_idx')
      .on('invoices')
      .columns(['site_id', 'subscription_id', 'sequence_number'])
      .execute();

    await finishTable(
      createTenantTable(db, dialect, 'credit_notes')
        .addColumn('uid', t.text, (col) => col.notNull())
        .addColumn('sequence_number', t.bigInteger, (col) => col.notNull())
        .addColumn('invoice_uid', t.text, (col) => col.notNull())
        .addColumn('subscription_id', t.id, (col) => col.notNull())
        .addColumn('document', t.json, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addUniqueConstraint('credit_notes_site_id_uid_key', ['site_id', 'uid'])
        .addUniqueConstraint('credit_notes_site_id_sequence_key', ['site_id', 'sequence_number']),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'invoice_events')
        .addColumn('invoice_uid', t.text, (col) => col.notNull())
        .addColumn('event_type', t.text, (col) => col.notNull())
        .addColumn('data', t.json, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull()),
      dialect,
    ).execute();
    await db.schema
      .createIndex('invoice_events_invoice_idx')
      .on('invoice_events')
      .columns(['site_id', 'invoice_uid', 'id'])
      .execute();
  },
};
