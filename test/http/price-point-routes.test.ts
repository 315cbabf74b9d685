import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';

/** Product price point routes over raw HTTP: bodies, error shapes, path forms and list filters. */
describe('product price point routes', () => {
  const fixture = useHttpFixture();

  it('answers errors in the service’s shapes and changes nothing on a refusal', async () => {
    const f = fixture();
    const { productId } = await seedCatalog(f.engine);
    const post = (path: string, json: unknown) => f.as('acme', { method: 'POST', path, json });

    const unwrapped = await post(`/products/${productId}/price_points.json`, { name: 'x' });
    expect(unwrapped.status).toBe(422);
    expect(unwrapped.json()).toMatchObject({ errors: { price_point: [expect.any(String)] } });
    const invalid = await post(`/products/${productId}/price_points.json`, {
      price_point: { name: 'Bad', price_in_cents: -1, interval: 1, interval_unit: 'week' },
    });
    expect(invalid.status).toBe(422);
    // The body is read before the engine checks amounts, so the unit is the one problem reported.
    expect(Object.keys((invalid.json() as { errors: object }).errors)).toEqual(['interval_unit']);
    const bulk = await post('/products/handle:pro/price_points/bulk.json', {
      price_points: [
        { name: 'A', handle: 'a', price_in_cents: 100, interval: 1, interval_unit: 'month' },
        { name: 'B', handle: 'b', price_in_cents: 100, interval: 0, interval_unit: 'month' },
      ],
    });
    expect(bulk.status).toBe(422);
    const listed = await f.as('acme', { path: `/products/${productId}/price_points.json` });
    expect((listed.json() as { price_points: { handle: string }[] }).price_points.map((p) => p.handle)).toEqual([
      'original',
    ]);

    const created = await post(`/products/${productId}/price_points.json`, {
      price_point: { name: 'Annual', handle: 'annual', price_in_cents: '10000', interval: 12, interval_unit: 'month' },
    });
    expect(created.status).toBe(201);
    expect(created.json()).toMatchObject({
      price_point: {
        handle: 'annual',
        price_in_cents: 10000,
        type: 'catalog',
        product_id: productId,
        archived_at: null,
      },
    });
    const taken = await post(`/products/${productId}/price_points.json`, {
      price_point: { name: 'Again', handle: 'annual', price_in_cents: 1, interval: 1, interval_unit: 'month' },
    });
    expect(taken.json()).toEqual({ errors: { handle: ['Handle: must be unique - that value has been taken.'] } });

    expect((await f.as('acme', { path: `/products/${productId}/price_points/handle:nope.json` })).status).toBe(404);
    expect((await f.as('acme', { path: `/products/${productId}/price_points/abc.json` })).status).toBe(404);
    expect((await f.as('acme', { path: '/products/handle:pro/price_points/handle:annual.json' })).status).toBe(200);
    const filtered = await f.as('acme', { path: '/products_price_points.json?filter[type]=default' });
    expect((filtered.json() as { price_points: { handle: string }[] }).price_points.map((p) => p.handle)).toEqual([
      'original',
    ]);
    const badType = await f.as('acme', { path: '/products_price_points.json?filter[type]=gold' });
    expect(badType.status).toBe(422);
    const dates = await f.as('acme', { path: '/products_price_points.json?filter[start_date]=2026-01-01' });
    expect(dates.status).toBe(422);
    const desc = await f.as('acme', { path: '/products_price_points.json?direction=desc&per_page=1' });
    expect((desc.json() as { price_points: { handle: string }[] }).price_points.map((p) => p.handle)).toEqual([
      'annual',
    ]);

    const refused = await f.as('acme', {
      method: 'DELETE',
      path: `/products/${productId}/price_points/handle:original.json`,
    });
    expect(refused.status).toBe(422);
    const promoted = await f.as('acme', {
      method: 'PATCH',
      path: `/products/${productId}/price_points/handle:annual/default.json`,
    });
    expect(promoted.json()).toMatchObject({ product: { price_in_cents: 10000, product_price_point_handle: 'annual' } });
    const product = await f.as('acme', { path: `/products/${productId}.json` });
    expect(product.json()).toMatchObject({ product: { price_in_cents: 10000, interval: 12 } });
  });
});
