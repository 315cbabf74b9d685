import { createBillingEngine, createTestGateway, ManualClock } from 'billing-engine';
import { createSqliteStorage } from 'billing-engine/adapters/sqlite';
import { describe, expect, it } from 'vitest';

/**
 * The report reads run a fixed number of statements whatever the size of the book (no statement
 * per subscription), counted through the SQLite adapter's statement trace.
 */

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/** A site with `count` subscriptions, each with two seats and a coupon; counts the statements of `read`. */
async function statementsOf(count: number, read: (site: ReturnType<typeof engineOf>['site']) => Promise<unknown>) {
  const { engine, counter } = engineOf();
  await engine.migrate();
  await engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const site = engine.site('acme');
  const family = await site.catalog.createFamily({ name: 'Plans' });
  await site.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  const seats = await site.components.create(family.id, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    unitPrice: '2',
  });
  await site.coupons.create({
    name: 'Ten',
    code: 'TEN',
    percentage: '10',
    recurring: true,
    productFamilyId: family.id,
  });
  for (let i = 0; i < count; i++) {
    await site.subscriptions.create({
      productHandle: 'basic',
      customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${i}@example.com` },
      creditCard: VISA,
      couponCodes: ['TEN'],
      components: [{ componentId: seats.component.id, allocatedQuantity: 2 }],
    });
  }
  counter.statements = 0;
  const value = await read(site);
  const statements = counter.statements;
  await engine.close();
  return { value, statements };
}

function engineOf() {
  const counter = { statements: 0 };
  const storage = createSqliteStorage({
    database: ':memory:',
    trace: () => {
      counter.statements += 1;
    },
  });
  const engine = createBillingEngine({
    storage,
    clock: new ManualClock('2026-02-10T15:00:00Z'),
    gateway: createTestGateway(),
  });
  return { engine, counter, site: engine.site('acme') };
}

describe('report reads on SQLite: statements do not grow with the book', () => {
  it('site MRR, a page of MRR per subscription, statistics and the component list', async () => {
    const reads: Record<string, (site: ReturnType<typeof engineOf>['site']) => Promise<unknown>> = {
      mrr: (site) => site.reports.mrr(),
      perSubscription: (site) => site.reports.listSubscriptionMrr({ perPage: 200 }),
      statistics: (site) => site.reports.siteStatistics(),
      components: (site) => site.reports.listSubscriptionComponents({ perPage: 200 }),
      metadata: (site) => site.reports.listMetadata('customers', { perPage: 200 }),
    };
    for (const [name, read] of Object.entries(reads)) {
      const small = await statementsOf(2, read);
      const large = await statementsOf(25, read);
      expect([name, large.statements]).toEqual([name, small.statements]);
      expect(small.statements, name).toBeGreaterThan(2);
    }
    // And the figures are of the whole book: 25 x (10.00 + 2 x 2.00) less 10%.
    const { value } = await statementsOf(25, (site) => site.reports.mrr());
    expect((value as { amountInCents: number }).amountInCents).toBe(25 * 1260);
  }, 60_000);
});
