/** Migration 15: A subscription's payment collection method (automatic, remittance). */
import type { Migration } from './migration.js';

/** A subscription's payment collection method (automatic, remittance). */
export const collectionMethodsMigration: Migration = {
  id: 15,
  name: 'collection-methods',
  async up(_db, _dialect) {},
};
