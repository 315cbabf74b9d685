import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp } from './support/subscribe.js';

type Json = Record<string, unknown>;

/**
 * `acme` (USD) with product `pro` (default price point and `annual`), a subscriber on a custom
 * price point, component `seats`, an amount coupon and a percentage coupon.
 */
async function seed(f: HttpFixture) {
  const { familyId, productId } = await seedCatalog(f.engine);
  const acme = f.engine.site('acme');
  const annual = await acme.pricePoints.createProductPricePoint('pro', {
    name: 'Annual',
    handle: 'annual',
    priceInCents: 10000,
    interval: 12,
    intervalUnit: 'month',
  });
  const custom = await subscribeOverHttp(f, {
    custom_price: { price_in_cents: 4200, interval: 1, interval_unit: 'month' },
  });
  await acme.components.create(familyId, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '9',
  });
  const seats = await acme.pricePoints.getComponentPricePoint('seats', 'original');
  const amount = await acme.coupons.create({ name: 'Ten off', code: 'TENOFF', amountInCents: 1000 });
  const percent = await acme.coupons.create({ name: 'Half', code: 'HALF', percentage: '50' });
  return {
    familyId,
    productId,
    annual: annual.pricePoint.id,
    custom: custom.body.product_price_point_id as number,
    seatsPoint: seats.pricePoint.id,
    amount: amount.id,
    percent: percent.id,
  };
}

/** What the requests could change, read over HTTP. */
async function catalogState(f: HttpFixture, productId: number) {
  const read = async (path: string) => (await f.as('acme', { path })).json<unknown>();
  return {
    productPoints: await read(
      `/products/${productId}/price_points.json?archived=true&filter[type]=default,catalog,custom`,
    ),
    componentPoints: await read('/components_price_points.json?per_page=200'),
    coupons: await read('/coupons.json?per_page=200'),
    events: await read('/events.json?per_page=200'),
  };
}

/** The currency-price endpoints over raw HTTP: paths, bodies, error shapes, and nothing written. */
describe('currency price routes on a one-currency site', () => {
  const fixture = useHttpFixture();

  it('refuses product currency prices: body first, then 404, custom, then each currency; writes nothing', async () => {
    const f = fixture();
    const s = await seed(f);
    const before = await catalogState(f, s.productId);
    const send = (method: string, id: number | string, json: unknown) =>
      f.as('acme', { method, path: `/product_price_points/${id}/currency_prices.json`, json });

    const refused = await send('POST', s.annual, {
      currency_prices: [
        { currency: 'EUR', price: 90, role: 'baseline' },
        { currency: 'usd', price: 100, role: 'baseline' },
      ],
    });
    expect(refused.status).toBe(422);
    expect(refused.json()).toEqual({
      errors: {
        currency: [
          "Currency: EUR is not defined on the site; the site's only currency is USD.",
          "Currency: USD is the site's currency, the price point's primary pricing; it cannot be added as a currency price.",
        ],
      },
    });
    // The body is read before the price point is looked up.
    const noList = await send('POST', 999_999, { currency_price: [] });
    expect([noList.status, noList.json()]).toEqual([
      422,
      { errors: { currency_prices: ['Currency prices: must be a non-empty list.'] } },
    ]);
    const badEntry = await send('POST', s.annual, {
      currency_prices: [{ currency: 'EUR', price: 'x', role: 'setup' }],
    });
    expect(badEntry.json()).toEqual({
      errors: { price: ['Price: is not a number.'], role: ['Role: must be one of baseline, trial, initial.'] },
    });
    const good = { currency_prices: [{ currency: 'EUR', price: 9, role: 'baseline' }] };
    const missing = await send('POST', 999_999, good);
    expect([missing.status, missing.json()]).toEqual([404, { errors: ['Price point 999999 not found.'] }]);
    expect((await send('POST', 'abc', good)).status).toBe(404);
    const custom = await send('POST', s.custom, good);
    expect([custom.status, custom.json()]).toEqual([
      422,
      { errors: { price_point: ['Currency Prices are not able to be created for custom product price points.'] } },
    ]);

    const update = await send('PUT', s.annual, { currency_prices: [{ id: 5, price: '10.50' }] });
    expect([update.status, update.json()]).toEqual([
      422,
      {
        errors: {
          id: [
            "Currency price 5: does not exist on this price point; the site's only currency is USD, so it has no currency prices.",
          ],
        },
      },
    ]);
    expect((await send('PUT', 999_999, { currency_prices: [{ id: 5, price: 1 }] })).status).toBe(404);
    const customUpdate = await send('PUT', s.custom, { currency_prices: [{ id: 5, price: 1 }] });
    expect(customUpdate.json()).toEqual({
      errors: { price_point: ['Currency Prices are not able to be updated for custom product price points.'] },
    });
    const malformed = await f.as('acme', {
      method: 'POST',
      path: `/product_price_points/${s.annual}/currency_prices.json`,
      body: '{"currency_prices":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    // A read of the path is not a route of its own: the path takes POST and PUT.
    const get = await f.as('acme', { path: `/product_price_points/${s.annual}/currency_prices.json` });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST, PUT');
    // Another site's price point is not found.
    expect(
      (
        await f.as('globex', {
          method: 'POST',
          path: `/product_price_points/${s.annual}/currency_prices.json`,
          json: good,
        })
      ).status,
    ).toBe(404);
    expect(await catalogState(f, s.productId)).toEqual(before);
  });

  it('refuses component currency prices in the same order', async () => {
    const f = fixture();
    const s = await seed(f);
    const before = await catalogState(f, s.productId);
    const send = (method: string, id: number, json: unknown) =>
      f.as('acme', { method, path: `/price_points/${id}/currency_prices.json`, json });
    const refused = await send('POST', s.seatsPoint, {
      currency_prices: [{ currency: 'GBP', price: '7.5', price_id: 1 }],
    });
    expect([refused.status, refused.json()]).toEqual([
      422,
      { errors: { currency: ["Currency: GBP is not defined on the site; the site's only currency is USD."] } },
    ]);
    const bad = await send('POST', s.seatsPoint, { currency_prices: [{ currency: 'GBP', price: '7.5' }] });
    expect(bad.json()).toEqual({ errors: { price_id: ['Price id: cannot be blank.'] } });
    expect(
      (await send('POST', 999_999, { currency_prices: [{ currency: 'GBP', price: 1, price_id: 1 }] })).status,
    ).toBe(404);
    const update = await send('PUT', s.seatsPoint, { currency_prices: [{ id: 2, price: '1' }] });
    expect(update.status).toBe(422);
    expect(Object.keys(update.json<{ errors: Json }>().errors)).toEqual(['id']);
    expect(await catalogState(f, s.productId)).toEqual(before);
  });

  it('refuses coupon currency prices with a map of field to one message', async () => {
    const f = fixture();
    const s = await seed(f);
    const before = await catalogState(f, s.productId);
    const send = (id: number, json: unknown) =>
      f.as('acme', { method: 'PUT', path: `/coupons/${id}/currency_prices.json`, json });
    const refused = await send(s.amount, {
      currency_prices: [
        { currency: 'CAD', price: 13 },
        { currency: 'USD', price: 10 },
      ],
    });
    expect([refused.status, refused.json()]).toEqual([
      422,
      {
        errors: {
          currency:
            "Currency: CAD is not defined on the site; the site's only currency is USD. Currency: USD is the site's currency, the coupon's primary pricing; it cannot be added as a currency price.",
        },
      },
    ]);
    const percent = await send(s.percent, { currency_prices: [{ currency: 'CAD', price: 1 }] });
    expect([percent.status, percent.json()]).toEqual([
      422,
      {
        errors: {
          currency_prices:
            'Currency prices: a percentage coupon has no amount to price in other currencies; only amount coupons have currency prices.',
        },
      },
    ]);
    const missing = await send(999_999, { currency_prices: [{ currency: 'CAD', price: 1 }] });
    expect([missing.status, missing.json()]).toEqual([404, { errors: ['Coupon 999999 not found.'] }]);
    const bad = await send(s.amount, { currency_prices: [{ currency: 'JPY', price: '1.5' }] });
    expect(bad.json()).toEqual({ errors: { price: 'Price: has more decimal places than JPY allows.' } });
    const many = await send(s.amount, {
      currency_prices: Array.from({ length: 1000 }, () => ({ currency: 'CAD', price: 1 })),
    });
    expect(many.json()).toEqual({ errors: { currency_prices: 'Currency prices: at most 100 can be given at once.' } });
    expect(await catalogState(f, s.productId)).toEqual(before);
  });

  it('answers currency_prices=true on reads with an empty currency_prices', async () => {
    const f = fixture();
    const s = await seed(f);
    const read = async (path: string) => {
      const reply = await f.as('acme', { path });
      expect(reply.status, reply.text).toBe(200);
      return reply.json<Json>();
    };
    const point = (await read(`/products/${s.productId}/price_points/${s.annual}.json?currency_prices=true`))
      .price_point as Json;
    expect(point.currency_prices).toEqual([]);
    const plain = (await read(`/products/${s.productId}/price_points/${s.annual}.json`)).price_point as Json;
    expect('currency_prices' in plain).toBe(false);
    const list = (await read(`/products/${s.productId}/price_points.json?currency_prices=true`)).price_points as Json[];
    expect(list.map((p) => p.currency_prices)).toEqual([[], []]);
    const all = (await read('/products_price_points.json?include=currency_prices')).price_points as Json[];
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((p) => Array.isArray(p.currency_prices) && p.currency_prices.length === 0)).toBe(true);
    expect(((await read('/products_price_points.json')).price_points as Json[])[0]).not.toHaveProperty(
      'currency_prices',
    );
    const coupon = (await read(`/coupons/${s.amount}.json?currency_prices=true`)).coupon as Json;
    expect(coupon.currency_prices).toEqual([]);
    expect((await read(`/coupons/${s.amount}.json`)).coupon).not.toHaveProperty('currency_prices');
    const family = (await read(`/product_families/${s.familyId}/coupons.json?currency_prices=true`)) as unknown as {
      coupon: Json;
    }[];
    expect(family.map((c) => c.coupon.currency_prices)).toEqual([[], []]);
    const found = (await read('/coupons/find.json?code=TENOFF&currency_prices=true')).coupon as Json;
    expect(found.currency_prices).toEqual([]);
    const component = (await read(`/components/handle:seats/price_points/${s.seatsPoint}.json?currency_prices=true`))
      .price_point as Json;
    expect(component.currency_prices).toEqual([]);
  });
});
