/**
 * Migration 6: replay claims of signed direct posts. A claim holds the SHA-256 of the signed input
 * (`api_id + timestamp + nonce + data`) beside the `(api_id, timestamp, nonce)` key, each unique
 * per site, so that a post whose parts were shifted against each other (same signature, another
 * timestamp and nonce) is a duplicate too. The nonce claims kept so far in `idempotency_keys`
 * (scope `direct_nonce`) move here, so that no nonce spent before the upgrade can be used again;
 * their signed input was never stored, so their hash column holds a marker no SHA-256 hex equals.
 */
import { sql } from 'kysely';
import { columnTypes, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/** Creates `direct_post_claims` and moves the direct-post nonce claims into it. */
export const directPostClaimsMigration: Migration = {
  id: 6,
  name: 'direct-post-claims',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await finishTable(
      db.schema
        .createTable('direct_post_claims')
        .addColumn('site_id', t.id, (col) => col.notNull().references('sites.id').onDelete('cascade'))
        // Lowercase hex SHA-256 of the signed input ('nonce:' and the nonce key for a moved claim).
        .addColumn('input_hash', t.text, (col) => col.notNull())
        // `api_id|seconds|nonce` of a protected post; null for a post sent without one.
        .addColumn('nonce_key', t.text)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addPrimaryKeyConstraint('direct_post_claims_pkey', ['site_id', 'input_hash'])
        // Nulls are distinct in a unique constraint on both dialects: unprotected claims never collide here.
        .addUniqueConstraint('direct_post_claims_nonce_key', ['site_id', 'nonce_key']),
      dialect,
    ).execute();
    await sql`
      insert into direct_post_claims (site_id, input_hash, nonce_key, created_at)
      select site_id, 'nonce:' || ${sql.ref('key')}, ${sql.ref('key')}, claimed_at
      from idempotency_keys where scope = 'direct_nonce'
    `.execute(db);
    await sql`delete from idempotency_keys where scope = 'direct_nonce'`.execute(db);
  },
};
