/**
 * Migration 4: components on subscriptions (allocation, metered balance, pinned price version),
 * their allocation history and metered usage records.
 */
import { columnTypes, createTenantTable, finishTable } from './ddl.js';
import type { Migration } from './migration.js';

/** Creates the subscription-component tables. */
export const subscriptionComponentsMigration: Migration = {
  id: 4,
  name: 'subscription-components',
  async up(db, dialect) {
    const t = columnTypes(dialect);

    await finishTable(
      createTenantTable(db, dialect, 'subscription_components')
        .addColumn('subscription_id', t.id, (col) => col.notNull())
        .addColumn('component_id', t.id, (col) => col.notNull())
        .addColumn('component_version', t.integer, (col) => col.notNull())
        .addColumn('allocated_quantity', t.bigInteger, (col) => col.notNull())
        .addColumn('unit_balance', t.bigInteger, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addColumn('updated_at', t.instant, (col) => col.notNull())
        // One row per component of a subscription: upserts and concurrent usage meet on it.
        .addUniqueConstraint('subscription_components_site_id_subscription_component_key', [
          'site_id',
          'subscription_id',
          'component_id',
        ])
        .addForeignKeyConstraint(
          'subscription_components_subscription_fkey',
          ['site_id', 'subscription_id'],
          'subscriptions',
          ['site_id', 'id'],
        )
        // The component, not its version: the pinned version is the engine's to keep consistent
        // (the conformance suite pins versions it never created).
        .addForeignKeyConstraint('subscription_components_component_fkey', ['site_id', 'component_id'], 'components', [
          'site_id',
          'id',
        ]),
      dialect,
    ).execute();

    await finishTable(
      createTenantTable(db, dialect, 'allocations')
        .addColumn('subscription_id', t.id, (col) => col.notNull())
        .addColumn('component_id', t.id, (col) => col.notNull())
        .addColumn('previous_quantity', t.bigInteger, (col) => col.notNull())
        .addColumn('quantity', t.bigInteger, (col) => col.notNull())
        .addColumn('memo', t.text)
        .addColumn('upgrade_charge', t.text)
        .addColumn('downgrade_credit', t.text)
        .addColumn('accrue_charge', t.boolean, (col) => col.notNull())
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addForeignKeyConstraint('allocations_subscription_fkey', ['site_id', 'subscription_id'], 'subscriptions', [
          'site_id',
          'id',
        ])
        .addForeignKeyConstraint('allocations_component_fkey', ['site_id', 'component_id'], 'components', [
          'site_id',
          'id',
        ]),
      dialect,
    ).execute();
    await db.schema
      .createIndex('allocations_subscription_idx')
      .on('allocations')
      .columns(['site_id', 'subscription_id', 'component_id', 'id'])
      .execute();

    await finishTable(
      createTenantTable(db, dialect, 'usages')
        .addColumn('subscription_id', t.id, (col) => col.notNull())
        .addColumn('component_id', t.id, (col) => col.notNull())
        .addColumn('quantity', t.bigInteger, (col) => col.notNull())
        .addColumn('memo', t.text)
        .addColumn('created_at', t.instant, (col) => col.notNull())
        .addForeignKeyConstraint('usages_subscription_fkey', ['site_id', 'subscription_id'], 'subscriptions', [
          'site_id',
          'id',
        ])
        .addForeignKeyConstraint('usages_component_fkey', ['site_id', 'component_id'], 'components', ['site_id', 'id']),
      dialect,
    ).execute();
    await db.schema
      .createIndex('usages_subscription_idx')
      .on('usages')
      .columns(['site_id', 'subscription_id', 'component_id', 'id'])
      .execute();
  },
};
