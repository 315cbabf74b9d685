import { describe, expect, it } from 'vitest';
import { seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

const OFFSET_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;

/** Every [path, value] of a JSON document. */
function leaves(value: unknown, path = '$'): [string, unknown][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => leaves(item, `${path}[${i}]`));
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).flatMap(([k, v]) => leaves(v, `${path}.${k}`));
  return [[path, value]];
}

/** Checks the JSON typing rules of real-clients §4 on a whole document. */
function expectServiceTypes(document: unknown): void {
  const all = leaves(document);
  expect(all.length).toBeGreaterThan(0);
  for (const [path, value] of all) {
    const key = path.slice(path.lastIndexOf('.') + 1);
    // Optional amounts may be null (the SDK accepts null for optional fields); present ones are integers.
    if (key.endsWith('_in_cents') && value !== null)
      expect(Number.isSafeInteger(value), `${path} = ${String(value)}`).toBe(true);
    if (key.endsWith('_at')) {
      if (value !== null) expect(value, path).toMatch(OFFSET_TIMESTAMP);
    }
    // Record ids are integers; a gateway's own transaction id is the gateway's string.
    if (key === 'id' || (key.endsWith('_id') && !key.startsWith('gateway_'))) {
      if (value !== null) expect(Number.isSafeInteger(value), `${path} = ${String(value)}`).toBe(true);
    }
  }
}

describe('HTTP JSON types', () => {
  const http = useHttpFixture();

  it('a subscription has integer cents, string timestamps in the site zone, a string signup_revenue and a typed card', async () => {
    await seedCatalog(http().engine);
    const reply = await http().as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    const doc = reply.json<{ subscription: Record<string, unknown> & { credit_card: Record<string, unknown> } }>();
    expectServiceTypes(doc);
    const s = doc.subscription;
    // 12:00Z is 07:00 in New York in January.
    expect(s.created_at).toBe('2026-01-15T07:00:00-05:00');
    expect(s.activated_at).toBe('2026-01-15T07:00:00-05:00');
    expect(s.current_period_ends_at).toBe('2026-02-15T07:00:00-05:00');
    expect(s.next_assessment_at).toBe('2026-02-15T07:00:00-05:00');
    expect(s.signup_revenue).toBe('10.00');
    expect(typeof s.balance_in_cents).toBe('number');
    expect(s.credit_card.payment_type).toBe('credit_card');
    expect(s.credit_card.masked_card_number).toBe('XXXX-XXXX-XXXX-1111');
    expect(s.cancel_at_end_of_period).toBe(false);
    expect(s.canceled_at).toBeNull();
  });

  it("timestamps carry the site's own zone: UTC is +00:00 and summer time moves the offset", async () => {
    await seedCatalog(http().engine, 'globex');
    const winter = await http().as('globex', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    expect(winter.json()).toMatchObject({
      subscription: { created_at: '2026-01-15T12:00:00+00:00', signup_revenue: '10.00' },
    });
    http().clock.set('2026-07-01T12:00:00Z');
    await seedCatalog(http().engine, 'acme');
    const summer = await http().as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    expect(summer.json()).toMatchObject({ subscription: { created_at: '2026-07-01T08:00:00-04:00' } });
  });

  it('products, families, customers and transactions follow the same rules', async () => {
    const { familyId, productId } = await seedCatalog(http().engine);
    const created = await http().as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    const id = created.json<{ subscription: { id: number; customer: { id: number } } }>().subscription;
    const documents = await Promise.all(
      [
        `/products/${productId}.json`,
        `/product_families/${familyId}.json`,
        '/product_families.json',
        `/customers/${id.customer.id}.json`,
        `/subscriptions/${id.id}/transactions.json`,
      ].map(async (path) => (await http().as('acme', { path })).json()),
    );
    for (const doc of documents) expectServiceTypes(doc);
    expect(documents[0]).toMatchObject({ product: { price_in_cents: 1000, interval_unit: 'month', interval: 1 } });
    const lines = documents[4] as { transaction: { created_at: string; type: string } }[];
    expect(lines.every((l) => l.transaction.created_at === '2026-01-15T07:00:00-05:00')).toBe(true);
  });

  it('omits credit_card when the subscription has no card', async () => {
    const { familyId } = await seedCatalog(http().engine);
    await http().engine.site('acme').catalog.createProduct(familyId, {
      name: 'Free',
      handle: 'free',
      priceInCents: 0,
      interval: 1,
      requireCreditCard: false,
    });
    const reply = await http().as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: {
        subscription: {
          product_handle: 'free',
          customer_attributes: { first_name: 'A', last_name: 'B', email: 'a@b.co' },
        },
      },
    });
    expect(reply.status).toBe(201);
    const s = reply.json<{ subscription: Record<string, unknown> }>().subscription;
    expect('credit_card' in s).toBe(false);
    expect(s.signup_revenue).toBe('0.00');
    expect(s.signup_payment_id).toBeNull();
  });
});

// Money and flag values the SDK validates as strings (real-clients §4); null where the field is optional.
const STRING_KEYS = new Set([
  'percentage',
  'conversion_limit',
  'unit_price',
  'value',
  'signup_revenue',
  'csv',
  'invoices',
  'statements',
  'portal',
]);

/** {@link expectServiceTypes} plus the string rules of money, metadata values, dates and scope flags. */
function expectNewRouteTypes(document: unknown): void {
  expectServiceTypes(document);
  for (const [path, value] of leaves(document)) {
    const key = path.slice(path.lastIndexOf('.') + 1);
    if ((STRING_KEYS.has(key) || key.endsWith('_date')) && value !== null)
      expect(typeof value, `${path} = ${String(value)}`).toBe('string');
    if (key.endsWith('_date') && value !== null) expect(value, path).toMatch(OFFSET_TIMESTAMP);
  }
}

describe('HTTP JSON types of the ledger, coupon, component, custom field, note and migration routes', () => {
  const http = useHttpFixture();

  it('every answer has integer cents and ids, string money, string timestamps with the site offset', async () => {
    const { familyId } = await seedCatalog(http().engine);
    await http().engine.site('acme').catalog.createProduct(familyId, {
      name: 'Premium',
      handle: 'premium',
      priceInCents: 3000,
      interval: 1,
    });
    await http().engine.sites.update('acme', { settings: { referralsEnabled: true } });
    const created = await http().as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    const s = created.json<{ subscription: { id: number; signup_payment_id: number; referral_code: string } }>()
      .subscription;
    const sub = `/subscriptions/${s.id}`;
    const writes: [string, string, unknown][] = [
      ['POST', `${sub}/charges.json`, { charge: { amount: '7.00', memo: 'm' } }],
      ['POST', `${sub}/adjustments.json`, { adjustment: { amount: '-1.00', memo: 'm' } }],
      ['POST', `${sub}/credits.json`, { credit: { amount: '1.00', memo: 'm' } }],
      ['POST', `${sub}/payments.json`, { payment: { amount: '1.00', memo: 'm' } }],
      ['POST', `${sub}/refunds.json`, { refund: { payment_id: s.signup_payment_id, amount: '1.00', memo: 'm' } }],
      ['POST', `${sub}/notes.json`, { note: { body: 'n', sticky: true } }],
      ['POST', `/product_families/${familyId}/coupons.json`, { coupon: { name: 'C', code: 'C', percentage: 12.5 } }],
      ['POST', '/coupons.json', { coupon: { name: 'D', code: 'D', amount: '2.50', conversion_limit: '5' } }],
      [
        'POST',
        `/product_families/${familyId}/quantity_based_components.json`,
        { quantity_based_component: { name: 'Seats', unit_name: 'seat', unit_price: 5 } },
      ],
      ['POST', '/subscriptions/metafields.json', { metafields: { name: 'color', scope: { csv: 1 } } }],
      ['POST', `${sub}/metadata.json`, { metadata: { name: 'color', value: 7 } }],
      ['POST', `${sub}/migrations/preview.json`, { migration: { product_handle: 'premium' } }],
    ];
    const documents: unknown[] = [];
    for (const [method, path, json] of writes) {
      const reply = await http().as('acme', { method, path, json });
      expect(reply.status, `${method} ${path}: ${reply.text}`).toBeLessThan(300);
      documents.push(reply.json());
    }
    for (const path of [
      '/transactions.json',
      `${sub}/transactions.json`,
      `${sub}/notes.json`,
      '/coupons.json',
      `/product_families/${familyId}/components.json`,
      '/subscriptions/metafields.json',
      `${sub}/metadata.json`,
      `/referral_codes/validate.json?code=${s.referral_code}`,
      `/product_families/${familyId}/products.json`,
      `${sub}.json`,
    ]) {
      const reply = await http().as('acme', { path });
      expect(reply.status, path).toBe(200);
      documents.push(reply.json());
    }
    for (const doc of documents) expectNewRouteTypes(doc);
    const [charge, , , , , , percent, amount, component, , metadata, preview] = documents;
    expect(charge).toMatchObject({ charge: { amount_in_cents: 700, created_at: '2026-01-15T07:00:00-05:00' } });
    expect(percent).toMatchObject({ coupon: { percentage: '12.5' } });
    expect(amount).toMatchObject({ coupon: { amount_in_cents: 250, conversion_limit: '5' } });
    expect(component).toMatchObject({ component: { unit_price: '5.00', prices: [{ unit_price: '5.00' }] } });
    expect(metadata).toMatchObject([{ value: '7' }]);
    expect(preview).toMatchObject({ migration: { charge_in_cents: 3000 } });
  });
});
