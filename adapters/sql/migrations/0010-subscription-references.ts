/** Migration 10: The merchant's reference of a subscription, unique per site. */
import type { Migration } from './migration.js';

/** The merchant's reference of a subscription, unique per site. */
export const subscriptionReferencesMigration: Migration = {
  id: 10,
  name: 'subscription-references',
  async up(_db, _dialect) {},
};
