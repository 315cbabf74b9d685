import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';

/**
 * The report routes over raw HTTP: exact bodies, the `/customers/metadata.json` path winning over
 * `/customers/{id}.json`, and every bad query answered with a 422 in the service's error style.
 */

const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

async function subscribe(f: HttpFixture, email: string) {
  return (
    await f.engine.site('acme').subscriptions.create({
      productHandle: 'pro',
      customer: { firstName: 'Ada', lastName: 'Lovelace', email },
      creditCard: VISA,
    })
  ).subscription;
}

describe('report routes', () => {
  const fixture = useHttpFixture();

  it('answers /stats.json, /mrr.json and /subscriptions_mrr.json with exact bodies', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const a = await subscribe(f, 'a@example.com');
    const b = await subscribe(f, 'b@example.com');
    await f.engine.site('acme').subscriptions.cancel(b.id, {});
    // 1234.56 received: the thousands are grouped in the formatted amount.
    await f.engine.site('acme').ledger.recordExternalPayment(a.id, { amountInCents: 123_456, memo: 'Wire' });

    const stats = await f.as('acme', { path: '/stats.json' });
    expect(stats.status).toBe(200);
    expect(stats.json()).toEqual({
      seller_name: f.sites.acme.site.name,
      site_name: f.sites.acme.site.name,
      site_id: f.sites.acme.site.id,
      site_currency: 'USD',
      stats: {
        total_subscriptions: 2,
        subscriptions_today: 2,
        total_revenue: '$1,254.56',
        revenue_today: '$1,254.56',
        revenue_this_month: '$1,254.56',
        revenue_this_year: '$1,254.56',
        total_canceled_subscriptions: 1,
        total_active_subscriptions: 1,
        total_past_due_subscriptions: 0,
        total_unpaid_subscriptions: 0,
        total_dunning_subscriptions: 0,
      },
    });

    const mrr = await f.as('acme', { path: '/mrr.json' });
    expect(mrr.json()).toEqual({
      mrr: {
        amount_in_cents: 1000,
        amount_formatted: '$10.00',
        currency: 'USD',
        currency_symbol: '$',
        breakouts: {
          plan_amount_in_cents: 1000,
          plan_amount_formatted: '$10.00',
          usage_amount_in_cents: 0,
          usage_amount_formatted: '$0.00',
        },
        at_time: '2026-01-15T07:00:00-05:00',
      },
    });

    const list = await f.as('acme', { path: `/subscriptions_mrr.json?filter[subscription_ids]=${a.id},${b.id}` });
    expect(list.json()).toEqual({
      subscriptions_mrr: [
        {
          subscription_id: a.id,
          mrr_amount_in_cents: 1000,
          breakouts: { plan_amount_in_cents: 1000, usage_amount_in_cents: 0 },
        },
      ],
    });
  });

  it('serves /customers/metadata.json and /subscriptions/metadata.json before the {id}.json routes', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const a = await subscribe(f, 'a@example.com');
    const acme = f.engine.site('acme');
    await acme.metafields.createFields('customers', { name: 'tier' });
    await acme.metafields.setMetadata('customers', a.customerId, [{ name: 'tier', value: 'gold' }]);
    const customers = await f.as('acme', { path: '/customers/metadata.json?resource_ids[]=' + a.customerId });
    expect(customers.status).toBe(200);
    const body = customers.json<{ metadata: { resource_id: number; value: string }[] }>();
    expect(body).toMatchObject({ total_count: 1, current_page: 1, total_pages: 1, per_page: 20 });
    expect(body.metadata.map((m) => [m.resource_id, m.value])).toEqual([[a.customerId, 'gold']]);
    const subscriptions = await f.as('acme', { path: '/subscriptions/metadata.json?per_page=999' });
    expect(subscriptions.json()).toEqual({
      total_count: 0,
      current_page: 1,
      total_pages: 0,
      per_page: 200,
      metadata: [],
    });
    // The per-record routes still answer for an id.
    expect((await f.as('acme', { path: `/customers/${a.customerId}/metadata.json` })).status).toBe(200);
    expect((await f.as('acme', { path: `/customers/${a.customerId}.json` })).status).toBe(200);
  });

  it('refuses bad queries with a 422 in the service error style', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    await subscribe(f, 'a@example.com');
    const refused = [
      '/mrr.json?at_time=garbage',
      '/mrr.json?at_time=2026-01-01T00:00:00Z',
      '/mrr.json?subscription_id=abc',
      '/mrr.json?subscription_id=1,2',
      '/subscriptions_mrr.json?filter[subscription_ids]=x',
      '/subscriptions_mrr.json?direction=sideways',
      '/subscriptions_mrr.json?at_time[]=2026-01-15',
      '/customers/metadata.json?date_field=deleted_at',
      '/customers/metadata.json?start_date=2026-02-30',
      '/customers/metadata.json?with_deleted=maybe',
      '/subscriptions/metadata.json?resource_ids[]=-4',
      '/subscriptions_components.json?price_point_ids=not_null',
      '/subscriptions_components.json?include=subscription',
      '/subscriptions_components.json?filter[use_site_exchange_rate]=true',
      '/subscriptions_components.json?filter[subscription][states]=gone',
      '/subscriptions_components.json?filter[subscription][date_field]=updated_at',
      '/subscriptions_components.json?sort=name',
      '/subscriptions_components.json?date_field=created_at',
      '/subscriptions_components.json?end_datetime=soon',
    ];
    for (const path of refused) {
      const reply = await f.as('acme', { path });
      expect([path, reply.status]).toEqual([path, 422]);
      const errors = reply.json<{ errors: unknown[] }>().errors;
      expect(Array.isArray(errors) && errors.length > 0 && errors.every((e) => typeof e === 'string')).toBe(true);
    }
    // MRR movements are served (see mrr-movement-routes.test.ts).
    expect((await f.as('acme', { path: '/mrr_movements.json' })).status).toBe(200);
    expect((await f.as('acme', { path: '/stats.json', key: null })).status).toBe(401);
  });
});
