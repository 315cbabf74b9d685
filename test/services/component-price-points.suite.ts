import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/**
 * `acme` with a 30.00-a-month product `basic`, a Seats component at 9.00 a seat, a Data component
 * (metered) and a component of another family; plus a subscriber to `basic` signed up at the
 * clock's instant (April has 30 days).
 */
async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const other = await acme.catalog.createFamily({ name: 'Other' });
  await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 3000,
    interval: 1,
    intervalUnit: 'month',
  });
  const seats = await acme.components.create(family.id, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '9',
  });
  const foreign = await acme.components.create(other.id, {
    name: 'Foreign',
    kind: 'quantity_based',
    unitName: 'thing',
    handle: 'foreign',
    unitPrice: '1',
  });
  const sub = await acme.subscriptions.create({
    productHandle: 'basic',
    customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
    creditCard: VISA,
  });
  return { acme, seats: seats.component.id, foreign: foreign.component.id, subId: sub.subscription.id };
}

/** The pinned version of the subscription's Seats. */
async function seatsRow(acme: ReturnType<EngineFixture['engine']['site']>, subId: number, seats: number) {
  return (await acme.allocations.listComponents(subId)).find((v) => v.component.id === seats)?.subscriptionComponent;
}

/** Price points of components, and subscriptions moved between them, on every adapter. */
export function componentPricePointsSuite(harness: StorageHarness): void {
  describe(`component price points (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-04-01T00:00:00Z');

    it('gives every component a default price point that follows its pricing changes', async () => {
      const { acme, seats } = await setup(fixture());
      const [only, ...rest] = await acme.pricePoints.listComponentPricePoints('seats');
      expect(rest).toEqual([]);
      expect(only?.pricePoint).toMatchObject({ name: 'Original', handle: 'original', type: 'default', version: 1 });
      expect(only?.version.pricing).toEqual({
        scheme: 'per_unit',
        brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice: '9' }],
      });
      // A component pricing change versions the default price point, which stays the default.
      const changed = await acme.components.update(seats, { unitPrice: '10' });
      const read = await acme.pricePoints.getComponentPricePoint(seats, 'original');
      expect(read.pricePoint.id).toBe(only?.pricePoint.id);
      expect(read.pricePoint.version).toBe(changed.component.currentVersion);
      expect(read.version.pricing.brackets[0]?.unitPrice).toBe('10');
    });

    it('creates, reads, updates, archives, unarchives and promotes a price point, refusing what the service refuses', async () => {
      const { acme, seats, foreign } = await setup(fixture());
      const premium = await acme.pricePoints.createComponentPricePoint(seats, {
        name: 'Premium',
        pricingScheme: 'volume',
        prices: [
          { startingQuantity: 1, endingQuantity: 10, unitPrice: '12' },
          { startingQuantity: 11, unitPrice: '10.5' },
        ],
      });
      expect(premium.pricePoint).toMatchObject({ name: 'Premium', handle: 'premium', type: 'catalog' });
      expect(premium.version.pricing.scheme).toBe('volume');
      // The component's own pricing is untouched: the new version is not current.
      const component = await acme.components.get(seats);
      expect(component.version.version).toBe(1);
      expect(premium.pricePoint.version).toBe(2);

      const bad = await rejection(
        acme.pricePoints.createComponentPricePoint(seats, {
          name: ' ',
          pricingScheme: 'per_unit',
          prices: [{ startingQuantity: 1, unitPrice: '0' }],
        }),
      );
      expect([bad.httpStatus, bad.shape]).toEqual([422, 'map']);
      expect(bad.details.map((d) => d.attribute).sort()).toEqual(['name', 'unit_price']);
      const taken = await rejection(
        acme.pricePoints.createComponentPricePoint(seats, { name: 'Again', handle: 'premium', unitPrice: '1' }),
      );
      expect(taken.details).toEqual([
        { message: 'Handle: must be unique - that value has been taken.', attribute: 'handle' },
      ]);
      const missing = await rejection(acme.pricePoints.getComponentPricePoint(seats, 999999));
      expect(missing.httpStatus).toBe(404);
      // Another component's price point is not found under this one.
      const elsewhere = await rejection(acme.pricePoints.getComponentPricePoint(foreign, premium.pricePoint.id));
      expect(elsewhere.httpStatus).toBe(404);

      const repriced = await acme.pricePoints.updateComponentPricePoint(seats, 'premium', { unitPrice: '11' });
      expect(repriced.version.pricing).toEqual({
        scheme: 'per_unit',
        brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice: '11' }],
      });
      expect(repriced.pricePoint.version).toBe(3);
      const renamed = await acme.pricePoints.updateComponentPricePoint(seats, 'premium', { name: 'Gold' });
      expect([renamed.pricePoint.name, renamed.pricePoint.version]).toEqual(['Gold', 3]);
      const badUpdate = await rejection(
        acme.pricePoints.updateComponentPricePoint(seats, 'premium', { pricingScheme: 'tiered', prices: [] }),
      );
      expect([badUpdate.httpStatus, badUpdate.shape]).toEqual([422, 'map']);

      const defaultArchive = await rejection(acme.pricePoints.archiveComponentPricePoint(seats, 'original'));
      expect(defaultArchive.httpStatus).toBe(422);
      const archived = await acme.pricePoints.archiveComponentPricePoint(seats, 'premium');
      expect(archived.pricePoint.archivedAt).not.toBeNull();
      expect((await acme.pricePoints.listComponentPricePoints(seats)).map((v) => v.pricePoint.handle)).toEqual([
        'original',
      ]);
      expect(
        (await acme.pricePoints.listComponentPricePoints(seats, { includeArchived: true })).map(
          (v) => v.pricePoint.handle,
        ),
      ).toEqual(['original', 'premium']);
      const archivedDefault = await rejection(acme.pricePoints.promoteComponentPricePointToDefault(seats, 'premium'));
      expect(archivedDefault.httpStatus).toBe(422);
      await acme.pricePoints.unarchiveComponentPricePoint(seats, 'premium');

      const promoted = await acme.pricePoints.promoteComponentPricePointToDefault(seats, 'premium');
      expect(promoted.component.currentVersion).toBe(3);
      expect(promoted.version.pricing.brackets[0]?.unitPrice).toBe('11');
      const types = (await acme.pricePoints.listComponentPricePoints(seats)).map((v) => [
        v.pricePoint.handle,
        v.pricePoint.type,
      ]);
      expect(types).toEqual([
        ['original', 'catalog'],
        ['premium', 'default'],
      ]);
      // The old default can be archived now.
      await acme.pricePoints.archiveComponentPricePoint(seats, 'original');
    });

    it('creates a batch all or none, and lists every component price point with filters', async () => {
      const { acme, seats, foreign } = await setup(fixture());
      const refused = await rejection(
        acme.pricePoints.bulkCreateComponentPricePoints(seats, [
          { name: 'Fine', unitPrice: '1' },
          { name: 'Broken', pricingScheme: 'stairstep', prices: [] },
        ]),
      );
      expect(refused.httpStatus).toBe(422);
      expect(await acme.pricePoints.listComponentPricePoints(seats)).toHaveLength(1);
      const made = await acme.pricePoints.bulkCreateComponentPricePoints(seats, [
        { name: 'Fine', unitPrice: '1' },
        { name: 'Fine', unitPrice: '2' },
      ]);
      // Two names alike get two handles.
      expect(made.map((v) => v.pricePoint.handle)).toEqual(['fine', 'fine-2']);
      await acme.pricePoints.archiveComponentPricePoint(seats, 'fine-2');
      const all = await acme.pricePoints.listAllComponentPricePoints();
      expect(all.map((v) => [v.pricePoint.componentId, v.pricePoint.handle])).toEqual([
        [seats, 'original'],
        [foreign, 'original'],
        [seats, 'fine'],
      ]);
      const onlyArchived = await acme.pricePoints.listAllComponentPricePoints({ archivedAt: 'not_null' });
      expect(onlyArchived.map((v) => v.pricePoint.handle)).toEqual(['fine-2']);
      const catalog = await acme.pricePoints.listAllComponentPricePoints({ types: ['catalog'] });
      expect(catalog.map((v) => v.pricePoint.handle)).toEqual(['fine']);
      const byId = await acme.pricePoints.listAllComponentPricePoints({ ids: [made[0]!.pricePoint.id] });
      expect(byId.map((v) => v.pricePoint.handle)).toEqual(['fine']);
    });

    it('prices an allocation at the price point it names and moves the component there', async () => {
      const f = fixture();
      const { acme, seats, subId } = await setup(f);
      const premium = await acme.pricePoints.createComponentPricePoint(seats, {
        name: 'Premium',
        handle: 'premium',
        unitPrice: '12',
      });
      f.clock.set('2026-04-16T00:00:00Z');
      const missing = await rejection(acme.allocations.allocate(subId, seats, { quantity: 2, pricePointId: 999999 }));
      expect(missing.httpStatus).toBe(404);
      // 2 seats at 12.00 with 15 of 30 days left: 12.00.
      const result = await acme.allocations.allocate(subId, seats, { quantity: 2, pricePointId: 'premium' });
      expect(result.chargeInCents).toBe(1200);
      expect(result.subscriptionComponent.componentVersion).toBe(premium.pricePoint.version);
      // Without a price point the next change stays on the premium pricing: 3 → 1 more seat, 6.00.
      const more = await acme.allocations.allocate(subId, seats, { quantity: 3 });
      expect(more.chargeInCents).toBe(600);
      // Back to the default: the 3 seats held are valued at premium (18.00 for the half period), 4 at 9.00 (18.00).
      const back = await acme.allocations.allocate(subId, seats, {
        quantity: 4,
        pricePointHandle: 'original',
      });
      expect([back.chargeInCents, back.creditInCents]).toEqual([0, 0]);
      expect((await seatsRow(acme, subId, seats))?.componentVersion).toBe(1);

      await acme.pricePoints.archiveComponentPricePoint(seats, 'premium');
      const before = await acme.allocations.listAllocations(subId, seats);
      const archived = await rejection(
        acme.allocations.allocate(subId, seats, { quantity: 5, pricePointId: 'premium' }),
      );
      expect([archived.httpStatus, archived.shape]).toEqual([422, 'objects']);
      expect(await acme.allocations.listAllocations(subId, seats)).toEqual(before);
      expect((await seatsRow(acme, subId, seats))?.allocatedQuantity).toBe(4);
    });

    it('moves a subscription component to another price point from its next charge, and back with a reset', async () => {
      const f = fixture();
      const { acme, seats, foreign, subId } = await setup(f);
      await acme.allocations.allocate(subId, seats, { quantity: 3 });
      const premium = await acme.pricePoints.createComponentPricePoint(seats, { name: 'Premium', unitPrice: '12' });
      const linesBefore = (await acme.subscriptions.transactions(subId)).length;

      const refused = await rejection(
        acme.pricePoints.setSubscriptionComponentPricePoints(subId, [
          { componentId: seats, pricePoint: 'nope' },
          { componentId: foreign, pricePoint: 'original' },
        ]),
      );
      expect([refused.httpStatus, refused.shape]).toEqual([422, 'objects']);
      expect(refused.details.map((d) => d.extra)).toEqual([
        { component_id: seats, price_point: 'nope' },
        { component_id: foreign, price_point: 'original' },
      ]);
      expect((await seatsRow(acme, subId, seats))?.componentVersion).toBe(1);

      const assigned = await acme.pricePoints.setSubscriptionComponentPricePoints(subId, [
        { componentId: seats, pricePoint: premium.pricePoint.id },
      ]);
      expect(assigned).toEqual([
        { componentId: seats, pricePoint: premium.pricePoint, componentVersion: premium.pricePoint.version },
      ]);
      // Nothing is charged or credited for the current period.
      expect(await acme.subscriptions.transactions(subId)).toHaveLength(linesBefore);
      const row = await seatsRow(acme, subId, seats);
      expect([row?.componentVersion, row?.allocatedQuantity]).toEqual([premium.pricePoint.version, 3]);
      const [shown] = await acme.pricePoints.listSubscriptionComponentPricePoints(subId);
      expect(shown?.pricePoint?.handle).toBe('premium');

      // The renewal bills the 3 seats at 12.00 beside the product's 30.00.
      f.clock.set('2026-05-01T00:00:00Z');
      await f.engine.runDue();
      const renewal = (await acme.subscriptions.transactions(subId)).filter(
        (l) => l.type === 'charge' && l.createdAt.toISOString() === '2026-05-01T00:00:00.000Z',
      );
      expect(renewal.map((l) => l.amountInCents).sort((a, b) => a - b)).toEqual([3000, 3600]);

      const reset = await acme.pricePoints.resetSubscriptionComponentPricePoints(subId);
      expect(reset.map((a) => [a.componentId, a.pricePoint.handle])).toEqual([[seats, 'original']]);
      expect((await seatsRow(acme, subId, seats))?.componentVersion).toBe(1);
      // A second reset has nothing to move.
      expect(await acme.pricePoints.resetSubscriptionComponentPricePoints(subId)).toEqual([]);
    });

    it('signs up with a component at the price point it names, and renews it there', async () => {
      const f = fixture();
      const { acme, seats } = await setup(f);
      const premium = await acme.pricePoints.createComponentPricePoint(seats, { name: 'Premium', unitPrice: '12' });
      const gone = await acme.pricePoints.createComponentPricePoint(seats, { name: 'Gone', unitPrice: '1' });
      await acme.pricePoints.archiveComponentPricePoint(seats, 'gone');
      const customer = { firstName: 'Bo', lastName: 'Brandt', email: 'bo@example.com' };
      const countBefore = (await acme.subscriptions.list()).length;
      for (const [pricePoint, message] of [
        ['nope', "Price point: 'nope' does not exist."],
        [gone.pricePoint.id, `Price point: '${gone.pricePoint.id}' has been archived.`],
      ] as const) {
        const refused = await rejection(
          acme.subscriptions.create({
            productHandle: 'basic',
            customer,
            creditCard: VISA,
            components: [{ componentId: seats, allocatedQuantity: 2, pricePoint }],
          }),
        );
        expect(refused.messages).toEqual([message]);
      }
      expect(await acme.subscriptions.list()).toHaveLength(countBefore);

      const { subscription } = await acme.subscriptions.create({
        productHandle: 'basic',
        customer,
        creditCard: VISA,
        components: [{ componentId: seats, allocatedQuantity: 2, pricePoint: 'handle:premium' }],
      });
      const signupCharges = (await acme.subscriptions.transactions(subscription.id))
        .filter((l) => l.type === 'charge')
        .map((l) => l.amountInCents)
        .sort((a, b) => a - b);
      expect(signupCharges).toEqual([2400, 3000]);
      expect((await seatsRow(acme, subscription.id, seats))?.componentVersion).toBe(premium.pricePoint.version);

      f.clock.set('2026-05-01T00:00:00Z');
      await f.engine.runDue();
      const renewal = (await acme.subscriptions.transactions(subscription.id)).filter(
        (l) => l.type === 'charge' && l.createdAt.toISOString() === '2026-05-01T00:00:00.000Z',
      );
      expect(renewal.map((l) => l.amountInCents).sort((a, b) => a - b)).toEqual([2400, 3000]);
    });
  });
}
