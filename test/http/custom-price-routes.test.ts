import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp } from './support/subscribe.js';

type Sub = { subscription: Record<string, unknown> };
type PricePoint = { price_point: Record<string, unknown> };
type PricePoints = { price_points: Record<string, unknown>[] };

/**
 * `custom_price` over HTTP: a signup's and a migration's terms of the subscription's own, shown as
 * a `custom` price point of the product that the price point routes list only when asked for and
 * cannot change; bad input is a 422 that creates nothing.
 */
describe('custom prices over HTTP', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('signs up at a custom price given as strings, and shows its custom price point', async () => {
    const f = fixture();
    const { productId } = await seedCatalog(f.engine);
    const s = await subscribeOverHttp(f, {
      custom_price: {
        name: 'Ada deal',
        handle: 'ada-deal',
        price_in_cents: '4200',
        interval: '1',
        interval_unit: 'month',
        initial_charge_in_cents: 300,
        expiration_interval_unit: 'never',
        tax_included: false,
      },
    });
    expect(s.body).toMatchObject({
      product_price_in_cents: 4200,
      product_price_point_handle: 'ada-deal',
      product_price_point_type: 'custom',
      expires_at: null,
    });
    const ppid = s.body.product_price_point_id as number;
    const list = await f.as('acme', { path: `/products/${productId}/price_points.json` });
    expect(list.json<PricePoints>().price_points.map((p) => p.handle)).toEqual(['original']);
    const custom = await f.as('acme', { path: `/products/${productId}/price_points.json?filter[type]=custom` });
    expect(custom.json<PricePoints>().price_points).toEqual([
      expect.objectContaining({ id: ppid, type: 'custom', subscription_id: s.id, price_in_cents: 4200 }),
    ]);
    const read = await f.as('acme', { path: `/products/${productId}/price_points/${ppid}.json` });
    expect(read.json<PricePoint>().price_point).toMatchObject({
      name: 'Ada deal',
      type: 'custom',
      subscription_id: s.id,
      initial_charge_in_cents: 300,
    });
    const archive = await f.as('acme', { method: 'DELETE', path: `/products/${productId}/price_points/${ppid}.json` });
    expect(archive.status).toBe(422);
    const update = await f.as('acme', {
      method: 'PUT',
      path: `/products/${productId}/price_points/${ppid}.json`,
      json: { price_point: { price_in_cents: 1 } },
    });
    expect(update.status).toBe(422);
    // Another signup naming it is refused.
    const other = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: {
        subscription: {
          product_handle: 'pro',
          product_price_point_id: ppid,
          customer_attributes: { first_name: 'Bo', last_name: 'Ng', email: 'bo@example.com' },
          credit_card_attributes: { full_number: '1', expiration_month: 12, expiration_year: 2030 },
        },
      },
    });
    expect(other.status).toBe(422);
    expect(other.text).toContain('is a custom price point of another subscription');
  });

  it('answers a bad custom price with a 422 naming every problem, and creates nothing', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const post = (custom_price: unknown) =>
      f.as('acme', {
        method: 'POST',
        path: '/subscriptions.json',
        json: {
          subscription: {
            product_handle: 'pro',
            customer_attributes: { first_name: 'Bo', last_name: 'Ng', email: 'bo@example.com' },
            credit_card_attributes: { full_number: '1', expiration_month: 12, expiration_year: 2030 },
            custom_price,
          },
        },
      });
    const bad = await post({ price_in_cents: 'a lot', interval: 0 });
    expect(bad.status).toBe(422);
    expect(bad.json<{ errors: string[] }>().errors).toEqual([
      'Custom price: Interval unit: cannot be blank.',
      'Custom price: Price in cents: is not a number.',
      'Custom price: Interval: must be a whole number greater than 0.',
    ]);
    const week = await post({ price_in_cents: 100, interval: 1, interval_unit: 'week' });
    expect(week.status).toBe(422);
    expect(week.json<{ errors: string[] }>().errors).toEqual(["Interval unit: must be 'month' or 'day'."]);
    const taxed = await post({ price_in_cents: 100, interval: 1, interval_unit: 'month', tax_included: true });
    expect(taxed.status).toBe(422);
    expect(taxed.text).toContain('tax-inclusive prices are not supported by this server.');
    const never = await post({
      price_in_cents: 100,
      interval: 1,
      interval_unit: 'month',
      expiration_interval: 3,
      expiration_interval_unit: 'never',
    });
    expect(never.status).toBe(422);
    const notObject = await post('cheap');
    expect(notObject.status).toBe(422);
    expect((await f.engine.site('acme').subscriptions.list()).length).toBe(0);
    const all = await f.as('acme', { path: '/products_price_points.json?filter[type]=custom' });
    expect(all.json<PricePoints>().price_points).toEqual([]);
  });

  it('migrates to a custom price (preview first) and prices one in a signup preview', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const s = await subscribeOverHttp(f);
    const migration = {
      product_handle: 'pro',
      custom_price: { price_in_cents: 2500, interval: 1, interval_unit: 'month' },
    };
    const preview = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/migrations/preview.json`,
      json: { migration },
    });
    expect(preview.status, preview.text).toBe(200);
    // At the start of the period the whole 10.00 is credited against the full 25.00.
    expect(preview.json()).toEqual({
      migration: {
        prorated_adjustment_in_cents: -1000,
        charge_in_cents: 2500,
        payment_due_in_cents: 1500,
        credit_applied_in_cents: 1000,
      },
    });
    const moved = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/migrations.json`,
      json: { migration },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.json<Sub>().subscription).toMatchObject({
      product_price_in_cents: 2500,
      product_price_point_type: 'custom',
      balance_in_cents: 0,
    });
    const refused = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/migrations.json`,
      json: { migration: { product_handle: 'pro', custom_price: { price_in_cents: 1 } } },
    });
    expect(refused.status).toBe(422);

    const signupPreview = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/preview.json',
      json: {
        subscription: {
          product_handle: 'pro',
          custom_price: { price_in_cents: 777, interval: 1, interval_unit: 'day' },
        },
      },
    });
    expect(signupPreview.status, signupPreview.text).toBe(200);
    const manifests = signupPreview.json<{
      subscription_preview: { current_billing_manifest: { total_in_cents: number } };
    }>();
    expect(manifests.subscription_preview.current_billing_manifest.total_in_cents).toBe(777);
  });
});
