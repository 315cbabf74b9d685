import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };
const DECLINED = { fullNumber: '2', expirationMonth: 12, expirationYear: 2030 };

type Site = ReturnType<EngineFixture['engine']['site']>;

/** `acme` with a 10.00-a-month product `basic` (and a 30.00 catalog price point `triple`). */
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
  const triple = await acme.pricePoints.createProductPricePoint('basic', {
    name: 'Triple',
    handle: 'triple',
    priceInCents: 3000,
    interval: 1,
    intervalUnit: 'month',
  });
  let n = 0;
  const customer = () => ({ firstName: 'Ada', lastName: 'Lovelace', email: `ada${++n}@example.com` });
  const subscribe = async (extra: Record<string, unknown> = {}) =>
    acme.subscriptions.create({ productHandle: 'basic', customer: customer(), creditCard: VISA, ...extra });
  return { acme, family, product, triple, customer, subscribe };
}

/** The amounts the card was charged for a subscription, oldest first. */
async function cardPayments(acme: Site, id: number): Promise<number[]> {
  const lines = await acme.ledger.transactions({ subscriptionId: id, direction: 'asc', perPage: 200 });
  return lines.filter((l) => l.type === 'payment' && l.gatewayTransactionId !== null).map((l) => l.amountInCents);
}

/** Every price point of `basic`, custom ones included, as [handle, type]. */
async function allPricePoints(acme: Site): Promise<string[][]> {
  const views = await acme.pricePoints.listProductPricePoints('basic', {
    includeArchived: true,
    types: ['default', 'catalog', 'custom'],
  });
  return views.map((v) => [v.pricePoint.handle, v.pricePoint.type]);
}

/** Signups and migrations with `custom_price`, on every adapter. */
export function customPricesSuite(harness: StorageHarness): void {
  describe(`custom prices (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-03-01T12:00:00Z');

    it('signs up at a custom price: a custom price point of the subscription, billed at signup and every renewal', async () => {
      const f = fixture();
      const { acme, product, subscribe } = await setup(f);
      const signup = await subscribe({
        customPrice: { name: 'Deal', handle: 'deal-ada', priceInCents: 4200, interval: 2, intervalUnit: 'month' },
      });
      const id = signup.subscription.id;
      expect(await cardPayments(acme, id)).toEqual([4200]);
      expect(signup.product.version.terms).toMatchObject({ priceInCents: 4200, interval: 2, intervalUnit: 'month' });
      // The product's own name stays on the terms; the product itself does not change.
      expect(signup.product.version.terms.name).toBe('Basic');
      expect(signup.product.pricePoint).toMatchObject({
        name: 'Deal',
        handle: 'deal-ada',
        type: 'custom',
        subscriptionId: id,
        version: signup.subscription.productVersion,
      });
      const read = await acme.catalog.getProduct('basic');
      expect(read.version.version).toBe(product.version.version);
      expect(read.version.terms.priceInCents).toBe(1000);
      expect(signup.subscription.currentPeriodEndsAt).toEqual(new Date('2026-05-01T12:00:00Z'));

      // The renewal bills the custom price, at its interval.
      f.clock.set('2026-05-01T12:00:01Z');
      await f.engine.runDue();
      expect(await cardPayments(acme, id)).toEqual([4200, 4200]);
      // A product change leaves the subscriber on its own price.
      await acme.catalog.updateProduct('basic', { priceInCents: 1500 });
      f.clock.set('2026-07-01T12:00:01Z');
      await f.engine.runDue();
      expect(await cardPayments(acme, id)).toEqual([4200, 4200, 4200]);
      // An ordinary signup still gets the product's terms.
      const other = await subscribe();
      expect(await cardPayments(acme, other.subscription.id)).toEqual([1500]);
    });

    it('takes the trial, initial charge and expiration of a custom price, and makes a handle from the name', async () => {
      const f = fixture();
      const { acme, subscribe } = await setup(f);
      const trial = await subscribe({
        customPrice: {
          priceInCents: '2500',
          interval: '1',
          intervalUnit: 'month',
          trialPriceInCents: 100,
          trialInterval: 7,
          trialIntervalUnit: 'day',
          initialChargeInCents: 900,
          expirationInterval: 3,
          expirationIntervalUnit: 'month',
        },
      });
      expect(trial.subscription.state).toBe('trialing');
      expect(trial.subscription.trialEndedAt).toEqual(new Date('2026-03-08T12:00:00Z'));
      expect(trial.subscription.expiresAt).toEqual(new Date('2026-06-01T12:00:00Z'));
      // The trial price and the setup fee now, in one payment.
      expect(await cardPayments(acme, trial.subscription.id)).toEqual([1000]);
      expect(trial.product.pricePoint).toMatchObject({ name: 'Custom', handle: 'custom', type: 'custom' });
      f.clock.set('2026-03-08T12:00:01Z');
      await f.engine.runDue();
      expect(await cardPayments(acme, trial.subscription.id)).toEqual([1000, 2500]);
      // A second custom price gets the next free handle.
      const second = await subscribe({ customPrice: { priceInCents: 1, interval: 1, intervalUnit: 'day' } });
      expect(second.product.pricePoint?.handle).toBe('custom-2');
    });

    it('refuses a bad custom price with every problem at once, and writes nothing', async () => {
      const f = fixture();
      const { acme, subscribe, triple } = await setup(f);
      const before = await allPricePoints(acme);
      const charges = f.gateway.chargeCalls;
      const bad = await rejection(
        subscribe({
          customPrice: { handle: 'Bad Handle', priceInCents: -5, interval: 0, trialIntervalUnit: 'week' },
        }),
      );
      expect(bad.httpStatus).toBe(422);
      expect(bad.details.map((d) => d.attribute).sort()).toEqual([
        'custom_price.handle',
        'custom_price.interval',
        'custom_price.interval_unit',
        'custom_price.price_in_cents',
        'custom_price.trial_interval',
      ]);
      expect(bad.details.every((d) => d.message.startsWith('Custom price: '))).toBe(true);
      const missing = await rejection(subscribe({ customPrice: { priceInCents: 100 } }));
      expect(missing.details.map((d) => d.message)).toEqual([
        'Custom price: Interval: cannot be blank.',
        'Custom price: Interval unit: cannot be blank.',
      ]);
      const taken = await rejection(
        subscribe({ customPrice: { handle: 'triple', priceInCents: 1, interval: 1, intervalUnit: 'month' } }),
      );
      expect(taken.details).toEqual([
        {
          message: 'Custom price: Handle: must be unique - that value has been taken.',
          attribute: 'custom_price.handle',
        },
      ]);
      const both = await rejection(
        subscribe({
          productPricePointId: triple.pricePoint.id,
          customPrice: { priceInCents: 1, interval: 1, intervalUnit: 'month' },
        }),
      );
      expect(both.details).toEqual([
        { message: 'Custom price: cannot be given with a product price point.', attribute: 'custom_price' },
      ]);
      // A declined card: the plan was good, but nothing of the signup is kept.
      const declined = await rejection(
        acme.subscriptions.create({
          productHandle: 'basic',
          customer: { firstName: 'Bo', lastName: 'Ng', email: 'bo@example.com' },
          creditCard: DECLINED,
          customPrice: { handle: 'kept', priceInCents: 700, interval: 1, intervalUnit: 'month' },
        }),
      );
      expect(declined.code).toBe('payment_declined');
      expect(f.gateway.chargeCalls).toBe(charges + 1);
      expect(await allPricePoints(acme)).toEqual(before);
      expect(await acme.subscriptions.list()).toEqual([]);
    });

    it('keeps a custom price point to its subscription: hidden from lists, not usable, updatable, archivable or default', async () => {
      const f = fixture();
      const { acme, product, subscribe } = await setup(f);
      const owner = await subscribe({
        customPrice: { handle: 'mine', priceInCents: 500, interval: 1, intervalUnit: 'month' },
      });
      const custom = owner.product.pricePoint!;
      expect((await acme.pricePoints.listProductPricePoints('basic')).map((v) => v.pricePoint.handle)).toEqual([
        'original',
        'triple',
      ]);
      expect((await acme.pricePoints.listAllProductPricePoints()).map((v) => v.pricePoint.handle)).toEqual([
        'original',
        'triple',
      ]);
      // Asked for by type, it is listed, with its subscription.
      const listed = await acme.pricePoints.listProductPricePoints('basic', { types: ['custom'] });
      expect(listed.map((v) => [v.pricePoint.handle, v.pricePoint.subscriptionId, v.terms.priceInCents])).toEqual([
        ['mine', owner.subscription.id, 500],
      ]);
      expect((await acme.pricePoints.listAllProductPricePoints({ types: ['custom'] })).length).toBe(1);
      expect((await acme.pricePoints.getProductPricePoint('basic', 'mine')).pricePoint.type).toBe('custom');

      // Another signup or subscription cannot use it, by id or by handle.
      const byId = await rejection(subscribe({ productPricePointId: custom.id }));
      expect(byId.details).toEqual([
        {
          message: 'Product price point: mine is a custom price point of another subscription.',
          attribute: 'product_price_point_id',
        },
      ]);
      const byHandle = await rejection(subscribe({ productPricePointHandle: 'mine' }));
      expect(byHandle.details[0]?.attribute).toBe('product_price_point_handle');
      const other = await subscribe();
      const migrated = await rejection(acme.subscriptions.migrate(other.subscription.id, { pricePointId: custom.id }));
      expect(migrated.httpStatus).toBe(422);
      expect((await acme.subscriptions.get(other.subscription.id)).subscription.productVersion).toBe(
        product.version.version,
      );

      // The price point endpoints cannot change it.
      // One at a time: started together, a later refusal could settle before anything awaits it.
      for (const attempt of [
        () => acme.pricePoints.updateProductPricePoint('basic', 'mine', { priceInCents: 1 }),
        () => acme.pricePoints.archiveProductPricePoint('basic', 'mine'),
        () => acme.pricePoints.unarchiveProductPricePoint('basic', 'mine'),
        () => acme.pricePoints.promoteProductPricePointToDefault('basic', 'mine'),
      ]) {
        const error = await rejection(attempt());
        expect(error.httpStatus).toBe(422);
        expect(error.details[0]?.attribute).toBe('price_point');
      }
      const after = await acme.pricePoints.getProductPricePoint('basic', 'mine');
      expect(after.pricePoint).toMatchObject({ archivedAt: null, type: 'custom', version: custom.version });
      expect(after.terms.priceInCents).toBe(500);
      expect((await acme.catalog.getProduct('basic')).version.terms.priceInCents).toBe(1000);
    });

    it('migrates to a custom price with proration, exactly as to a catalog price point of the same terms', async () => {
      const f = fixture();
      const { acme, subscribe, triple } = await setup(f);
      const toCatalog = await subscribe();
      const toCustom = await subscribe();
      f.clock.set('2026-03-16T12:00:00Z');
      const custom = { handle: 'thirty', priceInCents: 3000, interval: 1, intervalUnit: 'month' as const };
      // The preview prices it and writes nothing.
      const preview = await acme.subscriptions.previewMigration(toCustom.subscription.id, {
        productHandle: 'basic',
        customPrice: custom,
        preservePeriod: true,
      });
      const catalogPreview = await acme.subscriptions.previewMigration(toCatalog.subscription.id, {
        pricePointId: triple.pricePoint.id,
        preservePeriod: true,
      });
      expect(preview).toEqual(catalogPreview);
      expect(preview.chargeInCents).toBeGreaterThan(0);
      expect(preview.proratedAdjustmentInCents).toBeLessThan(0);
      expect((await allPricePoints(acme)).map(([h]) => h)).toEqual(['original', 'triple']);

      await acme.subscriptions.migrate(toCatalog.subscription.id, {
        pricePointId: triple.pricePoint.id,
        preservePeriod: true,
      });
      // Without a product the custom price is one of the subscription's own product.
      const moved = await acme.subscriptions.migrate(toCustom.subscription.id, {
        customPrice: custom,
        preservePeriod: true,
      });
      expect(moved.product.pricePoint).toMatchObject({
        handle: 'thirty',
        type: 'custom',
        subscriptionId: toCustom.subscription.id,
      });
      const amounts = async (id: number) =>
        (await acme.ledger.transactions({ subscriptionId: id, direction: 'asc', perPage: 200 })).map((l) => [
          l.type,
          l.kind,
          l.amountInCents,
        ]);
      expect(await amounts(toCustom.subscription.id)).toEqual(await amounts(toCatalog.subscription.id));
      expect((await cardPayments(acme, toCustom.subscription.id)).at(-1)).toBe(preview.paymentDueInCents);

      // Both renew at 30.00.
      f.clock.set('2026-04-01T12:00:01Z');
      await f.engine.runDue();
      expect((await cardPayments(acme, toCustom.subscription.id)).at(-1)).toBe(3000);
      expect((await cardPayments(acme, toCatalog.subscription.id)).at(-1)).toBe(3000);
      // A second custom migration makes a second price point of the subscription's own.
      const again = await acme.subscriptions.migrate(toCustom.subscription.id, {
        productHandle: 'basic',
        customPrice: { priceInCents: 2000, interval: 1, intervalUnit: 'month' },
      });
      expect(again.product.version.terms.priceInCents).toBe(2000);
      expect(again.product.pricePoint?.subscriptionId).toBe(toCustom.subscription.id);
      // Without a handle, a migration's carries the subscription's id.
      expect(again.product.pricePoint?.handle).toBe(`custom-${toCustom.subscription.id}`);
      // Back onto its first custom price point: its own, so it may.
      const back = await acme.subscriptions.migrate(toCustom.subscription.id, {
        pricePointId: moved.product.pricePoint!.id,
        preservePeriod: true,
      });
      expect(back.product.version.terms.priceInCents).toBe(3000);
    });

    it('refuses a bad migration custom price, and a declined migration leaves no price point', async () => {
      const f = fixture();
      const { acme, subscribe, triple } = await setup(f);
      const signup = await subscribe();
      const id = signup.subscription.id;
      const bad = await rejection(
        acme.subscriptions.migrate(id, { productHandle: 'basic', customPrice: { priceInCents: 'ten' } }),
      );
      expect(bad.httpStatus).toBe(422);
      expect(bad.details.map((d) => d.attribute)).toEqual([
        'custom_price.interval',
        'custom_price.interval_unit',
        'custom_price.price_in_cents',
      ]);
      const both = await rejection(
        acme.subscriptions.migrate(id, {
          pricePointId: triple.pricePoint.id,
          customPrice: { priceInCents: 1, interval: 1, intervalUnit: 'month' },
        }),
      );
      expect(both.details[0]?.attribute).toBe('custom_price');
      await acme.subscriptions.updateCard(id, DECLINED);
      const declined = await rejection(
        acme.subscriptions.migrate(id, {
          productHandle: 'basic',
          customPrice: { handle: 'never-kept', priceInCents: 9000, interval: 1, intervalUnit: 'month' },
        }),
      );
      expect(declined.code).toBe('payment_declined');
      expect((await allPricePoints(acme)).map(([h]) => h)).toEqual(['original', 'triple']);
      expect((await acme.subscriptions.get(id)).subscription.productVersion).toBe(signup.subscription.productVersion);
    });

    it('prices a custom price in a signup preview, and keeps nothing', async () => {
      const f = fixture();
      const { acme } = await setup(f);
      const preview = await acme.subscriptions.previewSignup({
        productHandle: 'basic',
        customPrice: { priceInCents: 1234, interval: 1, intervalUnit: 'month', initialChargeInCents: 66 },
      });
      expect(preview.currentBillingManifest.totalInCents).toBe(1300);
      expect(preview.nextBillingManifest.totalInCents).toBe(1234);
      expect((await allPricePoints(acme)).map(([h]) => h)).toEqual(['original', 'triple']);
    });
  });
}
