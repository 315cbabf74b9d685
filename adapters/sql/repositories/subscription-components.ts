/**
 * Components on subscriptions, their allocation history and metered usage, on SQL. Usage is
 * added under the row's lock (`FOR UPDATE` on Postgres; SQLite's single writer elsewhere), so
 * concurrent usage records never lose an update.
 */
import {
  type AllocationRecord,
  BillingError,
  type SubscriptionComponentRecord,
  type SubscriptionComponentsRepository,
  type UsageRecord,
} from 'billing-engine';
import { type Selectable, sql } from 'kysely';
import { decodeBoolean, decodeId, decodeInstant, decodeInteger } from '../codecs.js';
import type { AllocationsTable, SubscriptionComponentsTable, UsagesTable } from '../schema.js';
import type { RepositoryContext } from './repository-context.js';

/** Builds the subscription-components repository of one transaction. */
export function createSubscriptionComponentsRepository({
  db,
  encode,
  hooks,
}: RepositoryContext): SubscriptionComponentsRepository {
  const findRow = (siteId: number, subscriptionId: number, componentId: number, lock: boolean) =>
    db
      .selectFrom('subscription_components')
      .selectAll()
      .where('site_id', '=', siteId)
      .where('subscription_id', '=', subscriptionId)
      .where('component_id', '=', componentId)
      .$if(lock && hooks.rowLocks, (qb) => qb.forUpdate())
      .executeTakeFirst();

  return {
    async upsert(row) {
      const stored = await db
        .insertInto('subscription_components')
        .values({
          site_id: row.siteId,
          subscription_id: row.subscriptionId,
          component_id: row.componentId,
          component_version: row.componentVersion,
          allocated_quantity: checkedCount(row.allocatedQuantity),
          unit_balance: checkedCount(row.unitBalance),
          created_at: encode.instant(row.createdAt),
          updated_at: encode.instant(row.updatedAt),
        })
        // An existing row keeps its id and creation time; everything else is replaced.
        .onConflict((oc) =>
          oc.columns(['site_id', 'subscription_id', 'component_id']).doUpdateSet((eb) => ({
            component_version: eb.ref('excluded.component_version'),
            allocated_quantity: eb.ref('excluded.allocated_quantity'),
            unit_balance: eb.ref('excluded.unit_balance'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeComponentRow(stored);
    },

    async ensure(row) {
      const inserted = await db
        .insertInto('subscription_components')
        .values({
          site_id: row.siteId,
          subscription_id: row.subscriptionId,
          component_id: row.componentId,
          component_version: row.componentVersion,
          allocated_quantity: checkedCount(row.allocatedQuantity),
          unit_balance: checkedCount(row.unitBalance),
          created_at: encode.instant(row.createdAt),
          updated_at: encode.instant(row.updatedAt),
        })
        // A concurrent first use waits for the other insert and then does nothing; the select
        // below (a new snapshot under read committed) returns the row that won.
        .onConflict((oc) => oc.columns(['site_id', 'subscription_id', 'component_id']).doNothing())
        .returningAll()
        .executeTakeFirst();
      const stored = inserted ?? (await findRow(row.siteId, row.subscriptionId, row.componentId, false));
      if (stored === undefined) {
        throw new BillingError('storage', 'A subscription component vanished while it was being ensured.');
      }
      return decodeComponentRow(stored);
    },

    async find(siteId, subscriptionId, componentId) {
      const row = await findRow(siteId, subscriptionId, componentId, false);
      return row && decodeComponentRow(row);
    },

    async listForSubscription(siteId, subscriptionId) {
      const rows = await db
        .selectFrom('subscription_components')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('subscription_id', '=', subscriptionId)
        .orderBy('component_id')
        .execute();
      return rows.map(decodeComponentRow);
    },

    async addUsage(siteId, subscriptionId, componentId, quantity, now) {
      // Lock first, so "before" is the row this update starts from, not a concurrent writer's.
      const current = await findRow(siteId, subscriptionId, componentId, true);
      if (current === undefined) return undefined;
      const before = decodeComponentRow(current);
      const after = await db
        .updateTable('subscription_components')
        .set({
          unit_balance: sql<number>`unit_balance + ${checkedCount(quantity)}`,
          updated_at: encode.instant(now),
        })
        .where('site_id', '=', siteId)
        .where('id', '=', before.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { before, after: decodeComponentRow(after) };
    },

    async insertAllocation(allocation) {
      const row = await db
        .insertInto('allocations')
        .values({
          site_id: allocation.siteId,
          subscription_id: allocation.subscriptionId,
          component_id: allocation.componentId,
          previous_quantity: checkedCount(allocation.previousQuantity),
          quantity: checkedCount(allocation.quantity),
          memo: allocation.memo,
          upgrade_charge: allocation.upgradeCharge,
          downgrade_credit: allocation.downgradeCredit,
          accrue_charge: encode.boolean(allocation.accrueCharge),
          created_at: encode.instant(allocation.createdAt),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeAllocation(row);
    },

    async listAllocations(siteId, subscriptionId, componentId) {
      const rows = await db
        .selectFrom('allocations')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('subscription_id', '=', subscriptionId)
        .$if(componentId !== undefined, (qb) => qb.where('component_id', '=', componentId as number))
        .orderBy('id')
        .execute();
      return rows.map(decodeAllocation);
    },

    async insertUsage(usage) {
      const row = await db
        .insertInto('usages')
        .values({
          site_id: usage.siteId,
          subscription_id: usage.subscriptionId,
          component_id: usage.componentId,
          quantity: checkedCount(usage.quantity),
          memo: usage.memo,
          created_at: encode.instant(usage.createdAt),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return decodeUsage(row);
    },

    async listUsages(siteId, subscriptionId, componentId) {
      const rows = await db
        .selectFrom('usages')
        .selectAll()
        .where('site_id', '=', siteId)
        .where('subscription_id', '=', subscriptionId)
        .where('component_id', '=', componentId)
        .orderBy('id')
        .execute();
      return rows.map(decodeUsage);
    },
  };
}

/** Quantities are whole numbers (the domain checks); a fraction here would be rounded by no one. */
function checkedCount(value: number): number {
  return decodeInteger(value, 'a quantity that is not a safe integer');
}

function decodeComponentRow(row: Selectable<SubscriptionComponentsTable>): SubscriptionComponentRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    subscriptionId: decodeId(row.subscription_id),
    componentId: decodeId(row.component_id),
    componentVersion: decodeInteger(row.component_version),
    allocatedQuantity: decodeInteger(row.allocated_quantity),
    unitBalance: decodeInteger(row.unit_balance),
    createdAt: decodeInstant(row.created_at),
    updatedAt: decodeInstant(row.updated_at),
  };
}

function decodeAllocation(row: Selectable<AllocationsTable>): AllocationRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    subscriptionId: decodeId(row.subscription_id),
    componentId: decodeId(row.component_id),
    previousQuantity: decodeInteger(row.previous_quantity),
    quantity: decodeInteger(row.quantity),
    memo: row.memo,
    upgradeCharge: row.upgrade_charge,
    downgradeCredit: row.downgrade_credit,
    accrueCharge: decodeBoolean(row.accrue_charge),
    createdAt: decodeInstant(row.created_at),
  };
}

function decodeUsage(row: Selectable<UsagesTable>): UsageRecord {
  return {
    id: decodeId(row.id),
    siteId: decodeId(row.site_id),
    subscriptionId: decodeId(row.subscription_id),
    componentId: decodeId(row.component_id),
    quantity: decodeInteger(row.quantity),
    memo: row.memo,
    createdAt: decodeInstant(row.created_at),
  };
}
