import assert from 'node:assert/strict';
import type {
  ComponentRecord,
  ProductFamilyRecord,
  Storage,
  SubscriptionComponentRecord,
  SubscriptionRecord,
} from 'billing-engine';
import { type BillingSeed, customerFixture, seedBillingSite, subscriptionFixture } from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

/** A quantity-based or metered component of a family, priced per unit. */
function newComponent(
  family: Pick<ProductFamilyRecord, 'siteId' | 'id'>,
  name: string,
  kind: ComponentRecord['kind'] = 'quantity_based_component',
): Omit<ComponentRecord, 'id' | 'currentVersion'> {
  return {
    siteId: family.siteId,
    familyId: family.id,
    kind,
    name,
    handle: null,
    unitName: 'unit',
    description: null,
    taxable: false,
    archivedAt: null,
    createdAt: T0,
    updatedAt: T0,
  };
}

/** A site with a subscription and two components (ids ascending: seats, then data). */
interface Seeded extends BillingSeed {
  readonly subscription: SubscriptionRecord;
  readonly seats: ComponentRecord;
  readonly data: ComponentRecord;
}

async function seed(storage: Storage, subdomain: string): Promise<Seeded> {
  const base = await seedBillingSite(storage, subdomain);
  return storage.transaction(async (tx) => {
    const subscription = await tx.subscriptions.insert(subscriptionFixture(base.customer, base.product));
    const pricing = {
      scheme: 'per_unit' as const,
      brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice: '1' }],
    };
    const seats = (await tx.components.insert(newComponent(base.family, 'Seats'), pricing)).component;
    const data = (await tx.components.insert(newComponent(base.family, 'Data', 'metered_component'), pricing))
      .component;
    return { ...base, subscription, seats, data };
  });
}

/** The row `upsert` takes, for a subscription and component. */
function row(
  s: Pick<SubscriptionRecord, 'siteId' | 'id'>,
  componentId: number,
  fields: Partial<Omit<SubscriptionComponentRecord, 'id'>> = {},
): Omit<SubscriptionComponentRecord, 'id'> {
  return {
    siteId: s.siteId,
    subscriptionId: s.id,
    componentId,
    componentVersion: 1,
    allocatedQuantity: 0,
    unitBalance: 0,
    createdAt: at(T0, 7),
    updatedAt: at(T0, 7),
    ...fields,
  };
}

/**
 * Cases for the subscription components repository: upsert semantics, atomic usage, allocation and
 * usage history, tenancy, copies, rollback, and 20 concurrent usages that must all count.
 */
export function subscriptionComponentCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('subscription components', () => {
    it('ensures a row exactly once: a second ensure returns the stored row unchanged, also under concurrency', async () => {
      const s = await seed(storage(), 'sc-ensure');
      const first = await storage().transaction((tx) =>
        tx.subscriptionComponents.ensure({
          ...row(s.subscription, s.seats.id, { allocatedQuantity: 0, unitBalance: 0 }),
          createdAt: T0,
        }),
      );
      await storage().transaction((tx) =>
        tx.subscriptionComponents.addUsage(s.site.id, s.subscription.id, s.seats.id, 7, T0),
      );
      const again = await storage().transaction((tx) =>
        tx.subscriptionComponents.ensure({
          ...row(s.subscription, s.seats.id, { allocatedQuantity: 0, unitBalance: 0 }),
          createdAt: at(T0, 1),
        }),
      );
      assert.equal(again.id, first.id);
      assert.equal(again.unitBalance, 7, 'ensure never overwrites an existing row');
      const racers = await Promise.all(
        Array.from({ length: 10 }, () =>
          storage().transaction((tx) =>
            tx.subscriptionComponents.ensure({
              ...row(s.subscription, s.data.id, { allocatedQuantity: 0, unitBalance: 0 }),
              createdAt: T0,
            }),
          ),
        ),
      );
      assert.equal(new Set(racers.map((r) => r.id)).size, 1);
      assert.equal(
        (
          await storage().transaction((tx) =>
            tx.subscriptionComponents.listForSubscription(s.site.id, s.subscription.id),
          )
        ).length,
        2,
      );
    });

    it('inserts a row with upsert, finds it, and replaces allocation, version and balance but not id or createdAt', async () => {
      const s = await seed(storage(), 'sc-upsert');
      const first = await storage().transaction((tx) =>
        tx.subscriptionComponents.upsert(row(s.subscription, s.seats.id, { allocatedQuantity: 5 })),
      );
      assert.ok(Number.isSafeInteger(first.id) && first.id > 0);
      const { id: _id, ...fields } = first;
      assert.deepEqual(fields, row(s.subscription, s.seats.id, { allocatedQuantity: 5 }), 'fields are stored as given');
      const later = at(T0, 60_000);
      const second = await storage().transaction((tx) =>
        tx.subscriptionComponents.upsert(
          row(s.subscription, s.seats.id, {
            componentVersion: 3,
            allocatedQuantity: 9,
            unitBalance: 4,
            createdAt: later,
            updatedAt: later,
          }),
        ),
      );
      assert.equal(second.id, first.id, 'one row per subscription and component');
      assert.equal(second.createdAt.getTime(), first.createdAt.getTime(), 'createdAt is kept');
      assert.equal(second.updatedAt.getTime(), later.getTime());
      assert.deepEqual([second.componentVersion, second.allocatedQuantity, second.unitBalance], [3, 9, 4]);
      const found = await storage().transaction((tx) =>
        tx.subscriptionComponents.find(s.site.id, s.subscription.id, s.seats.id),
      );
      assert.deepEqual(found, second);
    });

    it('returns undefined or empty lists for what is missing, and never another site’s rows', async () => {
      const s = await seed(storage(), 'sc-missing');
      const other = await seed(storage(), 'sc-other');
      await storage().transaction((tx) => tx.subscriptionComponents.upsert(row(s.subscription, s.seats.id)));
      await storage().transaction(async (tx) => {
        assert.equal(await tx.subscriptionComponents.find(s.site.id, s.subscription.id, s.data.id), undefined);
        assert.equal(await tx.subscriptionComponents.find(other.site.id, s.subscription.id, s.seats.id), undefined);
        assert.deepEqual(await tx.subscriptionComponents.listForSubscription(other.site.id, s.subscription.id), []);
        assert.equal(
          await tx.subscriptionComponents.addUsage(s.site.id, s.subscription.id, s.data.id, 1, T0),
          undefined,
          'no usage on a row that does not exist',
        );
        assert.equal(
          await tx.subscriptionComponents.addUsage(other.site.id, s.subscription.id, s.seats.id, 1, T0),
          undefined,
        );
        assert.deepEqual(await tx.subscriptionComponents.listAllocations(s.site.id, s.subscription.id), []);
        assert.deepEqual(await tx.subscriptionComponents.listUsages(s.site.id, s.subscription.id, s.data.id), []);
      });
      const stored = await storage().transaction((tx) =>
        tx.subscriptionComponents.find(s.site.id, s.subscription.id, s.seats.id),
      );
      assert.equal(stored?.unitBalance, 0, 'a refused cross-site usage changed nothing');
    });

    it('lists a subscription’s rows by component id, and only that subscription’s', async () => {
      const s = await seed(storage(), 'sc-list');
      const otherSub = await storage().transaction(async (tx) => {
        const customer = await tx.customers.insert(customerFixture(s.site.id, { email: 'b@example.com' }));
        return tx.subscriptions.insert(subscriptionFixture(customer, s.product));
      });
      await storage().transaction(async (tx) => {
        // Inserted in the opposite order of component ids, so id order is not insertion order.
        await tx.subscriptionComponents.upsert(row(s.subscription, s.data.id, { unitBalance: 2 }));
        await tx.subscriptionComponents.upsert(row(s.subscription, s.seats.id, { allocatedQuantity: 1 }));
        await tx.subscriptionComponents.upsert(row(otherSub, s.seats.id, { allocatedQuantity: 8 }));
      });
      const list = await storage().transaction((tx) =>
        tx.subscriptionComponents.listForSubscription(s.site.id, s.subscription.id),
      );
      assert.deepEqual(
        list.map((r) => [r.componentId, r.allocatedQuantity, r.unitBalance]),
        [
          [s.seats.id, 1, 0],
          [s.data.id, 0, 2],
        ],
      );
    });

    it('adds usage and returns the row before and after; a negative quantity takes usage off', async () => {
      const s = await seed(storage(), 'sc-usage');
      await storage().transaction((tx) =>
        tx.subscriptionComponents.upsert(row(s.subscription, s.data.id, { unitBalance: 3 })),
      );
      const later = at(T0, 90_000);
      const added = await storage().transaction((tx) =>
        tx.subscriptionComponents.addUsage(s.site.id, s.subscription.id, s.data.id, 4, later),
      );
      assert.ok(added);
      assert.equal(added.before.unitBalance, 3);
      assert.equal(added.after.unitBalance, 7);
      assert.equal(added.after.updatedAt.getTime(), later.getTime());
      assert.equal(added.after.id, added.before.id);
      assert.equal(added.after.allocatedQuantity, added.before.allocatedQuantity);
      const reset = await storage().transaction((tx) =>
        tx.subscriptionComponents.addUsage(s.site.id, s.subscription.id, s.data.id, -7, later),
      );
      assert.deepEqual([reset?.before.unitBalance, reset?.after.unitBalance], [7, 0]);
      const stored = await storage().transaction((tx) =>
        tx.subscriptionComponents.find(s.site.id, s.subscription.id, s.data.id),
      );
      assert.equal(stored?.unitBalance, 0);
    });

    it('counts every one of 20 concurrent usages of +1, each seeing a distinct balance before', async () => {
      const s = await seed(storage(), 'sc-race');
      await storage().transaction((tx) => tx.subscriptionComponents.upsert(row(s.subscription, s.data.id)));
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          storage().transaction((tx) =>
            tx.subscriptionComponents.addUsage(s.site.id, s.subscription.id, s.data.id, 1, T0),
          ),
        ),
      );
      for (const result of results) {
        assert.ok(result);
        assert.equal(result.after.unitBalance, result.before.unitBalance + 1, 'after is before plus the usage');
      }
      // A lost update shows as two callers that saw the same balance before.
      assert.deepEqual(
        results.map((r) => r?.before.unitBalance).sort((a, b) => (a ?? 0) - (b ?? 0)),
        Array.from({ length: 20 }, (_, i) => i),
      );
      const stored = await storage().transaction((tx) =>
        tx.subscriptionComponents.find(s.site.id, s.subscription.id, s.data.id),
      );
      assert.equal(stored?.unitBalance, 20);
    });

    it('keeps allocation history exactly, listed by id, of one component or all', async () => {
      const s = await seed(storage(), 'sc-alloc');
      const first = await storage().transaction((tx) =>
        tx.subscriptionComponents.insertAllocation({
          siteId: s.site.id,
          subscriptionId: s.subscription.id,
          componentId: s.seats.id,
          previousQuantity: 0,
          quantity: 5,
          memo: null,
          upgradeCharge: 'prorated',
          downgradeCredit: null,
          accrueCharge: false,
          createdAt: at(T0, 11),
        }),
      );
      const second = await storage().transaction((tx) =>
        tx.subscriptionComponents.insertAllocation({
          siteId: s.site.id,
          subscriptionId: s.subscription.id,
          componentId: s.data.id,
          previousQuantity: 5,
          quantity: 2,
          memo: 'Fewer',
          upgradeCharge: null,
          downgradeCredit: 'none',
          accrueCharge: true,
          createdAt: at(T0, 12),
        }),
      );
      assert.ok(second.id > first.id);
      assert.equal(first.memo, null, 'a null memo stays null');
      assert.equal(first.downgradeCredit, null);
      assert.equal(second.accrueCharge, true);
      assert.equal(first.createdAt.getTime(), at(T0, 11).getTime());
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.subscriptionComponents.listAllocations(s.site.id, s.subscription.id), [
          first,
          second,
        ]);
        assert.deepEqual(await tx.subscriptionComponents.listAllocations(s.site.id, s.subscription.id, s.seats.id), [
          first,
        ]);
      });
    });

    it('keeps usage history of one component, listed by id', async () => {
      const s = await seed(storage(), 'sc-usages');
      const usages = await storage().transaction(async (tx) => [
        await tx.subscriptionComponents.insertUsage({
          siteId: s.site.id,
          subscriptionId: s.subscription.id,
          componentId: s.data.id,
          quantity: 3,
          memo: 'Batch',
          createdAt: at(T0, 21),
        }),
        await tx.subscriptionComponents.insertUsage({
          siteId: s.site.id,
          subscriptionId: s.subscription.id,
          componentId: s.seats.id,
          quantity: 1,
          memo: null,
          createdAt: at(T0, 22),
        }),
        await tx.subscriptionComponents.insertUsage({
          siteId: s.site.id,
          subscriptionId: s.subscription.id,
          componentId: s.data.id,
          quantity: 0,
          memo: null,
          createdAt: at(T0, 23),
        }),
      ]);
      const listed = await storage().transaction((tx) =>
        tx.subscriptionComponents.listUsages(s.site.id, s.subscription.id, s.data.id),
      );
      assert.deepEqual(listed, [usages[0], usages[2]]);
      assert.equal(listed[0]?.createdAt.getTime(), at(T0, 21).getTime());
    });

    it('hands out copies: mutating a returned row changes nothing stored', async () => {
      const s = await seed(storage(), 'sc-copy');
      const stored = await storage().transaction((tx) =>
        tx.subscriptionComponents.upsert(row(s.subscription, s.seats.id, { allocatedQuantity: 2 })),
      );
      (stored as { allocatedQuantity: number }).allocatedQuantity = 99;
      const found = await storage().transaction((tx) =>
        tx.subscriptionComponents.find(s.site.id, s.subscription.id, s.seats.id),
      );
      assert.equal(found?.allocatedQuantity, 2);
    });

    it('leaves no trace of a transaction that throws', async () => {
      const s = await seed(storage(), 'sc-rollback');
      await storage().transaction((tx) =>
        tx.subscriptionComponents.upsert(row(s.subscription, s.data.id, { unitBalance: 1 })),
      );
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.subscriptionComponents.upsert(row(s.subscription, s.seats.id, { allocatedQuantity: 4 }));
          await tx.subscriptionComponents.addUsage(s.site.id, s.subscription.id, s.data.id, 5, T0);
          await tx.subscriptionComponents.insertAllocation({
            siteId: s.site.id,
            subscriptionId: s.subscription.id,
            componentId: s.seats.id,
            previousQuantity: 0,
            quantity: 4,
            memo: null,
            upgradeCharge: 'full',
            downgradeCredit: 'full',
            accrueCharge: false,
            createdAt: T0,
          });
          await tx.subscriptionComponents.insertUsage({
            siteId: s.site.id,
            subscriptionId: s.subscription.id,
            componentId: s.data.id,
            quantity: 5,
            memo: null,
            createdAt: T0,
          });
          throw new Abort('roll back');
        }),
        Abort,
      );
      await storage().transaction(async (tx) => {
        assert.equal(await tx.subscriptionComponents.find(s.site.id, s.subscription.id, s.seats.id), undefined);
        assert.equal((await tx.subscriptionComponents.find(s.site.id, s.subscription.id, s.data.id))?.unitBalance, 1);
        assert.deepEqual(await tx.subscriptionComponents.listAllocations(s.site.id, s.subscription.id), []);
        assert.deepEqual(await tx.subscriptionComponents.listUsages(s.site.id, s.subscription.id, s.data.id), []);
      });
    });
  });
}
