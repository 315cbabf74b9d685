/** Migration 11: Churn reason codes and coupon subcodes. */
import type { Migration } from './migration.js';

/** Churn reason codes and coupon subcodes. */
export const siteExtrasMigration: Migration = {
  id: 11,
  name: 'site-extras',
  async up(_db, _dialect) {},
};
