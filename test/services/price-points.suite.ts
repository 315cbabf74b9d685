import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { resolveSignupVersion } from '../../src/services/price-point-service.js';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/** `acme` with a 10.00-a-month product `basic`, and a subscriber to it. */
async function setup(f: EngineFixture) {
  await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const product = await acme.catalog.createProduct(family.id, {
    name: 'Basic',
    handle: 'basic',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
  });
  let n = 0;
  const subscribe = async () =>
    acme.subscriptions.create({
      productHandle: 'basic',
      customer: { firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com` },
      creditCard: VISA,
    });
  return { acme, family, product, subscribe };
}

/** The amounts the card was charged for a subscription, oldest first. */
async function cardPayments(acme: ReturnType<EngineFixture['engine']['site']>, id: number): Promise<number[]> {
  const lines = await acme.ledger.transactions({ subscriptionId: id, direction: 'asc', perPage: 200 });
  return lines.filter((l) => l.type === 'payment' && l.gatewayTransactionId !== null).map((l) => l.amountInCents);
}

/** Product price points and subscribers on them, on every adapter. */
export function pricePointsSuite(harness: StorageHarness): void {
  describe(`product price points (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-03-01T12:00:00Z');

    it('gives every product a default price point with its terms, shown on the product', async () => {
      const f = fixture();
      const { acme, product } = await setup(f);
      expect(product.pricePoint).toMatchObject({ name: 'Original', handle: 'original', type: 'default' });
      expect(product.defaultPricePointId).toBe(product.pricePoint?.id);
      const [only, ...rest] = await acme.pricePoints.listProductPricePoints('basic');
      expect(rest).toEqual([]);
      expect(only?.pricePoint.id).toBe(product.pricePoint?.id);
      expect(only?.terms.priceInCents).toBe(1000);
      // A product change versions the default price point and keeps it the default.
      const changed = await acme.catalog.updateProduct('basic', { priceInCents: 1200 });
      expect(changed.pricePoint?.id).toBe(product.pricePoint?.id);
      const read = await acme.pricePoints.getProductPricePoint(product.product.id, 'original');
      expect(read.terms.priceInCents).toBe(1200);
      expect(read.pricePoint.version).toBe(changed.product.currentVersion);
    });

    it('creates, reads, updates, archives and unarchives a price point, and validates like the service', async () => {
      const f = fixture();
      const { acme, product } = await setup(f);
      const annual = await acme.pricePoints.createProductPricePoint('basic', {
        name: 'Annual',
        handle: 'annual',
        priceInCents: 10000,
        interval: 12,
        intervalUnit: 'month',
        trialInterval: 14,
        trialIntervalUnit: 'day',
      });
      expect(annual.pricePoint).toMatchObject({ name: 'Annual', handle: 'annual', type: 'catalog', archivedAt: null });
      expect(annual.terms).toMatchObject({
        priceInCents: 10000,
        interval: 12,
        trialInterval: 14,
        trialPriceInCents: 0,
      });
      // The product's terms and current version do not change.
      expect((await acme.catalog.getProduct('basic')).version.version).toBe(product.version.version);
      expect((await acme.pricePoints.getProductPricePoint('basic', annual.pricePoint.id)).pricePoint.handle).toBe(
        'annual',
      );
      // Without a handle one is made from the name.
      const weekly = await acme.pricePoints.createProductPricePoint('basic', {
        name: 'Every Week',
        priceInCents: 300,
        interval: 7,
        intervalUnit: 'day',
      });
      expect(weekly.pricePoint.handle).toBe('every-week');

      const bad = await rejection(
        acme.pricePoints.createProductPricePoint('basic', {
          name: '',
          priceInCents: -1,
          interval: 0,
          intervalUnit: 'month',
        }),
      );
      expect(bad.httpStatus).toBe(422);
      expect(bad.shape).toBe('map');
      expect(bad.details.map((d) => d.attribute).sort()).toEqual(['interval', 'name', 'price_in_cents']);
      const taken = await rejection(
        acme.pricePoints.createProductPricePoint('basic', {
          name: 'Again',
          handle: 'annual',
          priceInCents: 1,
          interval: 1,
          intervalUnit: 'month',
        }),
      );
      expect(taken.details).toEqual([
        { message: 'Handle: must be unique - that value has been taken.', attribute: 'handle' },
      ]);
      expect(await acme.pricePoints.listProductPricePoints('basic')).toHaveLength(3);

      const updated = await acme.pricePoints.updateProductPricePoint('basic', 'annual', { priceInCents: 9000 });
      expect(updated.terms.priceInCents).toBe(9000);
      expect(updated.pricePoint.version).toBeGreaterThan(annual.pricePoint.version);
      // A rename alone adds no version.
      const renamed = await acme.pricePoints.updateProductPricePoint('basic', 'annual', { name: 'Yearly' });
      expect(renamed.pricePoint).toMatchObject({ name: 'Yearly', version: updated.pricePoint.version });

      const refused = await rejection(acme.pricePoints.archiveProductPricePoint('basic', 'original'));
      expect(refused.details[0]?.attribute).toBe('price_point');
      const archived = await acme.pricePoints.archiveProductPricePoint('basic', 'annual');
      expect(archived.pricePoint.archivedAt).toEqual(f.clock.now());
      expect((await acme.pricePoints.listProductPricePoints('basic')).map((v) => v.pricePoint.handle)).toEqual([
        'original',
        'every-week',
      ]);
      expect(
        (await acme.pricePoints.listProductPricePoints('basic', { includeArchived: true })).map(
          (v) => v.pricePoint.handle,
        ),
      ).toEqual(['original', 'annual', 'every-week']);
      expect(
        (await acme.pricePoints.listAllProductPricePoints({ archivedAt: 'not_null' })).map((v) => v.pricePoint.handle),
      ).toEqual(['annual']);
      const back = await acme.pricePoints.unarchiveProductPricePoint('basic', annual.pricePoint.id);
      expect(back.pricePoint.archivedAt).toBeNull();
      expect(
        (await acme.pricePoints.listAllProductPricePoints({ types: ['catalog'] })).map((v) => v.pricePoint.handle),
      ).toEqual(['annual', 'every-week']);
      // Another product's price point is not found through this product.
      await acme.catalog.createProduct(product.product.familyId, {
        name: 'Pro',
        handle: 'pro',
        priceInCents: 5000,
        interval: 1,
        intervalUnit: 'month',
      });
      expect((await rejection(acme.pricePoints.getProductPricePoint('pro', annual.pricePoint.id))).code).toBe(
        'not_found',
      );
    });

    it('creates price points in bulk all or nothing', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const good = {
        name: 'Quarterly',
        handle: 'quarterly',
        priceInCents: 2700,
        interval: 3,
        intervalUnit: 'month' as const,
      };
      const error = await rejection(
        acme.pricePoints.bulkCreateProductPricePoints('basic', [good, { ...good, handle: 'other', interval: 0 }]),
      );
      expect(error.details.map((d) => d.attribute)).toEqual(['interval']);
      expect(await acme.pricePoints.listProductPricePoints('basic')).toHaveLength(1);
      const duplicate = await rejection(acme.pricePoints.bulkCreateProductPricePoints('basic', [good, good]));
      expect(duplicate.details[0]?.attribute).toBe('handle');
      const made = await acme.pricePoints.bulkCreateProductPricePoints('basic', [
        good,
        { ...good, name: 'Half year', handle: 'half', interval: 6 },
      ]);
      expect(made.map((v) => [v.pricePoint.handle, v.terms.interval])).toEqual([
        ['quarterly', 3],
        ['half', 6],
      ]);
    });

    it('promotes a price point to the default: new signups get it, existing subscribers keep theirs', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const before = await subscribe();
      await acme.pricePoints.createProductPricePoint('basic', {
        name: 'Premium',
        handle: 'premium',
        priceInCents: 1500,
        interval: 1,
        intervalUnit: 'month',
      });
      const promoted = await acme.pricePoints.promoteProductPricePointToDefault('basic', 'premium');
      expect(promoted.version.terms.priceInCents).toBe(1500);
      expect(promoted.pricePoint?.handle).toBe('premium');
      const types = (await acme.pricePoints.listProductPricePoints('basic')).map((v) => [
        v.pricePoint.handle,
        v.pricePoint.type,
      ]);
      expect(types).toEqual([
        ['original', 'catalog'],
        ['premium', 'default'],
      ]);
      const after = await subscribe();
      expect(await cardPayments(acme, after.subscription.id)).toEqual([1500]);
      // The product's own update now versions the new default.
      const changed = await acme.catalog.updateProduct('basic', { priceInCents: 1600 });
      expect(changed.pricePoint?.handle).toBe('premium');
      expect((await acme.pricePoints.getProductPricePoint('basic', 'premium')).terms.priceInCents).toBe(1600);
      expect((await acme.pricePoints.getProductPricePoint('basic', 'original')).terms.priceInCents).toBe(1000);
      f.clock.advance({ days: 31 });
      await f.engine.runDue();
      expect(await cardPayments(acme, before.subscription.id)).toEqual([1000, 1000]);
      expect(await cardPayments(acme, after.subscription.id)).toEqual([1500, 1500]);
    });

    it('migrates a subscriber onto a price point, which it keeps when the price point changes', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const signup = await subscribe();
      const id = signup.subscription.id;
      const cheap = await acme.pricePoints.createProductPricePoint('basic', {
        name: 'Saver',
        handle: 'saver',
        priceInCents: 700,
        interval: 1,
        intervalUnit: 'month',
      });
      // Unknown, archived or another product's price points are refused and change nothing.
      const unknown = await rejection(
        acme.subscriptions.migrate(id, { productHandle: 'basic', pricePointHandle: 'nope' }),
      );
      expect(unknown.httpStatus).toBe(422);
      await acme.pricePoints.archiveProductPricePoint('basic', 'saver');
      const archived = await rejection(acme.subscriptions.migrate(id, { pricePointId: cheap.pricePoint.id }));
      expect(archived.httpStatus).toBe(422);
      expect((await acme.subscriptions.get(id)).subscription.productVersion).toBe(signup.subscription.productVersion);
      await acme.pricePoints.unarchiveProductPricePoint('basic', 'saver');

      // A price point id alone names its product.
      const moved = await acme.subscriptions.migrate(id, { pricePointId: cheap.pricePoint.id, preservePeriod: true });
      expect(moved.subscription.productVersion).toBe(cheap.pricePoint.version);
      expect(moved.product.version.terms.priceInCents).toBe(700);
      expect(moved.product.version.pricePointId).toBe(cheap.pricePoint.id);

      // Raising the price point's price is a new version: the subscriber keeps 7.00.
      await acme.pricePoints.updateProductPricePoint('basic', 'saver', { priceInCents: 800 });
      f.clock.advance({ days: 31 });
      await f.engine.runDue();
      // The first renewal is 7.00 less the 3.00 credit the downgrade left; the next one is 7.00.
      expect((await cardPayments(acme, id)).at(-1)).toBe(400);
      f.clock.advance({ days: 31 });
      await f.engine.runDue();
      expect((await cardPayments(acme, id)).at(-1)).toBe(700);
      // A migration to the price point's new terms moves it.
      const again = await acme.subscriptions.migrate(id, { productHandle: 'basic', pricePointHandle: 'saver' });
      expect(again.product.version.terms.priceInCents).toBe(800);
    });

    it('resolves the version a signup on a price point gets', async () => {
      const f = fixture();
      const { acme, product } = await setup(f);
      const annual = await acme.pricePoints.createProductPricePoint('basic', {
        name: 'Annual',
        handle: 'annual',
        priceInCents: 10000,
        interval: 12,
        intervalUnit: 'month',
      });
      const site = (await f.storage.transaction((tx) => tx.sites.findBySubdomain('acme')))!;
      await f.storage.transaction(async (tx) => {
        const record = product.product;
        expect((await resolveSignupVersion(tx, site.id, record, {})).version).toBe(record.currentVersion);
        const byHandle = await resolveSignupVersion(tx, site.id, record, { pricePointHandle: 'annual' });
        expect(byHandle).toMatchObject({ version: annual.pricePoint.version, pricePointId: annual.pricePoint.id });
        const byId = await resolveSignupVersion(tx, site.id, record, { pricePointId: annual.pricePoint.id });
        expect(byId.terms.priceInCents).toBe(10000);
        const missing = await rejection(resolveSignupVersion(tx, site.id, record, { pricePointId: 999999 }));
        expect(missing.details[0]?.attribute).toBe('product_price_point_id');
      });
      await acme.pricePoints.archiveProductPricePoint('basic', 'annual');
      await f.storage.transaction(async (tx) => {
        const error = await rejection(
          resolveSignupVersion(tx, site.id, product.product, { pricePointHandle: 'annual' }),
        );
        expect(error.httpStatus).toBe(422);
      });
    });
  });
}
