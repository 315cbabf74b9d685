/** Migration 10: The merchant's reference of a subscription, unique per site. */
import { sql } from 'kysely';
import { columnTypes } from './ddl.js';
import type { Migration } from './migration.js';

/**
 * The merchant's reference of a subscription, unique per site. The column is nullable (every
 * existing subscription has none), and the unique index is partial so that the many subscriptions
 * without a reference never collide; both dialects take `CREATE UNIQUE INDEX ... WHERE`.
 */
export const subscriptionReferencesMigration: Migration = {
  id: 10,
  name: 'subscription-references',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await db.schema.alterTable('subscriptions').addColumn('reference', t.text).execute();
    await db.schema
      .createIndex('subscriptions_site_id_reference_key')
      .unique()
      .on('subscriptions')
      .columns(['site_id', 'reference'])
      .where(sql.ref('reference'), 'is not', null)
      .execute();
  },
};
