/** Migration 12: Prepayments, service credits and data exports. */
import type { Migration } from './migration.js';

/** Prepayments, service credits and data exports. */
export const accountsExportsMigration: Migration = {
  id: 12,
  name: 'accounts-exports',
  async up(_db, _dialect) {},
};
