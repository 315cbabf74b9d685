import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/**
 * `acme` (USD) with family Plans: `basic` (10.00 a month) and its price point `annual` (100.00
 * every 12 months), components Seats (4.00 a seat; price point Premium at 6.00), SSL (on/off,
 * 15.00) and Data (metered), coupons TENOFF (10%, stackable) and FIVE (5.00 off, stackable);
 * family Other with `other` and a coupon OTHER; and `globex`, to show offers stay in their site.
 */
async function setup(f: EngineFixture) {
  const acmeSite = await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  await f.engine.sites.create({ subdomain: 'globex', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const basic = await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  const annual = await acme.pricePoints.createProductPricePoint('basic', {
    name: 'Annual',
    handle: 'annual',
    priceInCents: 10000,
    interval: 12,
    intervalUnit: 'month',
  });
  const seats = await acme.components.create(family.id, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '4',
  });
  const premium = await acme.pricePoints.createComponentPricePoint(seats.component.id, {
    name: 'Premium',
    pricingScheme: 'per_unit',
    unitPrice: '6',
  });
  const ssl = await acme.components.create(family.id, { name: 'SSL', kind: 'on_off', handle: 'ssl', unitPrice: '15' });
  const data = await acme.components.create(family.id, {
    name: 'Data',
    kind: 'metered',
    unitName: 'GB',
    handle: 'data',
    unitPrice: '0.5',
  });
  const tenoff = await acme.coupons.create({
    name: 'Ten off',
    code: 'TENOFF',
    percentage: '10',
    recurring: true,
    stackable: true,
    productFamilyId: family.id,
  });
  await acme.coupons.create({
    name: 'Five off',
    code: 'FIVE',
    amountInCents: 500,
    stackable: true,
    productFamilyId: family.id,
  });
  const other = await acme.catalog.createFamily({ name: 'Other' });
  const otherProduct = await acme.catalog.createProduct(other.id, {
    name: 'Other',
    handle: 'other',
    priceInCents: 500,
    interval: 1,
    intervalUnit: 'month',
  });
  await acme.coupons.create({ name: 'Other', code: 'OTHER', percentage: '5', productFamilyId: other.id });
  let n = 0;
  const customer = () => ({ firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com` });
  const subscribe = async (input: Record<string, unknown>) =>
    (await acme.subscriptions.create({ customer: customer(), creditCard: VISA, ...input })).subscription;
  /** The ledger of a subscription, without what differs between two subscriptions (ids, times). */
  const ledger = async (subscriptionId: number) =>
    (await acme.subscriptions.transactions(subscriptionId)).map((t) => ({
      type: t.type,
      kind: t.kind,
      amountInCents: t.amountInCents,
      memo: t.memo,
      productId: t.productId,
      componentId: t.componentId,
      endingBalanceInCents: t.endingBalanceInCents,
    }));
  const components = async (subscriptionId: number) =>
    (await acme.allocations.listComponents(subscriptionId))
      .map((c) => ({
        componentId: c.subscriptionComponent.componentId,
        componentVersion: c.subscriptionComponent.componentVersion,
        allocatedQuantity: c.subscriptionComponent.allocatedQuantity,
        unitBalance: c.subscriptionComponent.unitBalance,
      }))
      .sort((a, b) => a.componentId - b.componentId);
  const counts = () => f.storage.transaction((tx) => tx.siteData.counts(acmeSite.site.id));
  return {
    acme,
    globex: f.engine.site('globex'),
    siteId: acmeSite.site.id,
    familyId: family.id,
    basic: basic.product.id,
    annual: annual.pricePoint.id,
    seats: seats.component.id,
    premium: premium.pricePoint.id,
    ssl: ssl.component.id,
    data: data.component.id,
    tenoff: tenoff.id,
    other: otherProduct.product.id,
    subscribe,
    ledger,
    components,
    counts,
  };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** The full offer: Basic at Annual, 3 Seats at Premium, SSL on, 10 GB of Data, TENOFF. */
function fullOffer(s: Setup) {
  return s.acme.offers.create({
    name: 'Starter bundle',
    handle: 'starter',
    description: 'Basic yearly with seats and SSL',
    productId: s.basic,
    productPricePointId: s.annual,
    components: [
      { componentId: s.seats, pricePointId: s.premium, startingQuantity: 3 },
      { componentId: s.ssl, startingQuantity: 1 },
      { componentId: s.data, startingQuantity: '10' },
    ],
    coupons: ['tenoff'],
  });
}

/** Offers and signups with `offerId`, on every adapter. */
export function offersSuite(harness: StorageHarness): void {
  describe(`offers (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-01-15T12:00:00Z');

    it('creates an offer and reads it back with the names of what it packages', async () => {
      const s = await setup(fixture());
      const created = await fullOffer(s);
      expect(created.offer).toMatchObject({
        siteId: s.siteId,
        name: 'Starter bundle',
        handle: 'starter',
        description: 'Basic yearly with seats and SSL',
        productId: s.basic,
        productPricePointId: s.annual,
        items: [
          { componentId: s.seats, pricePointId: s.premium, startingQuantity: 3 },
          { componentId: s.ssl, pricePointId: null, startingQuantity: 1 },
          { componentId: s.data, pricePointId: null, startingQuantity: 10 },
        ],
        couponIds: [s.tenoff],
        archivedAt: null,
      });
      expect(created.offer.createdAt.toISOString()).toBe('2026-01-15T12:00:00.000Z');
      expect({
        productFamilyId: created.productFamilyId,
        productFamilyName: created.productFamilyName,
        productName: created.productName,
        productPricePointId: created.productPricePointId,
        productPricePointName: created.productPricePointName,
        productPriceInCents: created.productPriceInCents,
      }).toEqual({
        productFamilyId: s.familyId,
        productFamilyName: 'Plans',
        productName: 'Basic',
        productPricePointId: s.annual,
        productPricePointName: 'Annual',
        productPriceInCents: 10000,
      });
      expect(created.items.map((i) => [i.componentName, i.pricePointName, i.startingQuantity])).toEqual([
        ['Seats', 'Premium', 3],
        ['SSL', 'Original', 1],
        ['Data', 'Original', 10],
      ]);
      expect(created.discounts).toEqual([{ couponId: s.tenoff, couponCode: 'TENOFF', couponName: 'Ten off' }]);

      const read = await s.acme.offers.get(created.offer.id);
      expect(read).toEqual(created);
      // Without a price point the offer shows the product's default one.
      const plain = await s.acme.offers.create({ name: 'Plain', handle: 'plain', productId: s.basic });
      expect(plain.offer.productPricePointId).toBeNull();
      expect([plain.productPricePointName, plain.productPriceInCents, plain.items, plain.discounts]).toEqual([
        'Original',
        1000,
        [],
        [],
      ]);
      expect((await s.acme.offers.list()).map((o) => o.offer.handle)).toEqual(['starter', 'plain']);
      // Another site sees none of it.
      expect((await rejection(s.globex.offers.get(created.offer.id))).code).toBe('not_found');
      expect(await s.globex.offers.list()).toEqual([]);
    });

    it('archives and unarchives: an archived offer stays readable and is listed only on request', async () => {
      const f = fixture();
      const s = await setup(f);
      const starter = await fullOffer(s);
      const plain = await s.acme.offers.create({ name: 'Plain', handle: 'plain', productId: s.basic });
      f.clock.advance(60_000);
      const archived = await s.acme.offers.archive(starter.offer.id);
      expect(archived.offer.archivedAt?.toISOString()).toBe('2026-01-15T12:01:00.000Z');
      f.clock.advance(60_000);
      // Archiving again keeps the first archive time.
      expect((await s.acme.offers.archive(starter.offer.id)).offer.archivedAt?.toISOString()).toBe(
        '2026-01-15T12:01:00.000Z',
      );
      expect((await s.acme.offers.get(starter.offer.id)).offer.archivedAt).not.toBeNull();
      expect((await s.acme.offers.list()).map((o) => o.offer.id)).toEqual([plain.offer.id]);
      expect((await s.acme.offers.list({ includeArchived: true })).map((o) => o.offer.id)).toEqual([
        starter.offer.id,
        plain.offer.id,
      ]);
      const back = await s.acme.offers.unarchive(starter.offer.id);
      expect(back.offer.archivedAt).toBeNull();
      expect((await s.acme.offers.list()).map((o) => o.offer.id)).toEqual([starter.offer.id, plain.offer.id]);
      expect((await rejection(s.acme.offers.archive(9999))).code).toBe('not_found');
      expect((await rejection(s.globex.offers.archive(starter.offer.id))).code).toBe('not_found');
    });

    it('pages the list', async () => {
      const s = await setup(fixture());
      for (const handle of ['a1', 'a2', 'a3']) await s.acme.offers.create({ name: handle, handle, productId: s.basic });
      expect((await s.acme.offers.list({ page: 1, perPage: 2 })).map((o) => o.offer.handle)).toEqual(['a1', 'a2']);
      expect((await s.acme.offers.list({ page: 2, perPage: 2 })).map((o) => o.offer.handle)).toEqual(['a3']);
    });

    it('refuses bad input with every problem at once and writes nothing', async () => {
      const s = await setup(fixture());
      await s.acme.coupons.archive(s.tenoff);
      const bad = await rejection(
        s.acme.offers.create({
          name: ' ',
          handle: 'Not A Handle',
          productId: s.basic,
          productPricePointId: 999_999,
          components: [
            { componentId: 999_999 },
            { componentId: s.seats, pricePointId: 999_999 },
            { componentId: s.ssl, startingQuantity: 2 },
            { componentId: s.data, startingQuantity: -1 },
          ],
          coupons: ['NOPE', 'TENOFF', 'OTHER'],
        }),
      );
      expect(bad.httpStatus).toBe(422);
      expect(bad.details.map((d) => d.attribute)).toEqual([
        'name',
        'handle',
        'product_price_point_id',
        'components[0].component_id',
        'components[1].price_point_id',
        'components[2].starting_quantity',
        'components[3].starting_quantity',
        'coupons[0]',
        'coupons[1]',
        'coupons[2]',
      ]);
      expect(bad.details[0]!.message).toBe('Name: cannot be blank.');
      expect(bad.details[3]!.message).toBe("Component: '999999' does not exist.");
      expect(bad.details[7]!.message).toBe("Coupon Code: 'NOPE' - Coupon code could not be found.");
      expect(await s.acme.offers.list({ includeArchived: true })).toEqual([]);

      const missing = await rejection(s.acme.offers.create({ name: 'X', handle: 'x' }));
      expect(missing.details).toEqual([{ message: 'Product: must be specified.', attribute: 'product_id' }]);
      const unknown = await rejection(s.acme.offers.create({ name: 'X', handle: 'x', productId: 999_999 }));
      expect(unknown.details).toEqual([
        { message: "Product with id '999999' does not exist for this site.", attribute: 'product_id' },
      ]);
      // Another family's component is not one of the product's.
      const foreign = await rejection(
        s.acme.offers.create({ name: 'X', handle: 'x', productId: s.other, components: [{ componentId: s.seats }] }),
      );
      expect(foreign.details.map((d) => d.attribute)).toEqual(['components[0].component_id']);
      // The same component twice.
      const twice = await rejection(
        s.acme.offers.create({
          name: 'X',
          handle: 'x',
          productId: s.basic,
          components: [{ componentId: s.seats }, { componentId: s.seats }],
        }),
      );
      expect(twice.details.map((d) => d.attribute)).toEqual(['components[1].component_id']);
      // Another site's product is unknown here.
      const globexFamily = await s.globex.catalog.createFamily({ name: 'G' });
      const globexProduct = await s.globex.catalog.createProduct(globexFamily.id, {
        name: 'G',
        handle: 'g',
        priceInCents: 100,
        interval: 1,
        intervalUnit: 'month',
      });
      const crossSite = await rejection(
        s.acme.offers.create({ name: 'X', handle: 'x', productId: globexProduct.product.id }),
      );
      expect(crossSite.details.map((d) => d.attribute)).toEqual(['product_id']);
      expect(await s.acme.offers.list({ includeArchived: true })).toEqual([]);
    });

    it('refuses a taken handle and an archived product', async () => {
      const s = await setup(fixture());
      await s.acme.offers.create({ name: 'One', handle: 'one', productId: s.basic });
      const taken = await rejection(s.acme.offers.create({ name: 'Two', handle: 'one', productId: s.basic }));
      expect(taken.details).toEqual([
        { message: 'API Handle: must be unique - that value has been taken.', attribute: 'handle' },
      ]);
      // The same handle on another site is free.
      const family = await s.globex.catalog.createFamily({ name: 'G' });
      const product = await s.globex.catalog.createProduct(family.id, {
        name: 'G',
        handle: 'g',
        priceInCents: 100,
        interval: 1,
        intervalUnit: 'month',
      });
      expect(
        (await s.globex.offers.create({ name: 'One', handle: 'one', productId: product.product.id })).offer.handle,
      ).toBe('one');
      await s.acme.catalog.archiveProduct('basic');
      const archived = await rejection(s.acme.offers.create({ name: 'Three', handle: 'three', productId: s.basic }));
      expect(archived.details.map((d) => d.attribute)).toEqual(['product_id']);
      expect((await s.acme.offers.list()).length).toBe(1);
    });

    it('a signup with an offer bills exactly what the same signup given explicitly bills', async () => {
      const s = await setup(fixture());
      const offer = await fullOffer(s);
      const viaOffer = await s.subscribe({ offerId: offer.offer.id });
      const explicit = await s.subscribe({
        productId: s.basic,
        productPricePointId: s.annual,
        components: [
          { componentId: s.seats, quantity: 3, pricePoint: s.premium },
          { componentId: s.ssl, quantity: 1 },
          { componentId: s.data, quantity: 10 },
        ],
        couponCode: 'TENOFF',
      });
      const offerLedger = await s.ledger(viaOffer.id);
      expect(offerLedger).toEqual(await s.ledger(explicit.id));
      // 100.00 + 3 premium seats at 6.00 + SSL 15.00 = 133.00, less 10% = 119.70, paid.
      const charged = offerLedger.filter((l) => l.type === 'charge').reduce((sum, l) => sum + l.amountInCents, 0);
      expect(charged).toBe(13300);
      expect(offerLedger.filter((l) => l.type === 'payment').map((l) => l.amountInCents)).toEqual([11970]);
      expect(await s.components(viaOffer.id)).toEqual(await s.components(explicit.id));
      expect((await s.components(viaOffer.id)).map((c) => [c.allocatedQuantity, c.unitBalance])).toEqual([
        [3, 0],
        [1, 0],
        [0, 10],
      ]);
      expect(viaOffer.couponCodes).toEqual(['TENOFF']);
      expect(viaOffer.productVersion).toBe(explicit.productVersion);
      expect(viaOffer.currentPeriodEndsAt.toISOString()).toBe(explicit.currentPeriodEndsAt.toISOString());

      // By handle too, as `handle:<handle>`.
      const byHandle = await s.subscribe({ offerId: 'handle:starter' });
      expect(await s.ledger(byHandle.id)).toEqual(offerLedger);
    });

    it('adds components and coupon codes given beside the offer to its own', async () => {
      const s = await setup(fixture());
      const offer = await s.acme.offers.create({
        name: 'Seats',
        handle: 'seats-offer',
        productId: s.basic,
        components: [{ componentId: s.seats, startingQuantity: 2 }],
        coupons: ['TENOFF'],
      });
      const viaOffer = await s.subscribe({
        offerId: offer.offer.id,
        components: [{ componentId: s.ssl, quantity: 1 }],
        couponCode: 'FIVE',
      });
      const explicit = await s.subscribe({
        productHandle: 'basic',
        components: [
          { componentId: s.ssl, quantity: 1 },
          { componentId: s.seats, quantity: 2 },
        ],
        couponCodes: ['TENOFF', 'FIVE'],
      });
      expect(await s.ledger(viaOffer.id)).toEqual(await s.ledger(explicit.id));
      expect(viaOffer.couponCodes).toEqual(['TENOFF', 'FIVE']);
      // A code the offer already has is not added twice.
      const again = await s.subscribe({ offerId: offer.offer.id, couponCode: 'tenoff' });
      expect(again.couponCodes).toEqual(['TENOFF']);
    });

    it('refuses an unknown or archived offer, product fields beside it and its own components again, charging nothing', async () => {
      const f = fixture();
      const s = await setup(f);
      const offer = await fullOffer(s);
      const before = await s.counts();
      const unknown = await rejection(s.subscribe({ offerId: 999_999 }));
      expect(unknown.details).toEqual([
        { message: "Offer: '999999' does not exist for this site.", attribute: 'offer_id' },
      ]);
      expect((await rejection(s.subscribe({ offerId: 'handle:nope' }))).details.map((d) => d.attribute)).toEqual([
        'offer_id',
      ]);
      // Another site's offer is unknown here.
      expect(
        (
          await rejection(
            s.globex.subscriptions.create({
              offerId: offer.offer.id,
              customer: { firstName: 'A', lastName: 'B', email: 'a@example.com' },
              creditCard: VISA,
            }),
          )
        ).details.map((d) => d.attribute),
      ).toEqual(['offer_id']);

      const conflicting = await rejection(
        s.subscribe({ offerId: offer.offer.id, productHandle: 'basic', productPricePointId: s.annual }),
      );
      expect(conflicting.details.map((d) => d.attribute)).toEqual(['product_handle', 'product_price_point_id']);
      const repeated = await rejection(
        s.subscribe({ offerId: offer.offer.id, components: [{ handle: 'seats', quantity: 5 }] }),
      );
      expect(repeated.details).toEqual([
        {
          message: "Component: 'seats' is part of the offer, which sets its quantity.",
          attribute: 'components[0].component_id',
        },
      ]);

      await s.acme.offers.archive(offer.offer.id);
      const archived = await rejection(s.subscribe({ offerId: offer.offer.id }));
      expect(archived.details).toEqual([
        { message: 'Offer: has been archived and cannot be subscribed to.', attribute: 'offer_id' },
      ]);
      expect(await s.counts()).toEqual(before);
      expect(f.gateway.chargeCalls).toBe(0);

      // Unarchived, it signs up again.
      await s.acme.offers.unarchive(offer.offer.id);
      const sub = await s.subscribe({ offerId: offer.offer.id });
      expect(sub.state).toBe('active');
    });

    it('checks what the offer packages at signup as an explicit signup would (an archived coupon)', async () => {
      const s = await setup(fixture());
      const offer = await fullOffer(s);
      await s.acme.coupons.archive(s.tenoff);
      const refused = await rejection(s.subscribe({ offerId: offer.offer.id }));
      expect(refused.httpStatus).toBe(422);
      expect(refused.details.map((d) => d.attribute)).toEqual(['coupon_code']);
    });

    it('keeps offers when the site data is cleared', async () => {
      const f = fixture();
      const s = await setup(f);
      const offer = await fullOffer(s);
      await s.subscribe({ offerId: offer.offer.id });
      await f.engine.sites.clearData('acme');
      expect((await s.acme.offers.get(offer.offer.id)).offer.handle).toBe('starter');
      expect((await s.acme.offers.list()).length).toBe(1);
      expect((await s.counts()).subscriptions).toBe(0);
    });
  });
}
