import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';

/**
 * The offer routes over HTTP: status codes and shapes, `include_archived`, bad input refused with a
 * 422 in the service's `{"errors":[...]}` style changing nothing, and `offer_id` on signup.
 */

interface OfferBody {
  id: number;
  handle: string;
  product_id: number;
  product_price_point_id: number | null;
  archived_at: string | null;
  offer_items: { component_id: number; starting_quantity: string; price_point_id: number | null }[];
  offer_discounts: { coupon_code: string; coupon_id: number }[];
}

const CUSTOMER = { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' };
const CARD = { full_number: '4111111111111111', expiration_month: '12', expiration_year: '2030' };

async function seed(f: HttpFixture): Promise<{ productId: number; seatsId: number }> {
  const { familyId, productId } = await seedCatalog(f.engine);
  const acme = f.engine.site('acme');
  const seats = await acme.components.create(familyId, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '4',
  });
  await acme.coupons.create({ name: 'Ten off', code: 'TENOFF', percentage: '10', productFamilyId: familyId });
  return { productId, seatsId: seats.component.id };
}

describe('offer routes', () => {
  const fixture = useHttpFixture();

  it('creates (201), reads, lists, archives and unarchives', async () => {
    const f = fixture();
    const { productId, seatsId } = await seed(f);
    const created = await f.as('acme', {
      method: 'POST',
      path: '/offers.json',
      json: {
        offer: {
          name: 'Pro with seats',
          handle: 'pro-seats',
          product_id: String(productId),
          components: [{ component_id: seatsId, starting_quantity: '2.0' }],
          coupons: ['tenoff'],
        },
      },
    });
    expect(created.status, created.text).toBe(201);
    const offer = created.json<{ offer: OfferBody }>().offer;
    expect(offer).toMatchObject({
      handle: 'pro-seats',
      product_id: productId,
      product_price_point_id: expect.any(Number),
      archived_at: null,
      offer_items: [{ component_id: seatsId, starting_quantity: '2.0', price_point_id: expect.any(Number) }],
      offer_discounts: [{ coupon_code: 'TENOFF', coupon_id: expect.any(Number) }],
      offer_signup_pages: [],
    });

    const read = await f.as('acme', { path: `/offers/${offer.id}.json` });
    expect(read.status).toBe(200);
    expect(read.json()).toEqual({ offer });
    const list = await f.as('acme', { path: '/offers.json' });
    expect(list.json()).toEqual({ offers: [offer] });

    const archived = await f.as('acme', { method: 'PUT', path: `/offers/${offer.id}/archive.json` });
    expect(archived.status).toBe(200);
    expect(archived.json<{ offer: OfferBody }>().offer.archived_at).toEqual(expect.any(String));
    expect((await f.as('acme', { path: '/offers.json' })).json()).toEqual({ offers: [] });
    const withArchived = await f.as('acme', { path: '/offers.json?include_archived=true' });
    expect(withArchived.json<{ offers: OfferBody[] }>().offers.map((o) => o.id)).toEqual([offer.id]);
    const unarchived = await f.as('acme', { method: 'PUT', path: `/offers/${offer.id}/unarchive.json` });
    expect(unarchived.json<{ offer: OfferBody }>().offer.archived_at).toBeNull();

    expect((await f.as('acme', { path: '/offers/999999.json' })).status).toBe(404);
    expect((await f.as('acme', { method: 'PUT', path: '/offers/999999/archive.json' })).status).toBe(404);
    // Another site does not see it.
    expect((await f.as('globex', { path: `/offers/${offer.id}.json` })).status).toBe(404);
  });

  it('refuses bad input with 422 and every problem, creating nothing', async () => {
    const f = fixture();
    const { productId } = await seed(f);
    const cases: [unknown, string[]][] = [
      [{}, ['Request body: must be a JSON object with a "offer" object, like {"offer":{...}}.']],
      [
        { offer: { name: 'X', handle: 'x', product_id: 'abc', components: 'seats', coupons: [{}] } },
        [
          'Product id: must be a positive whole number.',
          'Components: must be a list of components.',
          'Coupons: must be a string.',
        ],
      ],
      [
        { offer: { handle: 'x', product_id: productId, components: [{ component_id: 999999 }] } },
        ['Name: cannot be blank.', "Component: '999999' does not exist."],
      ],
      [
        { offer: { name: 'X', handle: 'x', product_id: productId, components: [{ starting_quantity: 'many' }] } },
        ['Component: cannot be blank.'],
      ],
    ];
    for (const [json, errors] of cases) {
      const reply = await f.as('acme', { method: 'POST', path: '/offers.json', json });
      expect(reply.status, JSON.stringify(json)).toBe(422);
      expect(reply.json(), JSON.stringify(json)).toEqual({ errors });
    }
    expect((await f.as('acme', { path: '/offers.json?include_archived=true' })).json()).toEqual({ offers: [] });
  });

  it('signs up with offer_id (an id or handle:<handle>) and refuses product fields beside it', async () => {
    const f = fixture();
    const { productId, seatsId } = await seed(f);
    const created = await f.as('acme', {
      method: 'POST',
      path: '/offers.json',
      json: {
        offer: {
          name: 'Pro with seats',
          handle: 'pro-seats',
          product_id: productId,
          components: [{ component_id: seatsId, starting_quantity: 2 }],
          coupons: ['TENOFF'],
        },
      },
    });
    const offerId = created.json<{ offer: OfferBody }>().offer.id;
    const signup = (subscription: Record<string, unknown>) =>
      f.as('acme', { method: 'POST', path: '/subscriptions.json', json: { subscription } });

    const conflicting = await signup({
      offer_id: offerId,
      product_handle: 'pro',
      customer_attributes: CUSTOMER,
      credit_card_attributes: CARD,
    });
    expect(conflicting.status).toBe(422);
    expect(conflicting.json()).toEqual({
      errors: ['Product handle: cannot be given with an offer, which sets the product.'],
    });
    // A signup preview prices the offer (nothing is kept).
    const preview = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/preview.json',
      json: { subscription: { offer_id: offerId } },
    });
    expect(preview.status, preview.text).toBe(200);
    expect(
      preview.json<{ subscription_preview: { current_billing_manifest: { total_in_cents: number } } }>()
        .subscription_preview.current_billing_manifest.total_in_cents,
    ).toBe(1620);
    const blank = await signup({ offer_id: '', customer_attributes: CUSTOMER, credit_card_attributes: CARD });
    expect(blank.status).toBe(422);
    expect((await f.as('acme', { path: '/subscriptions.json' })).json()).toEqual([]);

    for (const [offer_id, email] of [
      [offerId, 'ada@example.com'],
      ['handle:pro-seats', 'grace@example.com'],
    ] as const) {
      const reply = await signup({
        offer_id,
        customer_attributes: { ...CUSTOMER, email },
        credit_card_attributes: CARD,
      });
      expect(reply.status, reply.text).toBe(201);
      const subscription = reply.json<{
        subscription: { id: number; product: { handle: string }; coupon_codes: string[] };
      }>().subscription;
      expect(subscription.product.handle).toBe('pro');
      expect(subscription.coupon_codes).toEqual(['TENOFF']);
      const components = await f.as('acme', { path: `/subscriptions/${subscription.id}/components.json` });
      const seats = components
        .json<{ component: { component_id: number; allocated_quantity: number | string } }[]>()
        .find((c) => c.component.component_id === seatsId);
      expect(Number(seats?.component.allocated_quantity)).toBe(2);
      const transactions = await f.as('acme', { path: `/subscriptions/${subscription.id}/transactions.json` });
      const payments = transactions
        .json<{ transaction: { transaction_type: string; amount_in_cents: number } }[]>()
        .filter((t) => t.transaction.transaction_type === 'payment')
        .map((t) => t.transaction.amount_in_cents);
      // 10.00 + 2 seats at 4.00 = 18.00, less 10%.
      expect(payments).toEqual([1620]);
    }
  });
});
