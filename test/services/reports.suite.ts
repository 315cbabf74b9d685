import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { MRR_STATES, perMonth, sumMrr } from '../../src/services/report-service.js';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/**
 * `acme` (USD, UTC) with products basic (10.00 a month), annual (100.00 every 12 months), weekly
 * (7.00 every 7 days) and trial (10.00 a month after a 14-day free trial), components Seats (4.00
 * a seat) and Data (metered, 0.50 a GB), a recurring 10% coupon TENOFF; and `globex`, to show that
 * reports stay in their site.
 */
async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  await f.engine.sites.create({ subdomain: 'globex', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const other = await acme.catalog.createFamily({ name: 'Other' });
  const product = (handle: string, priceInCents: number, interval: number, intervalUnit: 'day' | 'month') =>
    acme.catalog.createProduct(family.id, { name: handle, handle, priceInCents, interval, intervalUnit });
  await product('basic', 1000, 1, 'month');
  await product('annual', 10_000, 12, 'month');
  await product('weekly', 700, 7, 'day');
  await acme.catalog.createProduct(family.id, {
    name: 'Trial',
    handle: 'trial',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
    trialInterval: 14,
    trialIntervalUnit: 'day',
    trialPriceInCents: 0,
  });
  const seats = await acme.components.create(family.id, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '4',
  });
  const data = await acme.components.create(family.id, {
    name: 'Data',
    kind: 'metered',
    unitName: 'GB',
    handle: 'data',
    unitPrice: '0.5',
  });
  await acme.coupons.create({
    name: 'Ten off',
    code: 'TENOFF',
    percentage: '10',
    recurring: true,
    productFamilyId: family.id,
  });
  let n = 0;
  const subscribe = async (productHandle: string, extra: Record<string, unknown> = {}) =>
    (
      await acme.subscriptions.create({
        productHandle,
        customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com` },
        creditCard: VISA,
        ...extra,
      })
    ).subscription;
  return {
    acme,
    globex: f.engine.site('globex'),
    familyId: family.id,
    otherFamilyId: other.id,
    seats: seats.component.id,
    data: data.component.id,
    subscribe,
  };
}

/** Site statistics, MRR and the site-wide lists, on every adapter. */
export function reportsSuite(harness: StorageHarness): void {
  describe(`reports (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-02-10T15:00:00Z');

    it('counts subscriptions by state and sums payments less refunds by local day, month and year', async () => {
      const f = fixture();
      const s = await setup(f);
      const a = await s.subscribe('basic');
      const b = await s.subscribe('basic');
      await s.acme.subscriptions.cancel(b.id, {});
      await s.acme.ledger.refund(a.id, { amountInCents: 300, memo: 'Goodwill', external: true });
      f.clock.set('2026-02-11T01:00:00Z');
      await s.subscribe('basic');

      const stats = await s.acme.reports.siteStatistics();
      expect(stats.at.toISOString()).toBe('2026-02-11T01:00:00.000Z');
      expect({
        total: stats.totalSubscriptions,
        today: stats.subscriptionsToday,
        revenue: stats.totalRevenueInCents,
        revenueToday: stats.revenueTodayInCents,
        month: stats.revenueThisMonthInCents,
        year: stats.revenueThisYearInCents,
        canceled: stats.totalCanceledSubscriptions,
        active: stats.totalActiveSubscriptions,
        pastDue: stats.totalPastDueSubscriptions,
        unpaid: stats.totalUnpaidSubscriptions,
        dunning: stats.totalDunningSubscriptions,
      }).toEqual({
        total: 3,
        today: 1,
        revenue: 2700,
        revenueToday: 1000,
        month: 2700,
        year: 2700,
        canceled: 1,
        active: 2,
        pastDue: 0,
        unpaid: 0,
        dunning: 0,
      });

      // A new month: the month's and the day's figures start again; the year's keep counting.
      f.clock.set('2026-03-01T00:30:00Z');
      const march = await s.acme.reports.siteStatistics();
      expect([
        march.subscriptionsToday,
        march.revenueTodayInCents,
        march.revenueThisMonthInCents,
        march.revenueThisYearInCents,
        march.totalRevenueInCents,
      ]).toEqual([0, 0, 0, 2700, 2700]);

      const globex = await s.globex.reports.siteStatistics();
      expect([globex.totalSubscriptions, globex.totalRevenueInCents, globex.totalActiveSubscriptions]).toEqual([
        0, 0, 0,
      ]);
    });

    it("starts the day, month and year at the site's local midnight", async () => {
      const f = fixture();
      await f.engine.sites.create({ subdomain: 'east', currency: 'USD', timeZone: 'America/New_York' });
      const east = f.engine.site('east');
      const family = await east.catalog.createFamily({ name: 'Plans' });
      await east.catalog.createProduct(family.id, {
        name: 'Basic',
        handle: 'basic',
        priceInCents: 1000,
        interval: 1,
        intervalUnit: 'month',
      });
      // 2026-03-01T03:00Z is still 28 February, 22:00, in New York.
      f.clock.set('2026-03-01T03:00:00Z');
      await east.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
        creditCard: VISA,
      });
      f.clock.set('2026-03-01T06:00:00Z');
      const stats = await east.reports.siteStatistics();
      expect([stats.subscriptionsToday, stats.revenueTodayInCents, stats.revenueThisMonthInCents]).toEqual([0, 0, 0]);
      expect(stats.revenueThisYearInCents).toBe(1000);
    });

    it('normalises each live subscription to a month, with components, usage and recurring coupons', async () => {
      const f = fixture();
      const s = await setup(f);
      const withComponents = await s.subscribe('basic', {
        components: [
          { componentId: s.seats, allocatedQuantity: 3 },
          { componentId: s.data, unitBalance: 5 },
        ],
      });
      const annual = await s.subscribe('annual');
      const weekly = await s.subscribe('weekly');
      const couponed = await s.subscribe('basic', { couponCodes: ['TENOFF'] });
      const trialing = await s.subscribe('trial');
      const cancelled = await s.subscribe('basic');
      await s.acme.subscriptions.cancel(cancelled.id, {});
      expect(trialing.state).toBe('trialing');

      // Plan: 10.00 + 3 seats at 4.00; usage: 5 GB at 0.50.
      const one = await s.acme.reports.mrr({ subscriptionId: withComponents.id });
      expect([one.amountInCents, one.planAmountInCents, one.usageAmountInCents]).toEqual([2450, 2200, 250]);

      const all = await s.acme.reports.listSubscriptionMrr();
      expect(all.totalCount).toBe(4);
      expect(all.items).toEqual([
        { subscriptionId: withComponents.id, amountInCents: 2450, planAmountInCents: 2200, usageAmountInCents: 250 },
        // 100.00 a year: 10000 / 12 = 833.33, rounded to 833.
        { subscriptionId: annual.id, amountInCents: 833, planAmountInCents: 833, usageAmountInCents: 0 },
        // 7.00 a week: 700 x 365 / 84 = 3041.67, rounded to 3042.
        { subscriptionId: weekly.id, amountInCents: 3042, planAmountInCents: 3042, usageAmountInCents: 0 },
        // 10.00 less the recurring 10% coupon.
        { subscriptionId: couponed.id, amountInCents: 900, planAmountInCents: 900, usageAmountInCents: 0 },
      ]);

      const site = await s.acme.reports.mrr();
      expect([site.amountInCents, site.planAmountInCents, site.usageAmountInCents]).toEqual([7225, 6975, 250]);
      // The same sum read in batches of one and of two subscriptions (keyset paging over the book).
      for (const batchSize of [1, 2]) {
        const summed = await f.storage.transaction(async (tx) => {
          const record = await tx.sites.findBySubdomain('acme');
          return sumMrr(tx, record!, { states: MRR_STATES }, batchSize);
        });
        expect(summed).toEqual({ plan: 6975, usage: 250 });
      }
      // A subscription that does not count (trialing) contributes nothing.
      expect((await s.acme.reports.mrr({ subscriptionId: trialing.id })).amountInCents).toBe(0);
      expect((await s.globex.reports.mrr()).amountInCents).toBe(0);
      expect((await s.globex.reports.listSubscriptionMrr()).items).toEqual([]);

      const page = await s.acme.reports.listSubscriptionMrr({ page: 2, perPage: 3, direction: 'asc' });
      expect([page.items.map((m) => m.subscriptionId), page.totalCount]).toEqual([[couponed.id], 4]);
      const desc = await s.acme.reports.listSubscriptionMrr({ perPage: 1, direction: 'desc' });
      expect(desc.items.map((m) => m.subscriptionId)).toEqual([couponed.id]);
      const chosen = await s.acme.reports.listSubscriptionMrr({ subscriptionIds: [trialing.id, annual.id] });
      expect([chosen.items.map((m) => m.subscriptionId), chosen.totalCount]).toEqual([[annual.id], 1]);

      // A renewal spends the usage: MRR then has no usage part until more is recorded.
      f.clock.set('2026-03-10T16:00:00Z');
      await f.engine.runDue();
      const renewed = await s.acme.reports.mrr({ subscriptionId: withComponents.id });
      expect([renewed.planAmountInCents, renewed.usageAmountInCents]).toEqual([2200, 0]);
    });

    it("equals a monthly subscription's next renewal: its charges less its coupon lines", async () => {
      const f = fixture();
      const s = await setup(f);
      const sub = await s.subscribe('basic', {
        couponCodes: ['TENOFF'],
        components: [
          { componentId: s.seats, allocatedQuantity: 3 },
          { componentId: s.data, unitBalance: 5 },
        ],
      });
      const before = await s.acme.reports.mrr({ subscriptionId: sub.id });
      // 10.00 + 12.00 of seats less 10%, and 2.50 of usage less 10%.
      expect([before.planAmountInCents, before.usageAmountInCents]).toEqual([1980, 225]);
      const renewalAt = new Date('2026-03-10T15:00:00Z');
      f.clock.set(renewalAt);
      await f.engine.runDue();
      const lines = await s.acme.subscriptions.transactions(sub.id);
      const renewal = lines.filter(
        (l) => l.createdAt.getTime() >= renewalAt.getTime() && (l.type === 'charge' || l.type === 'adjustment'),
      );
      expect(renewal.length).toBeGreaterThan(3);
      expect(renewal.reduce((sum, l) => sum + l.amountInCents, 0)).toBe(before.amountInCents);
    });

    it('answers MRR for the current local day only, and refuses bad filters with nothing read', async () => {
      const f = fixture();
      const s = await setup(f);
      await s.subscribe('basic');
      expect((await s.acme.reports.mrr({ atTime: '2026-02-10T01:00:00Z' })).amountInCents).toBe(1000);
      expect((await s.acme.reports.mrr({ atTime: '2026-02-10' })).amountInCents).toBe(1000);
      const past = await rejection(s.acme.reports.mrr({ atTime: '2026-02-09T23:59:59Z' }));
      expect([past.code, past.details?.[0]?.attribute]).toEqual(['validation', 'at_time']);
      const future = await rejection(s.acme.reports.listSubscriptionMrr({ atTime: '2026-02-11T00:00:00Z' }));
      expect(future.code).toBe('validation');
      expect((await rejection(s.acme.reports.mrr({ atTime: 'yesterday' }))).code).toBe('validation');
      expect((await rejection(s.acme.reports.mrr({ subscriptionId: -1 }))).code).toBe('validation');
      expect((await rejection(s.acme.reports.listSubscriptionMrr({ page: 0 }))).code).toBe('validation');
      const tooMany = Array.from({ length: 1001 }, (_, i) => i + 1);
      expect((await rejection(s.acme.reports.listSubscriptionMrr({ subscriptionIds: tooMany }))).code).toBe(
        'validation',
      );
      expect((await rejection(s.acme.reports.listMetadata('invoices'))).code).toBe('validation');
      expect((await rejection(f.engine.site('nowhere').reports.mrr())).code).toBe('not_found');
    });

    it('lists every metadata value of a resource type across the site, with counts, filters and order', async () => {
      const f = fixture();
      const s = await setup(f);
      await s.acme.metafields.createFields('customers', [{ name: 'tier' }, { name: 'region' }]);
      await s.acme.metafields.createFields('subscriptions', { name: 'channel' });
      const first = await s.subscribe('basic');
      const second = await s.subscribe('basic');
      await s.acme.metafields.setMetadata('customers', first.customerId, [
        { name: 'tier', value: 'gold' },
        { name: 'region', value: 'EU' },
      ]);
      f.clock.set('2026-02-12T09:00:00Z');
      await s.acme.metafields.setMetadata('customers', second.customerId, [{ name: 'tier', value: 'silver' }]);
      await s.acme.metafields.setMetadata('subscriptions', second.id, [{ name: 'channel', value: 'web' }]);

      const customers = await s.acme.reports.listMetadata('customers');
      expect(customers.totalCount).toBe(3);
      expect(customers.items.map((m) => [m.resourceId, m.name, m.value])).toEqual([
        [first.customerId, 'tier', 'gold'],
        [first.customerId, 'region', 'EU'],
        [second.customerId, 'tier', 'silver'],
      ]);
      const subscriptions = await s.acme.reports.listMetadata('subscriptions');
      expect(subscriptions.items.map((m) => [m.resourceId, m.value])).toEqual([[second.id, 'web']]);

      const paged = await s.acme.reports.listMetadata('customers', { page: 2, perPage: 2, direction: 'desc' });
      expect([paged.items.map((m) => m.value), paged.totalCount, paged.page, paged.perPage]).toEqual([
        ['gold'],
        3,
        2,
        2,
      ]);
      const mine = await s.acme.reports.listMetadata('customers', { resourceIds: [second.customerId] });
      expect(mine.items.map((m) => m.value)).toEqual(['silver']);
      const recent = await s.acme.reports.listMetadata('customers', {
        dateField: 'updated_at',
        startDate: '2026-02-11',
      });
      expect([recent.items.map((m) => m.value), recent.totalCount]).toEqual([['silver'], 1]);
      const early = await s.acme.reports.listMetadata('customers', {
        dateField: 'created_at',
        endDatetime: '2026-02-10T15:00:00Z',
      });
      expect(early.items.map((m) => m.value)).toEqual(['gold', 'EU']);
      expect((await s.globex.reports.listMetadata('customers')).totalCount).toBe(0);
      const bad = await rejection(s.acme.reports.listMetadata('customers', { startDate: '2026-13-01' }));
      expect(bad.code).toBe('validation');
    });

    it('lists every subscription component across the site, filtered by subscription, family and state', async () => {
      const f = fixture();
      const s = await setup(f);
      const a = await s.subscribe('basic', { components: [{ componentId: s.seats, allocatedQuantity: 2 }] });
      const b = await s.subscribe('basic', {
        components: [
          { componentId: s.seats, allocatedQuantity: 1 },
          { componentId: s.data, unitBalance: 4 },
        ],
      });
      await s.subscribe('basic');
      await s.acme.subscriptions.cancel(a.id, {});

      const all = await s.acme.reports.listSubscriptionComponents();
      expect(
        all.items.map((r) => [
          r.subscriptionComponent.subscriptionId,
          r.component.handle,
          r.subscriptionComponent.allocatedQuantity,
          r.subscriptionComponent.unitBalance,
        ]),
      ).toEqual([
        [a.id, 'seats', 2, 0],
        [b.id, 'seats', 1, 0],
        [b.id, 'data', 0, 4],
      ]);
      expect(all.items[0]?.version.pricing.scheme).toBe('per_unit');
      const ofB = await s.acme.reports.listSubscriptionComponents({ subscriptionIds: [b.id], direction: 'desc' });
      expect(ofB.items.map((r) => r.component.handle)).toEqual(['data', 'seats']);
      const cancelled = await s.acme.reports.listSubscriptionComponents({ subscriptionStates: ['canceled'] });
      expect(cancelled.items.map((r) => r.subscriptionComponent.subscriptionId)).toEqual([a.id]);
      expect((await s.acme.reports.listSubscriptionComponents({ productFamilyIds: [s.otherFamilyId] })).items).toEqual(
        [],
      );
      expect(
        (await s.acme.reports.listSubscriptionComponents({ productFamilyIds: [s.familyId], perPage: 2, page: 2 })).items
          .length,
      ).toBe(1);
      expect((await s.acme.reports.listSubscriptionComponents({ currencies: ['EUR'] })).items).toEqual([]);
      expect((await s.acme.reports.listSubscriptionComponents({ currencies: ['usd'] })).items.length).toBe(3);
      expect((await s.globex.reports.listSubscriptionComponents()).items).toEqual([]);
      const badState = await rejection(s.acme.reports.listSubscriptionComponents({ subscriptionStates: ['gone'] }));
      expect(badState.code).toBe('validation');
    });

    it('normalises intervals to a month with half-up rounding of integer cents', () => {
      expect(perMonth(10_000, 12, 'month')).toBe(833);
      expect(perMonth(10_006, 12, 'month')).toBe(834);
      expect(perMonth(3000, 3, 'month')).toBe(1000);
      expect(perMonth(700, 7, 'day')).toBe(3042);
      expect(perMonth(-10_006, 12, 'month')).toBe(-834);
      expect(perMonth(1200, 365, 'day')).toBe(100);
    });
  });
}
