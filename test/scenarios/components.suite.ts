import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 3000,
    interval: 1,
    intervalUnit: 'month',
  });
  const seats = await acme.components.create(family.id, {
    kind: 'quantity_based_component',
    name: 'Seats',
    unitName: 'seat',
    pricingScheme: 'per_unit',
    unitPrice: '10.00',
  });
  const api = await acme.components.create(family.id, {
    kind: 'metered_component',
    name: 'API calls',
    unitName: 'call',
    pricingScheme: 'tiered',
    prices: [
      { startingQuantity: 1, endingQuantity: 1000, unitPrice: '0.0001' },
      { startingQuantity: 1001, endingQuantity: null, unitPrice: '0.01' },
    ],
  });
  return { acme, seats: seats.component.id, api: api.component.id };
}

const rows = async (f: EngineFixture, id: number) =>
  (await f.engine.site('acme').subscriptions.transactions(id)).map((l) => [
    l.createdAt.toISOString().slice(0, 10),
    l.type,
    l.kind,
    l.componentId,
    l.amountInCents,
    l.endingBalanceInCents,
  ]);

/** Components through signup, allocation changes and renewals, on every adapter. April has 30 days. */
export function componentScenarios(harness: StorageHarness): void {
  describe(`components over time (${harness.name})`, () => {
    const fixture = useEngine(harness, '2027-04-01T00:00:00Z');

    it('charges seats with the first period, bills metered usage in arrears, and prorates allocation changes', async () => {
      const f = fixture();
      const { acme, seats, api } = await setup(f);
      const sub = await acme.subscriptions.create({
        productHandle: 'basic',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: VISA,
        components: [
          { componentId: seats, allocatedQuantity: 2 },
          { componentId: api, unitBalance: 0 },
        ],
      });
      const id = sub.subscription.id;
      expect(await rows(f, id)).toEqual([
        ['2027-04-01', 'charge', 'baseline', null, 3000, 3000],
        ['2027-04-01', 'charge', 'quantity_based_component', seats, 2000, 5000],
        ['2027-04-01', 'payment', null, null, 5000, 0],
      ]);
      // Ten days in: 2 -> 5 seats, prorated over the 20 days left of 30; paid now.
      f.clock.set('2027-04-11T00:00:00Z');
      await acme.allocations.allocate(id, seats, { quantity: 5, memo: 'team grew' });
      // Twenty days in: 5 -> 4 seats, a prorated credit for the 10 days left.
      f.clock.set('2027-04-21T00:00:00Z');
      await acme.allocations.allocate(id, seats, { quantity: 4 });
      await acme.allocations.recordUsage(id, api, { quantity: 1500 });
      await acme.allocations.recordUsage(id, api, { quantity: 300 });
      f.clock.set('2027-05-02T00:00:00Z');
      await f.engine.runDue();
      expect((await rows(f, id)).slice(3)).toEqual([
        ['2027-04-11', 'charge', 'quantity_based_component', seats, 2000, 2000],
        ['2027-04-11', 'payment', 'component_proration', seats, 2000, 0],
        ['2027-04-21', 'credit', 'quantity_based_component', seats, -333, -333],
        ['2027-05-01', 'charge', 'baseline', null, 3000, 2667],
        ['2027-05-01', 'charge', 'quantity_based_component', seats, 4000, 6667],
        // 1,800 calls: 1,000 at 0.0001 and 800 at 0.01 = 8.10, in arrears.
        ['2027-05-01', 'charge', 'metered_component', api, 810, 7477],
        ['2027-05-01', 'payment', null, null, 7477, 0],
      ]);
      const components = await acme.allocations.listComponents(id);
      expect(
        components.map((c) => [
          c.component.id,
          c.subscriptionComponent.allocatedQuantity,
          c.subscriptionComponent.unitBalance,
        ]),
      ).toEqual([
        [seats, 4, 0],
        [api, 0, 0],
      ]);
      expect((await acme.allocations.listAllocations(id)).map((a) => [a.previousQuantity, a.quantity, a.memo])).toEqual(
        [
          [2, 5, 'team grew'],
          [5, 4, null],
        ],
      );
    });
  });
}
