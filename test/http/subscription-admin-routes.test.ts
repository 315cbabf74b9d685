import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

/**
 * `POST /subscriptions/preview.json` and `POST /subscriptions/{id}/purge.json` over HTTP: the
 * answers' shapes, the refusals in the service's `{"errors":[...]}` style, and tenancy (another
 * site's subscription is not found). The SDK drives the successes in sdk-subscription-admin.test.ts.
 */

async function subscribe(f: HttpFixture, site: 'acme' | 'globex' = 'acme') {
  await seedCatalog(f.engine, site);
  const reply = await f.as(site, { method: 'POST', path: '/subscriptions.json', json: signupBody('pro') });
  expect(reply.status, reply.text).toBe(201);
  const body = reply.json<{ subscription: { id: number; customer: { id: number } } }>();
  return { id: body.subscription.id, customerId: body.subscription.customer.id };
}

describe('signup preview and purge routes', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('answers a preview with both manifests in integer cents, and keeps nothing', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const reply = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/preview.json',
      json: { subscription: { product_handle: 'pro' } },
    });
    expect(reply.status, reply.text).toBe(200);
    const preview = reply.json<{ subscription_preview: Record<string, Record<string, unknown>> }>()
      .subscription_preview;
    expect(Object.keys(preview).sort()).toEqual(['current_billing_manifest', 'next_billing_manifest']);
    const current = preview.current_billing_manifest!;
    expect(current).toMatchObject({
      total_in_cents: 1000,
      subtotal_in_cents: 1000,
      total_discount_in_cents: 0,
      total_tax_in_cents: 0,
      existing_balance_in_cents: 0,
      period_type: 'recurring',
    });
    expect(current.line_items).toEqual([
      expect.objectContaining({
        transaction_type: 'charge',
        kind: 'baseline',
        amount_in_cents: 1000,
        product_handle: 'pro',
      }),
    ]);
    expect(preview.next_billing_manifest!.start_date).toBe(current.end_date);
    const list = await f.as('acme', { path: '/subscriptions.json' });
    expect(list.json()).toEqual([]);
  });

  it('refuses a preview without a product, or with a body that is not a signup, with a 422', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const none = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/preview.json',
      json: { subscription: {} },
    });
    expect(none.status).toBe(422);
    expect(none.json()).toEqual({ errors: ['Product: must be specified.'] });
    const wrong = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/preview.json',
      json: { subscription: { product_handle: ['pro'] } },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.json<{ errors: string[] }>().errors.length).toBeGreaterThan(0);
  });

  it('purges with the ack, refuses without it, and never reaches another site’s subscription', async () => {
    const f = fixture();
    const own = await subscribe(f, 'acme');
    const other = await subscribe(f, 'globex');
    const missing = await f.as('acme', { method: 'POST', path: `/subscriptions/${own.id}/purge.json` });
    expect(missing.status).toBe(422);
    expect(missing.json()).toEqual({ errors: ["Ack: must be given: the id of the subscription's customer."] });
    const cascade = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${own.id}/purge.json?ack=${own.customerId}&cascade[]=everything`,
    });
    expect(cascade.status).toBe(422);
    expect(cascade.json()).toEqual({ errors: ["Cascade: 'everything' is not one of customer, payment_profile."] });
    const foreign = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${other.id}/purge.json?ack=${other.customerId}`,
    });
    expect(foreign.status).toBe(404);
    expect((await f.as('globex', { path: `/subscriptions/${other.id}.json` })).status).toBe(200);
    const notAnId = await f.as('acme', { method: 'POST', path: '/subscriptions/abc/purge.json?ack=1' });
    expect(notAnId.status).toBe(404);

    const purged = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${own.id}/purge.json?ack=${own.customerId}&cascade[]=customer`,
    });
    expect(purged.status, purged.text).toBe(200);
    expect(purged.json<{ subscription: { id: number } }>().subscription.id).toBe(own.id);
    expect((await f.as('acme', { path: `/subscriptions/${own.id}.json` })).status).toBe(404);
    expect((await f.as('acme', { path: `/customers/${own.customerId}.json` })).status).toBe(404);
  });

  it('refuses a purge on a live site with a 422 that says so', async () => {
    const f = fixture();
    const own = await subscribe(f, 'acme');
    await f.engine.storage.transaction(async (tx) => {
      const site = await tx.sites.findBySubdomain('acme');
      await tx.sites.updateAtVersion(site!.id, site!.version, { mode: 'live' });
    });
    const live = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${own.id}/purge.json?ack=${own.customerId}`,
    });
    expect(live.status).toBe(422);
    expect(live.json()).toEqual({
      errors: ['Subscriptions can only be purged on a site in test mode; this site is live.'],
    });
    expect((await f.as('acme', { path: `/subscriptions/${own.id}.json` })).status).toBe(200);
  });
});
