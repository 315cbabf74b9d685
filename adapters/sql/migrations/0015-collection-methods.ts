/** Migration 15: A subscription's payment collection method (automatic, remittance). */
import { columnTypes } from './ddl.js';
import type { Migration } from './migration.js';

/** A subscription's payment collection method (automatic, remittance). */
export const collectionMethodsMigration: Migration = {
  id: 15,
  name: 'collection-methods',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await db.schema
      .alterTable('subscriptions')
      .addColumn('payment_collection_method', t.text, (col) => col.notNull().defaultTo('automatic'))
      .execute();
  },
};
