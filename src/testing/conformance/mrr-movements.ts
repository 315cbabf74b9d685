import assert from 'node:assert/strict';
import type { MrrMovementRecord, Storage, SubscriptionRecord } from 'billing-engine';
import { type BillingSeed, seedBillingSite, subscriptionFixture } from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

async function subscription(storage: Storage, seed: BillingSeed): Promise<SubscriptionRecord> {
  return storage.transaction((tx) => tx.subscriptions.insert(subscriptionFixture(seed.customer, seed.product)));
}

/** A new movement of a subscription. */
function movementFixture(
  sub: SubscriptionRecord,
  overrides: Partial<Omit<MrrMovementRecord, 'id'>> = {},
): Omit<MrrMovementRecord, 'id'> {
  return {
    siteId: sub.siteId,
    subscriptionId: sub.id,
    occurredAt: at(T0, 1),
    category: 'new_business',
    amountInCents: 1_250,
    planAmountInCents: 1_000,
    usageAmountInCents: 250,
    mrrInCents: 1_250,
    planMrrInCents: 1_000,
    usageMrrInCents: 250,
    subscriberName: 'Zoë Ünïcode',
    lineItems: [
      {
        productId: sub.productId,
        componentId: 0,
        pricePointId: null,
        name: 'Product',
        mrrInCents: 1_000,
        movementInCents: 1_000,
        quantity: 1,
        prevQuantity: 0,
        recurring: true,
      },
      {
        productId: sub.productId,
        componentId: 42,
        pricePointId: 7,
        name: 'Data',
        mrrInCents: 250,
        movementInCents: 250,
        quantity: 9_007_199_254,
        prevQuantity: 0,
        recurring: false,
      },
    ],
    ...overrides,
  };
}

/** Cases for the MRR movements repository: exact round trips, the last one, lists, counts, tenancy and rollback. */
export function mrrMovementCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('MRR movements', () => {
    it('inserts movements with exact fields and finds a subscription’s last one', async () => {
      const seed = await seedBillingSite(storage(), 'mrr-ins');
      const s1 = await subscription(storage(), seed);
      const s2 = await subscription(storage(), seed);
      const [m1, other, m2] = await storage().transaction(async (tx) => [
        await tx.mrrMovements.insert(movementFixture(s1)),
        await tx.mrrMovements.insert(movementFixture(s2)),
        await tx.mrrMovements.insert(
          movementFixture(s1, {
            category: 'churn',
            amountInCents: -1_250,
            planAmountInCents: -1_000,
            usageAmountInCents: -250,
            mrrInCents: 0,
            planMrrInCents: 0,
            usageMrrInCents: 0,
            occurredAt: at(T0, 2),
            lineItems: [],
          }),
        ),
      ]);
      assert.ok(m1 && other && m2);
      assert.ok(Number.isSafeInteger(m1.id) && m1.id > 0 && m2.id > m1.id);
      const { id: _id, ...fields } = m1;
      assert.deepEqual(fields, movementFixture(s1), 'fields are stored as given');
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.mrrMovements.findLast(seed.site.id, s1.id), m2);
        assert.deepEqual(await tx.mrrMovements.findLast(seed.site.id, s2.id), other);
        assert.equal(await tx.mrrMovements.findLast(seed.site.id, 987_654), undefined);
      });
    });

    it('lists by id in either direction, pages, filters by subscription and counts', async () => {
      const seed = await seedBillingSite(storage(), 'mrr-list');
      const s1 = await subscription(storage(), seed);
      const s2 = await subscription(storage(), seed);
      const rows = await storage().transaction(async (tx) => [
        await tx.mrrMovements.insert(movementFixture(s1)),
        await tx.mrrMovements.insert(movementFixture(s2)),
        await tx.mrrMovements.insert(movementFixture(s1, { category: 'expansion' })),
      ]);
      const ids = rows.map((m) => m.id);
      await storage().transaction(async (tx) => {
        const page = { page: 1, perPage: 10 };
        assert.deepEqual(
          (await tx.mrrMovements.list(seed.site.id, { direction: 'asc' }, page)).map((m) => m.id),
          ids,
        );
        assert.deepEqual(
          (await tx.mrrMovements.list(seed.site.id, { direction: 'desc' }, page)).map((m) => m.id),
          [...ids].reverse(),
        );
        assert.deepEqual(
          (await tx.mrrMovements.list(seed.site.id, { direction: 'desc' }, { page: 2, perPage: 2 })).map((m) => m.id),
          [ids[0]],
        );
        const ofS1 = { direction: 'asc' as const, subscriptionId: s1.id };
        assert.deepEqual(await tx.mrrMovements.list(seed.site.id, ofS1, page), [rows[0], rows[2]]);
        assert.equal(await tx.mrrMovements.count(seed.site.id, ofS1), 2);
        assert.equal(await tx.mrrMovements.count(seed.site.id, { direction: 'asc' }), 3);
      });
    });

    it('keeps each site’s movements to itself and leaves none after a rollback', async () => {
      const a = await seedBillingSite(storage(), 'mrr-a');
      const b = await seedBillingSite(storage(), 'mrr-b');
      const sa = await subscription(storage(), a);
      await storage().transaction((tx) => tx.mrrMovements.insert(movementFixture(sa)));
      await storage().transaction(async (tx) => {
        assert.equal(await tx.mrrMovements.findLast(b.site.id, sa.id), undefined);
        assert.deepEqual(await tx.mrrMovements.list(b.site.id, { direction: 'asc' }, { page: 1, perPage: 10 }), []);
        assert.equal(await tx.mrrMovements.count(b.site.id, { direction: 'asc', subscriptionId: sa.id }), 0);
      });
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.mrrMovements.insert(movementFixture(sa, { category: 'expansion' }));
          throw new Abort();
        }),
        Abort,
      );
      await storage().transaction(async (tx) => {
        assert.equal((await tx.mrrMovements.findLast(a.site.id, sa.id))?.category, 'new_business');
        assert.equal(await tx.mrrMovements.count(a.site.id, { direction: 'asc' }), 1);
      });
    });
  });
}
