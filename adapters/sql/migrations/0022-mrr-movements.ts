/** Migration 22: MRR movements, the history of each subscription's MRR. */
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/**
 * One row per change of a subscription's MRR: the signed change and the MRR it left, each split
 * into plan and usage, and the subscription's lines at the time as a JSON list. No foreign key to
 * subscriptions: the rows go with the subscription's data (see `repositories/purge.ts` and
 * `repositories/site-data.ts`), like the other customer data. The subscription's movements are
 * read newest first (the last one is what the next is a difference from), hence the index.
 */
export const mrrMovementsMigration: Migration = {
  id: 22,
  name: 'mrr-movements',
  async up(db, dialect) {
    const t = columnTypes(dialect);
    await finishTable(
      createTenantTable(db, dialect, 'mrr_movements')
        .addColumn('subscription_id', t.id, (col) => col.notNull())
        .addColumn('occurred_at', t.instant, (col) => col.notNull())
        .addColumn('category', t.text, (col) => col.notNull())
        .addColumn('amount_in_cents', t.money, (col) => col.notNull())
        .addColumn('plan_amount_in_cents', t.money, (col) => col.notNull())
        .addColumn('usage_amount_in_cents', t.money, (col) => col.notNull())
        .addColumn('mrr_in_cents', t.money, (col) => col.notNull())
        .addColumn('plan_mrr_in_cents', t.money, (col) => col.notNull())
        .addColumn('usage_mrr_in_cents', t.money, (col) => col.notNull())
        .addColumn('subscriber_name', t.text, (col) => col.notNull())
        .addColumn('line_items', t.json, (col) => col.notNull()),
      dialect,
    ).execute();
    await db.schema
      .createIndex('mrr_movements_subscription_idx')
      .on('mrr_movements')
      .columns(['site_id', 'subscription_id', 'id'])
      .execute();
  },
};
