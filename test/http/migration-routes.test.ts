import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp, transactionsOverHttp } from './support/subscribe.js';

/** The seeded catalog plus `premium` (30.00 a month) in the same family. */
async function twoProducts(fixture: HttpFixture) {
  const seeded = await seedCatalog(fixture.engine);
  const premium = await fixture.engine
    .site('acme')
    .catalog.createProduct(seeded.familyId, { name: 'Premium', handle: 'premium', priceInCents: 3000, interval: 1 });
  return { ...seeded, premiumId: premium.product.id };
}

type Sub = { subscription: Record<string, unknown> & { product: { handle: string } } };

describe('HTTP migrations', () => {
  const http = useHttpFixture();

  it('preview answers the costs in integer cents and changes nothing', async () => {
    await twoProducts(http());
    const s = await subscribeOverHttp(http());
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/migrations/preview.json`,
      json: { migration: { product_handle: 'premium' } },
    });
    expect(reply.status).toBe(200);
    // At the start of the period the whole 10.00 is credited against the full 30.00.
    expect(reply.json()).toEqual({
      migration: {
        prorated_adjustment_in_cents: -1000,
        charge_in_cents: 3000,
        payment_due_in_cents: 2000,
        credit_applied_in_cents: 1000,
      },
    });
    const read = await http().as('acme', { path: `/subscriptions/${s.id}.json` });
    expect(read.json<Sub>().subscription.product.handle).toBe('pro');
  });

  it('migrates with proration (200, the subscription), charging what is due', async () => {
    const { premiumId } = await twoProducts(http());
    const s = await subscribeOverHttp(http());
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/migrations.json`,
      json: { migration: { product_id: String(premiumId), include_coupons: true } },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({
      subscription: { id: s.id, product: { id: premiumId, handle: 'premium' }, balance_in_cents: 0 },
    });
    const [payment, charge, credit] = await transactionsOverHttp(http(), s.id);
    expect(credit).toMatchObject({ transaction_type: 'adjustment', kind: 'prorated', amount_in_cents: -1000 });
    expect(charge).toMatchObject({ transaction_type: 'charge', kind: 'baseline', amount_in_cents: 3000 });
    expect(payment).toMatchObject({ transaction_type: 'payment', amount_in_cents: 2000 });
  });

  it('proration.preserve_period keeps the period dates and prorates the new price', async () => {
    await twoProducts(http());
    const s = await subscribeOverHttp(http());
    http().clock.advance({ days: 15 });
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/migrations.json`,
      json: { migration: { preserve_period: false, product_handle: 'premium', proration: { preserve_period: true } } },
    });
    expect(reply.status).toBe(200);
    const migrated = reply.json<Sub>().subscription;
    expect(migrated.current_period_ends_at).toBe(s.body.current_period_ends_at);
    const [, charge] = await transactionsOverHttp(http(), s.id);
    expect(charge?.amount_in_cents).toBeLessThan(3000);
    expect(charge?.amount_in_cents).toBeGreaterThan(0);
  });

  it('T9, T10 and the other 422s: unknown product, no product, refused options, an inactive subscription', async () => {
    await twoProducts(http());
    const s = await subscribeOverHttp(http());
    const post = (path: string, json?: unknown) =>
      http().as('acme', { method: 'POST', path: `/subscriptions/${s.id}/${path}`, json });
    const invalid = await post('migrations.json', { migration: { product_handle: 'nope' } });
    expect(invalid.status).toBe(422);
    expect(invalid.json()).toEqual({ errors: ['Invalid Product'] });
    const unspecified = await post('migrations/preview.json', { migration: {} });
    expect(unspecified.status).toBe(422);
    expect(unspecified.json()).toEqual({ errors: ['Product must be specified'] });
    const noBody = await post('migrations/preview.json');
    expect(noBody.json()).toEqual({ errors: ['Product must be specified'] });
    const options = await post('migrations.json', {
      migration: { product_handle: 'premium', include_coupons: false },
    });
    expect(options.status).toBe(422);
    expect(options.json()).toEqual({
      errors: ['Include coupons: dropping coupons on a migration is not supported by this server yet.'],
    });
    const token = await post('migrations.json', { migration: { product_handle: 'premium' }, uniqueness_token: 'u' });
    expect(token.status).toBe(422);
    await http().as('acme', { method: 'DELETE', path: `/subscriptions/${s.id}.json` });
    const inactive = await post('migrations/preview.json', { migration: { product_handle: 'premium' } });
    expect(inactive.json()).toEqual({ errors: ['Subscription must be active'] });
    const missing = await http().as('acme', {
      method: 'POST',
      path: '/subscriptions/999/migrations.json',
      json: { migration: { product_handle: 'premium' } },
    });
    expect(missing.status).toBe(404);
  });
});

describe('HTTP product change through PUT /subscriptions/{id}.json', () => {
  const http = useHttpFixture();

  it('product_handle switches the product now, with no charge or credit', async () => {
    const { premiumId } = await twoProducts(http());
    const s = await subscribeOverHttp(http());
    const before = await transactionsOverHttp(http(), s.id);
    const reply = await http().as('acme', {
      method: 'PUT',
      path: `/subscriptions/${s.id}.json`,
      json: { subscription: { product_handle: 'premium' } },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({
      subscription: { product: { id: premiumId }, product_price_in_cents: 3000, next_product_id: null },
    });
    expect(await transactionsOverHttp(http(), s.id)).toEqual(before);
  });

  it('product_change_delayed schedules the change; next_product_id "" cancels it', async () => {
    const { premiumId } = await twoProducts(http());
    const s = await subscribeOverHttp(http());
    const delayed = await http().as('acme', {
      method: 'PUT',
      path: `/subscriptions/${s.id}.json`,
      json: { subscription: { product_id: premiumId, product_change_delayed: 'true' } },
    });
    expect(delayed.status).toBe(200);
    expect(delayed.json()).toMatchObject({ subscription: { product: { handle: 'pro' }, next_product_id: premiumId } });
    const cancelled = await http().as('acme', {
      method: 'PUT',
      path: `/subscriptions/${s.id}.json`,
      json: { subscription: { next_product_id: '' } },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.json()).toMatchObject({ subscription: { product: { handle: 'pro' }, next_product_id: null } });
    const scheduled = await http().as('acme', {
      method: 'PUT',
      path: `/subscriptions/${s.id}.json`,
      json: { subscription: { next_product_id: String(premiumId) } },
    });
    expect(scheduled.json()).toMatchObject({ subscription: { next_product_id: premiumId } });
  });

  it('422 for an unknown product, the current product, or a delayed change without a product', async () => {
    await twoProducts(http());
    const s = await subscribeOverHttp(http());
    const put = (subscription: Record<string, unknown>) =>
      http().as('acme', { method: 'PUT', path: `/subscriptions/${s.id}.json`, json: { subscription } });
    const unknown = await put({ product_handle: 'nope' });
    expect(unknown.status).toBe(422);
    expect(unknown.json()).toEqual({ errors: ["Product with API Handle 'nope' does not exist for this site."] });
    const unknownId = await put({ product_id: 999 });
    expect(unknownId.json()).toEqual({ errors: ["Product with id '999' does not exist for this site."] });
    const same = await put({ product_handle: 'pro' });
    expect(same.status).toBe(422);
    expect(same.json()).toEqual({ errors: ['Product: the subscription is already on this product.'] });
    const alone = await put({ product_change_delayed: true });
    expect(alone.json()).toEqual({
      errors: ['Product change delayed: needs a product_handle or product_id to change to.'],
    });
    const both = await put({ product_handle: 'premium', next_product_id: '' });
    expect(both.json()).toEqual({ errors: ['Next product id: cannot be combined with product_handle or product_id.'] });
    const missing = await http().as('acme', {
      method: 'PUT',
      path: '/subscriptions/999.json',
      json: { subscription: { product_handle: 'premium' } },
    });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ errors: ['Subscription 999 not found.'] });
  });
});

describe('HTTP signup extras: snap_day', () => {
  const http = useHttpFixture();

  it('snap_day renews on that day at noon in the site zone, "end" on the last day of the month', async () => {
    await seedCatalog(http().engine);
    const first = await subscribeOverHttp(http(), { snap_day: '1' });
    expect(first.body.next_assessment_at).toBe('2026-02-01T12:00:00-05:00');
    const end = await subscribeOverHttp(http(), {
      snap_day: 'end',
      customer_attributes: { first_name: 'B', last_name: 'C', email: 'b@c.co' },
    });
    expect(end.body.next_assessment_at).toBe('2026-01-31T12:00:00-05:00');
    // The first, shorter period is prorated.
    expect(Number(end.body.signup_revenue)).toBeLessThan(10);
  });

  it('422 for a day outside 1-28 or a word other than end', async () => {
    await seedCatalog(http().engine);
    const body = signupBody() as { subscription: Record<string, unknown> };
    for (const snap of [29, 'soon']) {
      const reply = await http().as('acme', {
        method: 'POST',
        path: '/subscriptions.json',
        json: { subscription: { ...body.subscription, snap_day: snap } },
      });
      expect(reply.status, String(snap)).toBe(422);
      expect(reply.json(), String(snap)).toEqual({ errors: ["Snap day: must be a number between 1 and 28 or 'end'."] });
    }
  });
});
