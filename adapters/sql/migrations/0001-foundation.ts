/**
 * Migration 1: sites, credentials, idempotency keys, due work and the outbox (the repositories of
 * issue 3). Later features add their tables in new numbered migrations.
 */
import { sql } from 'kysely';
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/** Creates the foundation tables. */
export const foundationMigration: Migration = {
  id: 1,
  name: 'foundation',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    const sites = db.schema.createTable('sites');
    await finishTable(
      (dialect === 'sqlite'
        ? sites.addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement())
        : sites.addColumn('id', 'bigint', (col) => col.generatedByDefaultAsIdentity().primaryKey())
      )
        .addColumn('subdomain', t.text, (col) => col.notNull())
        .addColumn('name', t.text, (col) => col.notNull())
        .addColumn('currency', t.text, (col) => col.notNull())
        .addColumn('time_zone', t.text, (col) => col.notNull())
        .addColumn('date_format', t.text, (col) => col.notNull())
        .addColumn('time_format', t.text, (col) => col.notNull())
        .addColumn('mode', t.text, (col) => col.notNull())
        .addColumn('shared_key', t.text, (col) => col.notNull())
        .addColumn('settings', t.json, (col) => col.notNull())
        .addColumn('version', t.integer, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        // Subdomains are global: they are how a request finds its tenant.
        .addUniqueConstraint('sites_subdomain_key', ['subdomain'])
        .addCheckConstraint('sites_mode_check', sql`mode in ('test', 'live')`),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'api_keys')
        .addColumn('name', t.text, (col) => col.notNull())
        .addColumn('prefix', t.text, (col) => col.notNull())
        .addColumn('secret_hash', t.text, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('revoked_at', t.instant),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'direct_credentials')
        .addColumn('api_id', t.text, (col) => col.notNull())
        .addColumn('api_secret', t.text, (col) => col.notNull())
        .addColumn('api_password_hash', t.text, (col) => col.notNull())
        .addColumn('default_redirect_uri', t.text)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('revoked_at', t.instant)
        .addUniqueConstraint('direct_credentials_site_id_api_id_key', ['site_id', 'api_id']),
      dialect,
    ).execute();
    // A direct post names only its api_id, so this lookup is the one that crosses sites.
    await db.schema.createIndex('direct_credentials_api_id_idx').on('direct_credentials').column('api_id').execute();

    await finishTable(
      db.schema
        .createTable('idempotency_keys')
        .addColumn('site_id', t.id, (col) => col.notNull().references('sites.id').onDelete('cascade'))
        .addColumn('scope', t.text, (col) => col.notNull())
        .addColumn('key', t.text, (col) => col.notNull())
        .addColumn('claimed_at', t.instant, (col) => col.notNull())
        .addColumn('expires_at', t.instant)
        .addPrimaryKeyConstraint('idempotency_keys_pkey', ['site_id', 'scope', 'key']),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'due_work')
        .addColumn('kind', t.text, (col) => col.notNull())
        .addColumn('subject_id', t.id, (col) => col.notNull())
        .addColumn('due_at', t.instant, (col) => col.notNull())
        .addColumn('unique_key', t.text, (col) => col.notNull())
        .addColumn('payload', t.json, (col) => col.notNull())
        .addColumn('status', t.text, (col) => col.notNull())
        .addColumn('claimed_by', t.text)
        .addColumn('lease_until', t.instant)
        .addColumn('attempts', t.integer, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        // What makes a second renewal of one period impossible: `renewal:<subscription>:<period>`.
        .addUniqueConstraint('due_work_site_id_unique_key_key', ['site_id', 'unique_key'])
        .addCheckConstraint('due_work_status_check', sql`status in ('pending', 'claimed', 'done', 'canceled')`),
      dialect,
    ).execute();
    // Partial indexes stay as small as the backlog: done and canceled rows are never scanned.
    await db.schema
      .createIndex('due_work_claim_idx')
      .on('due_work')
      .columns(['due_at', 'id'])
      .where(sql<boolean>`status in ('pending', 'claimed')`)
      .execute();
    await db.schema
      .createIndex('due_work_subject_idx')
      .on('due_work')
      .columns(['site_id', 'subject_id', 'due_at'])
      .where(sql<boolean>`status in ('pending', 'claimed')`)
      .execute();

    await finishTable(
      createTenantTable(db, dialect, 'outbox_events')
        .addColumn('key', t.text, (col) => col.notNull())
        .addColumn('subject_type', t.text, (col) => col.notNull())
        .addColumn('subject_id', t.id, (col) => col.notNull())
        .addColumn('payload', t.json, (col) => col.notNull())
        .addColumn('occurred_at', t.instant, (col) => col.notNull()),
      dialect,
    ).execute();
  },
};
