import assert from 'node:assert/strict';
import type { ComponentRecord, ProductFamilyRecord, Storage, SubscriptionRecord } from 'billing-engine';
import { type BillingSeed, ledgerLineFixture, seedBillingSite, subscriptionFixture } from './billing-fixtures.js';
import { at, newSiteFixture, type SectionContext, T0 } from './harness.js';

const HOUR = 3_600_000;

/** A component of a family, priced per unit at `unitPrice`. */
function newComponent(
  family: Pick<ProductFamilyRecord, 'siteId' | 'id'>,
  name: string,
  kind: ComponentRecord['kind'],
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

const perUnit = (unitPrice: string) => ({
  scheme: 'per_unit' as const,
  brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice }],
});

/**
 * A site with subscriptions in several states (active x2, trialing, cancelled, past_due), the
 * active ones with components, and payment and refund lines at known instants.
 */
interface Seeded extends BillingSeed {
  readonly active: SubscriptionRecord;
  readonly second: SubscriptionRecord;
  readonly trialing: SubscriptionRecord;
  readonly cancelled: SubscriptionRecord;
  readonly pastDue: SubscriptionRecord;
  readonly seats: ComponentRecord;
  readonly data: ComponentRecord;
}

async function seed(storage: Storage, subdomain: string): Promise<Seeded> {
  const base = await seedBillingSite(storage, subdomain);
  return storage.transaction(async (tx) => {
    const insert = (overrides: Partial<Omit<SubscriptionRecord, 'id' | 'version'>>) =>
      tx.subscriptions.insert(subscriptionFixture(base.customer, base.product, overrides));
    const active = await insert({
      couponCodes: ['SAVE'],
      data: { couponUses: { SAVE: 2 }, couponDeferred: ['LATER'], other: 'x' },
    });
    const second = await insert({ createdAt: at(T0, 2 * HOUR) });
    const trialing = await insert({ state: 'trialing', createdAt: at(T0, 3 * HOUR) });
    const cancelled = await insert({ state: 'cancelled', createdAt: at(T0, 4 * HOUR) });
    const pastDue = await insert({ state: 'past_due', createdAt: at(T0, 5 * HOUR) });
    const seats = (
      await tx.components.insert(newComponent(base.family, 'Seats', 'quantity_based_component'), perUnit('4'))
    ).component;
    const data = (await tx.components.insert(newComponent(base.family, 'Data', 'metered_component'), perUnit('0.5')))
      .component;
    const row = (
      s: SubscriptionRecord,
      componentId: number,
      allocatedQuantity: number,
      unitBalance: number,
      ms: number,
    ) =>
      tx.subscriptionComponents.upsert({
        siteId: s.siteId,
        subscriptionId: s.id,
        componentId,
        componentVersion: 1,
        allocatedQuantity,
        unitBalance,
        createdAt: at(T0, ms),
        updatedAt: at(T0, ms),
      });
    // Inserted out of component order, so that an adapter returning insertion order shows.
    await row(active, data.id, 0, 7, 10);
    await row(active, seats.id, 3, 0, 11);
    await row(second, seats.id, 1, 0, 12 * HOUR);
    await row(cancelled, seats.id, 5, 0, 13 * HOUR);
    await tx.ledger.append([
      ledgerLineFixture(active, 1000),
      ledgerLineFixture(active, -1000, { type: 'payment', amountInCents: 1000, success: true, createdAt: at(T0, 1) }),
      // A failed payment moved nothing and received nothing.
      ledgerLineFixture(active, 0, { type: 'payment', amountInCents: 500, success: false, createdAt: at(T0, 2) }),
      ledgerLineFixture(active, 300, {
        type: 'refund',
        amountInCents: 300,
        success: true,
        createdAt: at(T0, 6 * HOUR),
      }),
    ]);
    await tx.ledger.append([
      ledgerLineFixture(second, -2500, {
        type: 'payment',
        amountInCents: 2500,
        success: null,
        createdAt: at(T0, 30 * HOUR),
      }),
    ]);
    return { ...base, active, second, trialing, cancelled, pastDue, seats, data };
  });
}

/** Cases for the reports repository. */
export function reportCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('reports', () => {
    it('counts subscriptions by state and created since an instant, within the site', async () => {
      const s = await seed(storage(), 'rep-count');
      const other = await seed(storage(), 'rep-count-other');
      await storage().transaction(async (tx) => {
        const counts = await tx.reports.countSubscriptions(s.site.id, at(T0, 3 * HOUR));
        assert.equal(counts.total, 5);
        assert.equal(counts.createdSince, 3, 'the bound is inclusive');
        assert.deepEqual(
          Object.entries(counts.byState).sort(([a], [b]) => a.localeCompare(b)),
          [
            ['active', 2],
            ['cancelled', 1],
            ['past_due', 1],
            ['trialing', 1],
          ],
        );
        assert.equal((await tx.reports.countSubscriptions(other.site.id, T0)).total, 5);
        const empty = await tx.sites.insert(newSiteFixture('rep-count-empty'));
        assert.deepEqual(await tx.reports.countSubscriptions(empty.id, T0), { total: 0, createdSince: 0, byState: {} });
      });
    });

    it('sums successful payments less successful refunds between inclusive bounds', async () => {
      const s = await seed(storage(), 'rep-revenue');
      await seed(storage(), 'rep-revenue-other');
      await storage().transaction(async (tx) => {
        const net = (from: Date | null, until: Date) => tx.reports.netRevenue(s.site.id, from, until);
        assert.equal(await net(null, at(T0, 100 * HOUR)), 1000 - 300 + 2500);
        assert.equal(await net(null, at(T0, 6 * HOUR - 1)), 1000, 'a line after `until` is left out');
        assert.equal(await net(at(T0, 6 * HOUR), at(T0, 6 * HOUR)), -300, 'both bounds are inclusive');
        assert.equal(await net(at(T0, 7 * HOUR), at(T0, 100 * HOUR)), 2500, 'a success of null counts');
        assert.equal(await net(at(T0, 200 * HOUR), at(T0, 300 * HOUR)), 0);
      });
    });

    it('reads MRR inputs by page with pinned terms, components in component order and coupon data', async () => {
      const s = await seed(storage(), 'rep-mrr');
      await storage().transaction(async (tx) => {
        const filter = { states: ['active', 'past_due'] as const };
        assert.equal(await tx.reports.countMrrSubscriptions(s.site.id, filter), 3);
        const all = await tx.reports.listMrrInputs(s.site.id, filter, 'asc', { page: 1, perPage: 10 });
        assert.deepEqual(
          all.map((m) => [m.subscriptionId, m.state]),
          [
            [s.active.id, 'active'],
            [s.second.id, 'active'],
            [s.pastDue.id, 'past_due'],
          ],
        );
        const [first] = all;
        assert.ok(first);
        assert.equal(first.terms.priceInCents, 1999);
        assert.equal(first.terms.intervalUnit, 'month');
        assert.deepEqual(first.couponCodes, ['SAVE']);
        assert.deepEqual(first.couponUses, { SAVE: 2 });
        assert.deepEqual(first.couponDeferred, ['LATER']);
        assert.deepEqual(
          first.components.map((c) => [c.componentId, c.kind, c.allocatedQuantity, c.unitBalance, c.pricing]),
          [
            [s.seats.id, 'quantity_based_component', 3, 0, perUnit('4')],
            [s.data.id, 'metered_component', 0, 7, perUnit('0.5')],
          ],
        );
        assert.deepEqual(all[2]?.components, []);
        const desc = await tx.reports.listMrrInputs(s.site.id, filter, 'desc', { page: 2, perPage: 2 });
        assert.deepEqual(
          desc.map((m) => m.subscriptionId),
          [s.active.id],
        );
        const chosen = { states: ['active'] as const, subscriptionIds: [s.second.id, s.pastDue.id] };
        assert.equal(await tx.reports.countMrrSubscriptions(s.site.id, chosen), 1);
        assert.deepEqual(
          (await tx.reports.listMrrInputs(s.site.id, chosen, 'asc', { page: 1, perPage: 10 })).map(
            (m) => m.subscriptionId,
          ),
          [s.second.id],
        );
        const after = { ...filter, afterId: s.active.id };
        assert.equal(await tx.reports.countMrrSubscriptions(s.site.id, after), 2);
        assert.deepEqual(
          (await tx.reports.listMrrInputs(s.site.id, after, 'asc', { page: 1, perPage: 1 })).map(
            (m) => m.subscriptionId,
          ),
          [s.second.id],
          'keyset paging starts after the id',
        );
        const none = { states: ['active'] as const, subscriptionIds: [] };
        assert.equal(await tx.reports.countMrrSubscriptions(s.site.id, none), 0);
        assert.deepEqual(await tx.reports.listMrrInputs(s.site.id, none, 'asc', { page: 1, perPage: 10 }), []);
      });
    });

    it('lists the metadata of a resource type across records, with counts, id filters, date bounds and order', async () => {
      const s = await seed(storage(), 'rep-meta');
      const other = await seed(storage(), 'rep-meta-other');
      const values = await storage().transaction(async (tx) => {
        const field = (siteId: number, resourceType: 'customer' | 'subscription', name: string) =>
          tx.metafields.insertField({
            siteId,
            resourceType,
            name,
            inputType: 'text',
            enumValues: null,
            scope: { hosted: [], csv: false, invoices: false, statements: false, portal: false },
            createdAt: T0,
            updatedAt: T0,
          });
        const tier = await field(s.site.id, 'subscription', 'tier');
        const region = await field(s.site.id, 'subscription', 'region');
        const customerField = await field(s.site.id, 'customer', 'tier');
        const foreign = await field(other.site.id, 'subscription', 'tier');
        const set = (f: typeof tier, resourceId: number, value: string, ms: number) =>
          tx.metafields.setValue({
            siteId: f.siteId,
            resourceType: f.resourceType,
            resourceId,
            metafieldId: f.id,
            name: f.name,
            value,
            updatedAt: at(T0, ms),
            now: at(T0, ms),
          });
        return [
          await set(tier, s.active.id, 'gold', 1000),
          await set(region, s.active.id, 'EU', 2000),
          await set(tier, s.second.id, 'silver', 3000),
          await set(customerField, s.customer.id, 'vip', 4000),
          await set(foreign, other.active.id, 'other', 5000),
        ];
      });
      const [gold, eu, silver] = values;
      await storage().transaction(async (tx) => {
        const page = { page: 1, perPage: 10 };
        assert.deepEqual(await tx.reports.listMetadata(s.site.id, 'subscription', {}, page), [gold, eu, silver]);
        assert.equal(await tx.reports.countMetadata(s.site.id, 'subscription', {}), 3);
        assert.equal(await tx.reports.countMetadata(s.site.id, 'customer', {}), 1);
        assert.deepEqual(
          await tx.reports.listMetadata(s.site.id, 'subscription', { direction: 'desc' }, { page: 1, perPage: 2 }),
          [silver, eu],
        );
        assert.deepEqual(
          await tx.reports.listMetadata(s.site.id, 'subscription', { resourceIds: [s.second.id] }, page),
          [silver],
        );
        assert.deepEqual(await tx.reports.listMetadata(s.site.id, 'subscription', { resourceIds: [] }, page), []);
        const bounded = { dateField: 'updated_at' as const, since: at(T0, 2000), until: at(T0, 3000) };
        assert.deepEqual(await tx.reports.listMetadata(s.site.id, 'subscription', bounded, page), [eu, silver]);
        assert.equal(await tx.reports.countMetadata(s.site.id, 'subscription', bounded), 2);
      });
    });

    it('lists subscription components across the site with their component and pinned version', async () => {
      const s = await seed(storage(), 'rep-comp');
      await seed(storage(), 'rep-comp-other');
      await storage().transaction(async (tx) => {
        const page = { page: 1, perPage: 10 };
        const all = await tx.reports.listSubscriptionComponents(s.site.id, {}, page);
        assert.deepEqual(
          all.map((r) => [r.subscriptionComponent.subscriptionId, r.component.id, r.version.version]),
          [
            [s.active.id, s.data.id, 1],
            [s.active.id, s.seats.id, 1],
            [s.second.id, s.seats.id, 1],
            [s.cancelled.id, s.seats.id, 1],
          ],
        );
        assert.deepEqual(all[0]?.component, s.data);
        assert.deepEqual(all[0]?.version.pricing, perUnit('0.5'));
        const ids = (filter: Parameters<typeof tx.reports.listSubscriptionComponents>[1], p = page) =>
          tx.reports
            .listSubscriptionComponents(s.site.id, filter, p)
            .then((rows) => rows.map((r) => r.subscriptionComponent.id));
        const rowIds = all.map((r) => r.subscriptionComponent.id);
        assert.deepEqual(await ids({ direction: 'desc' }, { page: 1, perPage: 2 }), [rowIds[3], rowIds[2]]);
        assert.deepEqual(await ids({ subscriptionStates: ['cancelled'] }), [rowIds[3]]);
        assert.deepEqual(await ids({ subscriptionIds: [s.second.id, s.trialing.id] }), [rowIds[2]]);
        assert.deepEqual(await ids({ productFamilyIds: [s.family.id] }), rowIds);
        assert.deepEqual(await ids({ productFamilyIds: [] }), []);
        assert.deepEqual(await ids({ updatedSince: at(T0, 11), updatedUntil: at(T0, 12 * HOUR) }), [
          rowIds[1],
          rowIds[2],
        ]);
        assert.deepEqual(await ids({ sort: 'updated_at', direction: 'desc' }, { page: 1, perPage: 1 }), [rowIds[3]]);
      });
    });
  });
}
