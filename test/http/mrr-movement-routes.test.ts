import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';

/**
 * `GET /mrr_movements.json` over raw HTTP: the exact body of a movement as the service writes it,
 * paging (10 by default, at most 50), `direction`, `subscription_id`, the site's confinement and
 * a 422 in the service's error style for a bad query.
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

interface MovementsBody {
  mrr: {
    page: number;
    per_page: number;
    total_pages: number;
    total_entries: number;
    movements: { subscription_id: number; category: string; amount_in_cents: number }[];
  };
}

describe('MRR movement route', () => {
  const fixture = useHttpFixture();

  it('answers /mrr_movements.json with the movement, its breakouts and lines', async () => {
    const f = fixture();
    const { productId } = await seedCatalog(f.engine);
    const a = await subscribe(f, 'a@example.com');
    const reply = await f.as('acme', { path: '/mrr_movements.json' });
    expect(reply.status).toBe(200);
    // The product's default price point (a database id).
    const pricePointId = expect.any(Number);
    expect(reply.json()).toEqual({
      mrr: {
        page: 1,
        per_page: 10,
        total_pages: 1,
        total_entries: 1,
        currency: 'USD',
        currency_symbol: '$',
        movements: [
          {
            timestamp: '2026-01-15T07:00:00-05:00',
            amount_in_cents: 1000,
            amount_formatted: '$10.00',
            description: 'Ada Lovelace signed up for Pro ($10.00/mo)',
            category: 'new_business',
            breakouts: {
              plan_amount_in_cents: 1000,
              plan_amount_formatted: '$10.00',
              usage_amount_in_cents: 0,
              usage_amount_formatted: '$0.00',
            },
            line_items: [
              {
                product_id: productId,
                component_id: 0,
                price_point_id: pricePointId,
                name: 'Pro',
                mrr: 1000,
                mrr_movements: [{ amount: 1000, category: 'new_business', subscriber_delta: 1, lead_delta: 0 }],
                quantity: 1,
                prev_quantity: 0,
                recurring: true,
              },
            ],
            subscription_id: a.id,
            subscriber_name: 'Ada Lovelace',
          },
        ],
      },
    });

    await f.engine.site('acme').subscriptions.cancel(a.id, {});
    const churn = (await f.as('acme', { path: '/mrr_movements.json' })).json<{
      mrr: { movements: { category: string; description: string; amount_formatted: string }[] };
    }>().mrr.movements[0]!;
    expect(churn).toMatchObject({
      category: 'churn',
      amount_formatted: '-$10.00',
      description: 'Ada Lovelace churned from Pro ($10.00/mo)',
    });
  });

  it('pages, orders, filters by subscription and stays in its site', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    await seedCatalog(f.engine, 'globex');
    const ids: number[] = [];
    for (let k = 0; k < 12; k++) ids.push((await subscribe(f, `s${k}@example.com`)).id);
    const first = (await f.as('acme', { path: '/mrr_movements.json' })).json<MovementsBody>().mrr;
    expect(first).toMatchObject({ page: 1, per_page: 10, total_pages: 2, total_entries: 12 });
    expect(first.movements.map((m) => m.subscription_id)).toEqual(ids.slice(2).reverse());
    const asc = (
      await f.as('acme', { path: '/mrr_movements.json?direction=asc&page=2&per_page=5' })
    ).json<MovementsBody>().mrr;
    expect(asc.movements.map((m) => m.subscription_id)).toEqual(ids.slice(5, 10));
    expect((await f.as('acme', { path: '/mrr_movements.json?per_page=999' })).json<MovementsBody>().mrr.per_page).toBe(
      50,
    );
    const one = (await f.as('acme', { path: `/mrr_movements.json?subscription_id=${ids[3]}` })).json<MovementsBody>()
      .mrr;
    expect(one.movements.map((m) => m.subscription_id)).toEqual([ids[3]]);
    const other = (
      await f.as('globex', { path: `/mrr_movements.json?subscription_id=${ids[3]}` })
    ).json<MovementsBody>().mrr;
    expect(other).toMatchObject({ total_entries: 0, movements: [] });
  });

  it('refuses bad queries with a 422 in the service error style', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    for (const path of [
      '/mrr_movements.json?subscription_id=abc',
      '/mrr_movements.json?subscription_id=1,2',
      '/mrr_movements.json?direction=sideways',
      '/mrr_movements.json?per_page[]=3',
    ]) {
      const reply = await f.as('acme', { path });
      expect([path, reply.status]).toEqual([path, 422]);
      const errors = reply.json<{ errors: unknown[] }>().errors;
      expect(Array.isArray(errors) && errors.length > 0 && errors.every((e) => typeof e === 'string')).toBe(true);
    }
  });
});
