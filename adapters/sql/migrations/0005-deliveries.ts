/**
 * Migration 5: webhook endpoints and webhooks (one signed body per event and endpoint, kept
 * across retries), and the records of direct-post calls.
 */
import { sql } from 'kysely';
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/** Creates the webhook and direct-call tables. */
export const deliveriesMigration: Migration = {
  id: 5,
  name: 'deliveries',
  async up(db, dialect) {
    const t = columnTypes(dialect);

    await finishTable(
      createTenantTable(db, dialect, 'webhook_endpoints')
        .addColumn('url', t.text, (col) => col.notNull())
        .addColumn('events', t.json, (col) => col.notNull())
        .addColumn('status', t.text, (col) => col.notNull())
        .addColumn('failure_count', t.integer, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        .addCheckConstraint('webhook_endpoints_status_check', sql`status in ('enabled', 'paused', 'disabled')`),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'webhooks')
        .addColumn('endpoint_id', t.id, (col) => col.notNull())
        // The outbox event it carries (no reference: the outbox may be pruned on its own schedule).
        .addColumn('event_id', t.id)
        .addColumn('event_key', t.text, (col) => col.notNull())
        .addColumn('body', t.text, (col) => col.notNull())
        .addColumn('status', t.text, (col) => col.notNull())
        .addColumn('attempts', t.integer, (col) => col.notNull())
        .addColumn('last_sent_at', t.instant)
        .addColumn('last_sent_url', t.text)
        .addColumn('last_error', t.text)
        .addColumn('last_error_at', t.instant)
        .addColumn('accepted_at', t.instant)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        // Deleting an endpoint deletes its webhooks (port contract).
        .addForeignKeyConstraint(
          'webhooks_endpoint_fkey',
          ['site_id', 'endpoint_id'],
          'webhook_endpoints',
          ['site_id', 'id'],
          (fk) => fk.onDelete('cascade'),
        )
        .addCheckConstraint('webhooks_status_check', sql`status in ('pending', 'successful', 'failed')`),
      dialect,
    ).execute();
    await db.schema
      .createIndex('webhooks_endpoint_idx')
      .on('webhooks')
      .columns(['site_id', 'endpoint_id', 'id'])
      .execute();

    await finishTable(
      db.schema
        .createTable('direct_calls')
        .addColumn('site_id', t.id, (col) => col.notNull().references('sites.id').onDelete('cascade'))
        // 40 hex characters chosen by the engine, not a database sequence.
        .addColumn('id', t.text, (col) => col.notNull())
        .addColumn('api_id', t.text, (col) => col.notNull())
        .addColumn('nonce', t.text)
        .addColumn('timestamp', t.text)
        .addColumn('success', t.boolean, (col) => col.notNull())
        .addColumn('request', t.json, (col) => col.notNull())
        .addColumn('response', t.json, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addPrimaryKeyConstraint('direct_calls_pkey', ['site_id', 'id']),
      dialect,
    ).execute();
  },
};
