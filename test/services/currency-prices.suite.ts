import type { BillingError, Storage, StorageTransaction } from 'billing-engine';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { MAX_CURRENCY_PRICES } from '../../src/services/currency-prices.js';
import { PricePointService } from '../../src/services/price-point-service.js';
import { type EngineFixture, rejection, useEngine } from '../support/engine-harness.js';

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

/**
 * `acme` (USD) with product `basic` (its default price point and a catalog one, `annual`), a
 * subscriber on a custom price point of its own, component `seats` (default and `bulk` price
 * points), an amount coupon and a percentage coupon; `globex` (EUR) beside it.
 */
async function setup(f: EngineFixture) {
  const site = await f.engine.sites.create({ subdomain: 'acme', currency: 'USD', timeZone: 'UTC' });
  await f.engine.sites.create({ subdomain: 'globex', currency: 'EUR', timeZone: 'UTC' });
  const acme = f.engine.site('acme');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const product = await acme.catalog.createProduct(family.id, {
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
  const sub = await acme.subscriptions.create({
    productHandle: 'basic',
    customer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
    creditCard: VISA,
    customPrice: { priceInCents: 4200, interval: 1, intervalUnit: 'month' },
  });
  await acme.components.create(family.id, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '9',
  });
  const bulk = await acme.pricePoints.createComponentPricePoint('seats', { name: 'Bulk', unitPrice: '7' });
  const amount = await acme.coupons.create({ name: 'Ten off', code: 'TENOFF', amountInCents: 1000 });
  const percent = await acme.coupons.create({ name: 'Half', code: 'HALF', percentage: '50' });
  const custom = sub.product.pricePoint;
  if (custom?.type !== 'custom') throw new Error('the signup made no custom price point');
  return {
    acme,
    siteId: site.site.id,
    defaultPoint: product.pricePoint!.id,
    annual: annual.pricePoint.id,
    custom: custom.id,
    seatsDefault: (await acme.pricePoints.getComponentPricePoint('seats', 'original')).pricePoint.id,
    bulk: bulk.pricePoint.id,
    amount: amount.id,
    percent: percent.id,
  };
}

/** Everything a currency-price request could touch: price points (and their versions), coupons, the outbox. */
function snapshot(f: EngineFixture, siteId: number) {
  return f.storage.transaction(async (tx) => ({
    products: await tx.pricePoints.listProductPricePoints(siteId, { includeArchived: true }),
    components: await tx.pricePoints.listComponentPricePoints(siteId, { includeArchived: true }),
    coupons: await tx.coupons.list(siteId, { page: 1, perPage: 200 }),
    outbox: await tx.outbox.listAfter(siteId, 0, 10_000),
    site: await tx.sites.findBySubdomain('acme'),
  }));
}

/** The refusal as the HTTP layer shows it: status, shape and each field's messages. */
function shown(error: BillingError) {
  return {
    status: error.httpStatus,
    shape: error.shape,
    details: error.details.map((d) => [d.attribute, d.message]),
  };
}

/**
 * A storage whose component price point reads answer `custom` for one id: the engine has no way to
 * make a custom component price point yet, so the refusal of one is tested through this.
 */
function customComponentStorage(storage: Storage, id: number): Storage {
  const wrap = (tx: StorageTransaction): StorageTransaction =>
    new Proxy(tx, {
      get(target, key, receiver) {
        if (key !== 'pricePoints') return Reflect.get(target, key, receiver);
        const pricePoints = target.pricePoints;
        return new Proxy(pricePoints, {
          get(inner, name, innerReceiver) {
            if (name !== 'findComponentPricePoint') return Reflect.get(inner, name, innerReceiver);
            return async (siteId: number, pricePointId: number) => {
              const found = await inner.findComponentPricePoint(siteId, pricePointId);
              return found && found.id === id ? { ...found, type: 'custom' as const } : found;
            };
          },
        });
      },
    });
  return new Proxy(storage, {
    get(target, key, receiver) {
      if (key !== 'transaction') return Reflect.get(target, key, receiver);
      return <T>(work: (tx: StorageTransaction) => Promise<T>, options?: Parameters<Storage['transaction']>[1]) =>
        target.transaction((tx) => work(wrap(tx)), options);
    },
  });
}

/** Currency prices of price points and coupons on a site with one currency, on every adapter. */
export function currencyPricesSuite(harness: StorageHarness): void {
  describe(`currency prices on a one-currency site (${harness.name})`, () => {
    const fixture = useEngine(harness, '2026-03-01T12:00:00Z');

    it('refuses product currency prices naming each currency, in order, and writes nothing', async () => {
      const f = fixture();
      const s = await setup(f);
      const before = await snapshot(f, s.siteId);
      const refused = await rejection(
        s.acme.pricePoints.createProductCurrencyPrices(s.annual, [
          { currency: 'eur', price: 90, role: 'baseline' },
          { currency: 'USD', price: '100.00', role: 'baseline' },
          { currency: 'EUR', price: 0, role: 'trial' },
        ]),
      );
      expect(shown(refused)).toEqual({
        status: 422,
        shape: 'map',
        details: [
          ['currency', "Currency: EUR is not defined on the site; the site's only currency is USD."],
          [
            'currency',
            "Currency: USD is the site's currency, the price point's primary pricing; it cannot be added as a currency price.",
          ],
        ],
      });
      // The default price point is refused the same way.
      const onDefault = await rejection(
        s.acme.pricePoints.createProductCurrencyPrices(s.defaultPoint, [
          { currency: 'GBP', price: 8, role: 'baseline' },
        ]),
      );
      expect(onDefault.messages).toEqual([
        "Currency: GBP is not defined on the site; the site's only currency is USD.",
      ]);
      expect(await snapshot(f, s.siteId)).toEqual(before);
    });

    it('checks the request first, then the price point (404), then a custom one, then the currency', async () => {
      const f = fixture();
      const s = await setup(f);
      const before = await snapshot(f, s.siteId);
      const pp = s.acme.pricePoints;
      // 1. The request, before any lookup: an unknown price point with a bad body is a 422.
      const bad = await rejection(
        pp.createProductCurrencyPrices(999_999, [
          { currency: 'EURO', price: 'ten', role: 'baseline' },
          { currency: 'XYZ', price: -1, role: 'setup' },
          { price: 1.234, role: 'trial', currency: 'USD' },
          { role: 'baseline' },
        ]),
      );
      expect(shown(bad)).toEqual({
        status: 422,
        shape: 'map',
        details: [
          ['currency', 'Currency: must be a three-letter ISO 4217 code.'],
          ['price', 'Price: is not a number.'],
          ['currency', "Currency: 'XYZ' is not a supported ISO 4217 currency."],
          ['price', 'Price: must be greater than or equal to 0.'],
          ['role', 'Role: must be one of baseline, trial, initial.'],
          ['price', 'Price: has more decimal places than USD allows.'],
          ['currency', 'Currency: cannot be blank.'],
          ['price', 'Price: cannot be blank.'],
        ],
      });
      expect((await rejection(pp.createProductCurrencyPrices(s.annual, []))).messages).toEqual([
        'Currency prices: must be a non-empty list.',
      ]);
      const many = Array.from({ length: MAX_CURRENCY_PRICES + 1 }, () => ({
        currency: 'EUR',
        price: 1,
        role: 'baseline',
      }));
      expect((await rejection(pp.createProductCurrencyPrices(s.annual, many))).messages).toEqual([
        `Currency prices: at most ${MAX_CURRENCY_PRICES} can be given at once.`,
      ]);
      const twice = await rejection(
        pp.createProductCurrencyPrices(s.annual, [
          { currency: 'EUR', price: 1, role: 'baseline' },
          { currency: 'eur', price: 2, role: 'baseline' },
        ]),
      );
      expect(twice.messages).toEqual(['Currency prices: EUR baseline is given more than once.']);
      expect((await rejection(pp.createProductCurrencyPrices(s.annual, ['EUR' as never]))).messages).toEqual([
        'Currency prices: each entry must be an object.',
      ]);
      // 2. The price point: unknown, a component's id, another site's.
      const good = [{ currency: 'EUR', price: 9, role: 'baseline' }];
      for (const id of [999_999, 0, -1, 1.5]) {
        const missing = await rejection(pp.createProductCurrencyPrices(id, good));
        expect([missing.code, missing.httpStatus]).toEqual(['not_found', 404]);
      }
      const globex = await rejection(f.engine.site('globex').pricePoints.createProductCurrencyPrices(s.annual, good));
      expect(globex.httpStatus).toBe(404);
      // 3. A custom price point.
      const custom = await rejection(pp.createProductCurrencyPrices(s.custom, good));
      expect(shown(custom)).toEqual({
        status: 422,
        shape: 'map',
        details: [['price_point', 'Currency Prices are not able to be created for custom product price points.']],
      });
      const customUpdate = await rejection(pp.updateProductCurrencyPrices(s.custom, [{ id: 1, price: 5 }]));
      expect(customUpdate.messages).toEqual([
        'Currency Prices are not able to be updated for custom product price points.',
      ]);
      expect(await snapshot(f, s.siteId)).toEqual(before);
    });

    it('refuses updates of currency prices by id: a one-currency site has none', async () => {
      const f = fixture();
      const s = await setup(f);
      const before = await snapshot(f, s.siteId);
      const pp = s.acme.pricePoints;
      const refused = await rejection(
        pp.updateProductCurrencyPrices(s.annual, [
          { id: 7, price: '12.50' },
          { id: '8', price: 3 },
        ]),
      );
      expect(shown(refused)).toEqual({
        status: 422,
        shape: 'map',
        details: [
          [
            'id',
            "Currency price 7: does not exist on this price point; the site's only currency is USD, so it has no currency prices.",
          ],
          [
            'id',
            "Currency price 8: does not exist on this price point; the site's only currency is USD, so it has no currency prices.",
          ],
        ],
      });
      const bad = await rejection(
        pp.updateProductCurrencyPrices(s.annual, [
          { id: 0, price: '1.23456' },
          { price: 1 },
          { id: 3, price: 1 },
          { id: 3, price: 2 },
        ]),
      );
      expect(bad.details.map((d) => d.message)).toEqual([
        'Id: must be a whole number greater than 0.',
        'Price: must have at most 4 decimal places.',
        'Id: cannot be blank.',
        'Currency prices: currency price 3 is given more than once.',
      ]);
      expect((await rejection(pp.updateProductCurrencyPrices(999_999, [{ id: 1, price: 1 }]))).httpStatus).toBe(404);
      expect(await snapshot(f, s.siteId)).toEqual(before);
    });

    it('refuses component currency prices in the same order, and writes nothing', async () => {
      const f = fixture();
      const s = await setup(f);
      const before = await snapshot(f, s.siteId);
      const pp = s.acme.pricePoints;
      const refused = await rejection(
        pp.createComponentCurrencyPrices(s.bulk, [
          { currency: 'usd', price: '6.5', priceId: 1 },
          { currency: 'JPY', price: 700, priceId: '1' },
        ]),
      );
      expect(shown(refused)).toEqual({
        status: 422,
        shape: 'map',
        details: [
          [
            'currency',
            "Currency: USD is the site's currency, the price point's primary pricing; it cannot be added as a currency price.",
          ],
          ['currency', "Currency: JPY is not defined on the site; the site's only currency is USD."],
        ],
      });
      const bad = await rejection(
        pp.createComponentCurrencyPrices(999_999, [
          { currency: 'EUR', price: '0.00001' },
          { currency: 'EUR', price: 1, priceId: -2 },
        ]),
      );
      expect(bad.details.map((d) => [d.attribute, d.message])).toEqual([
        ['price', 'Price: must have at most 4 decimal places.'],
        ['price_id', 'Price id: cannot be blank.'],
        ['price_id', 'Price id: must be a whole number greater than 0.'],
      ]);
      const good = [{ currency: 'EUR', price: '1.25', priceId: 1 }];
      expect((await rejection(pp.createComponentCurrencyPrices(999_999, good))).httpStatus).toBe(404);
      expect((await rejection(pp.updateComponentCurrencyPrices(999_999, [{ id: 1, price: 1 }]))).httpStatus).toBe(404);
      const updated = await rejection(pp.updateComponentCurrencyPrices(s.seatsDefault, [{ id: 4, price: '2' }]));
      expect(updated.details).toEqual([
        {
          attribute: 'id',
          message:
            "Currency price 4: does not exist on this price point; the site's only currency is USD, so it has no currency prices.",
        },
      ]);
      expect(await snapshot(f, s.siteId)).toEqual(before);
    });

    it('refuses currency prices of a custom component price point', async () => {
      const f = fixture();
      const s = await setup(f);
      const service = new PricePointService({
        storage: customComponentStorage(f.storage, s.bulk),
        clock: f.clock,
        emitter: { emit() {} },
      });
      const created = await rejection(
        service.createComponentCurrencyPrices('acme', s.bulk, [{ currency: 'EUR', price: 1, priceId: 1 }]),
      );
      expect(shown(created)).toEqual({
        status: 422,
        shape: 'map',
        details: [['price_point', 'Currency Prices are not able to be created for custom price points.']],
      });
      const updated = await rejection(service.updateComponentCurrencyPrices('acme', s.bulk, [{ id: 1, price: 1 }]));
      expect(updated.messages).toEqual(['Currency Prices are not able to be updated for custom price points.']);
      // Another price point of the same storage is not custom: its currencies are refused instead.
      const other = await rejection(
        service.createComponentCurrencyPrices('acme', s.seatsDefault, [{ currency: 'EUR', price: 1, priceId: 1 }]),
      );
      expect(other.details[0]?.attribute).toBe('currency');
    });

    it('refuses coupon currency prices: unknown coupon, percentage coupon, then each currency', async () => {
      const f = fixture();
      const s = await setup(f);
      const before = await snapshot(f, s.siteId);
      const coupons = s.acme.coupons;
      const refused = await rejection(
        coupons.createOrUpdateCurrencyPrices(s.amount, [
          { currency: 'CAD', price: 13 },
          { currency: 'usd', price: '10.00' },
        ]),
      );
      expect(shown(refused)).toEqual({
        status: 422,
        shape: 'map',
        details: [
          ['currency', "Currency: CAD is not defined on the site; the site's only currency is USD."],
          [
            'currency',
            "Currency: USD is the site's currency, the coupon's primary pricing; it cannot be added as a currency price.",
          ],
        ],
      });
      const percentage = await rejection(
        coupons.createOrUpdateCurrencyPrices(s.percent, [{ currency: 'CAD', price: 1 }]),
      );
      expect(shown(percentage)).toEqual({
        status: 422,
        shape: 'map',
        details: [
          [
            'currency_prices',
            'Currency prices: a percentage coupon has no amount to price in other currencies; only amount coupons have currency prices.',
          ],
        ],
      });
      const missing = await rejection(coupons.createOrUpdateCurrencyPrices(999_999, [{ currency: 'CAD', price: 1 }]));
      expect([missing.code, missing.messages]).toEqual(['not_found', ['Coupon 999999 not found.']]);
      // The body is checked before the coupon is looked up.
      const bad = await rejection(
        coupons.createOrUpdateCurrencyPrices(999_999, [
          { currency: 'CAD', price: '1.001' },
          { currency: 'cad', price: 2 },
        ]),
      );
      expect(bad.messages).toEqual([
        'Price: has more decimal places than CAD allows.',
        'Currency prices: CAD is given more than once.',
      ]);
      const globex = await rejection(
        f.engine.site('globex').coupons.createOrUpdateCurrencyPrices(s.amount, [{ currency: 'CAD', price: 1 }]),
      );
      expect(globex.httpStatus).toBe(404);
      expect(await snapshot(f, s.siteId)).toEqual(before);
    });

    it('names the currency of a site whose currency is not USD', async () => {
      const f = fixture();
      await setup(f);
      const globex = f.engine.site('globex');
      const family = await globex.catalog.createFamily({ name: 'Pläne' });
      const product = await globex.catalog.createProduct(family.id, {
        name: 'Basis',
        handle: 'basis',
        priceInCents: 900,
        interval: 1,
        intervalUnit: 'month',
      });
      const refused = await rejection(
        globex.pricePoints.createProductCurrencyPrices(product.pricePoint!.id, [
          { currency: 'EUR', price: 9, role: 'baseline' },
          { currency: 'USD', price: 10, role: 'baseline' },
        ]),
      );
      expect(refused.messages).toEqual([
        "Currency: EUR is the site's currency, the price point's primary pricing; it cannot be added as a currency price.",
        "Currency: USD is not defined on the site; the site's only currency is EUR.",
      ]);
    });
  });
}
