import { describe, expect, it } from 'vitest';
import { seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

/**
 * Signup on a product price point over HTTP: `product_price_point_handle` / `_id` bill at the price
 * point's terms, the subscription shows it, and it keeps those terms when the price point changes.
 * An unknown or archived price point is a 422 that creates nothing.
 */
describe('signup on a product price point', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('bills at the price point, shows it, and keeps its terms after an edit', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const acme = f.engine.site('acme');
    const annual = await acme.pricePoints.createProductPricePoint('pro', {
      name: 'Annual',
      handle: 'annual',
      priceInCents: 10000,
      interval: 12,
      intervalUnit: 'month',
    });
    const body = signupBody('pro') as { subscription: Record<string, unknown> };
    const post = (extra: Record<string, unknown>, reference: string) =>
      f.as('acme', {
        method: 'POST',
        path: '/subscriptions.json',
        json: {
          subscription: {
            ...body.subscription,
            ...extra,
            customer_attributes: {
              ...(body.subscription.customer_attributes as object),
              reference,
              email: `${reference}@example.com`,
            },
          },
        },
      });

    const unknown = await post({ product_price_point_handle: 'nope' }, 'a');
    expect(unknown.status).toBe(422);
    expect((await acme.subscriptions.list()).length).toBe(0);

    const created = await post({ product_price_point_handle: 'annual' }, 'b');
    expect(created.status).toBe(201);
    const sub = (created.json() as { subscription: Record<string, unknown> }).subscription;
    expect(sub).toMatchObject({
      product_price_in_cents: 10000,
      product_price_point_id: annual.pricePoint.id,
      product_price_point_handle: 'annual',
      product_price_point_type: 'catalog',
    });
    const byId = await post({ product_price_point_id: annual.pricePoint.id }, 'c');
    expect(
      (byId.json() as { subscription: { product_price_in_cents: number } }).subscription.product_price_in_cents,
    ).toBe(10000);
    const plain = await post({}, 'd');
    expect(
      (plain.json() as { subscription: { product_price_point_handle: string } }).subscription
        .product_price_point_handle,
    ).toBe('original');

    await acme.pricePoints.updateProductPricePoint('pro', 'annual', { priceInCents: 12000 });
    const read = await f.as('acme', { method: 'GET', path: `/subscriptions/${sub.id}.json` });
    expect(
      (read.json() as { subscription: { product_price_in_cents: number } }).subscription.product_price_in_cents,
    ).toBe(10000);
    await acme.pricePoints.archiveProductPricePoint('pro', 'annual');
    const archived = await post({ product_price_point_handle: 'annual' }, 'e');
    expect(archived.status).toBe(422);
  });
});
