/**
 * Migration 8: draft invoices. A draft has no number until it is issued, so `invoices.number` and
 * `invoices.sequence_number` become nullable; the unique `(site_id, sequence_number)` stays (nulls
 * are distinct in a unique constraint on both dialects, so any number of drafts may exist).
 * Postgres drops the NOT NULLs in place; SQLite cannot, so the table is rebuilt with the same
 * columns, constraints and index, and its rows copied over (nothing references `invoices`).
 */
import { sql } from 'kysely';
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

const COLUMNS = sql.raw(
  'id, site_id, uid, sequence_number, number, subscription_id, customer_id, status, issue_date, due_date, paid_date, document, created_at, updated_at',
);

/** Lets invoices be stored without a number (drafts). */
export const draftInvoicesMigration: Migration = {
  id: 8,
  name: 'draft-invoices',
  async up(db, dialect) {
    if (dialect === 'postgres') {
      await sql`alter table invoices alter column number drop not null`.execute(db);
      await sql`alter table invoices alter column sequence_number drop not null`.execute(db);
      return;
    }
    const t = columnTypes(dialect);
    await finishTable(
      createTenantTable(db, dialect, 'invoices_rebuilt')
        .addColumn('uid', t.text, (col) => col.notNull())
        .addColumn('sequence_number', t.bigInteger)
        .addColumn('number', t.text)
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
    await sql`insert into invoices_rebuilt (${COLUMNS}) select ${COLUMNS} from invoices`.execute(db);
    await sql`drop table invoices`.execute(db);
    await sql`alter table invoices_rebuilt rename to invoices`.execute(db);
    await db.schema
      .createIndex('invoices_subscription_idx')
      .on('invoices')
      .columns(['site_id', 'subscription_id', 'sequence_number'])
      .execute();
  },
};
