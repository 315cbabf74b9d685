import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';

// Field names the routes read, so that generated bodies reach the schemas and the engine, not just the wrapper check.
const SIGNUP_KEYS = [
  'product_handle',
  'product_id',
  'customer_id',
  'customer_attributes',
  'credit_card_attributes',
  'next_billing_at',
  'coupon_code',
];
const CARD_KEYS = ['full_number', 'expiration_month', 'expiration_year', 'cvv', 'first_name', 'last_name'];
const CUSTOMER_KEYS = ['first_name', 'last_name', 'email', 'reference', 'organization', 'zip'];
const PRODUCT_KEYS = [
  'name',
  'handle',
  'price_in_cents',
  'interval',
  'interval_unit',
  'trial_interval',
  'trial_price_in_cents',
  'taxable',
];

const fields = (keys: string[], value: fc.Arbitrary<unknown> = fc.jsonValue()) =>
  fc.dictionary(fc.constantFrom(...keys), value);
const nearValid = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    'pro',
    '4111111111111111',
    '2',
    '12',
    '2030',
    'a@b.co',
    '2026-02-01',
    'not-a-date',
    '1e3',
    '-5',
    '',
    ' ',
    0,
    -1,
    1.5,
    2 ** 60,
  ),
);

describe('HTTP: bad input is never a 500', () => {
  const http = useHttpFixture({ rateLimit: false });

  it('POST /subscriptions.json with generated bodies answers 201, 404 or 422', async () => {
    await seedCatalog(http().engine);
    const subscription = fc.oneof(
      fc.jsonValue(),
      fields(SIGNUP_KEYS, nearValid).chain((s) =>
        fc
          .record({
            customer_attributes: fields(CUSTOMER_KEYS, nearValid),
            credit_card_attributes: fields(CARD_KEYS, nearValid),
          })
          .map((nested) => ({ ...s, ...nested })),
      ),
    );
    await fc.assert(
      fc.asyncProperty(subscription, async (s) => {
        const reply = await http().as('acme', {
          method: 'POST',
          path: '/subscriptions.json',
          json: { subscription: s },
        });
        expect([201, 404, 422], reply.text).toContain(reply.status);
        expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
      }),
      { numRuns: 80 },
    );
    expect(http().logged).toEqual([]);
  });

  it('product and customer writes with generated bodies answer 2xx, 404 or 422', async () => {
    const { familyId, productId } = await seedCatalog(http().engine);
    await fc.assert(
      fc.asyncProperty(fields(PRODUCT_KEYS, nearValid), fields(CUSTOMER_KEYS, nearValid), async (product, customer) => {
        const replies = await Promise.all([
          http().as('acme', { method: 'PUT', path: `/products/${productId}.json`, json: { product } }),
          http().as('acme', { method: 'POST', path: `/product_families/${familyId}/products.json`, json: { product } }),
          http().as('acme', { method: 'POST', path: '/customers.json', json: { customer } }),
          http().as('acme', { method: 'POST', path: '/product_families.json', json: { product_family: product } }),
        ]);
        for (const reply of replies) expect([200, 201, 404, 422], reply.text).toContain(reply.status);
      }),
      { numRuns: 60 },
    );
    expect(http().logged).toEqual([]);
  });

  it('arbitrary bytes as a body answer 400 or 422', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 200 }), async (body) => {
        const reply = await http().as('acme', {
          method: 'POST',
          path: '/customers.json',
          body,
          headers: { 'content-type': 'application/json' },
        });
        expect([400, 422], reply.text).toContain(reply.status);
      }),
      { numRuns: 60 },
    );
  });

  it('hostile query strings on the transaction list still answer 200 with a list', async () => {
    await seedCatalog(http().engine);
    const view = await http()
      .engine.site('acme')
      .subscriptions.create({
        productHandle: 'pro',
        customer: { firstName: 'A', lastName: 'B', email: 'a@b.co' },
        creditCard: { fullNumber: '4111111111111111', expirationMonth: 1, expirationYear: 2030 },
      });
    const query = fc.oneof(
      fc.string({ maxLength: 80 }).map((q) => encodeURI(q)),
      fc
        .array(
          fc.constantFrom(
            'page=',
            'page=-1',
            'page=abc',
            'per_page=0',
            'per_page=99999',
            'kinds[]=',
            'kinds[][x]=1',
            'direction[]=asc',
            '&',
            '%',
            'a[b][c][d][e]=1',
          ),
          { maxLength: 8 },
        )
        .map((parts) => parts.join('&')),
    );
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const reply = await http().as('acme', {
          path: `/subscriptions/${view.subscription.id}/transactions.json?${q}`,
        });
        expect(reply.status, `${q}: ${reply.text}`).toBe(200);
        expect(Array.isArray(reply.json())).toBe(true);
      }),
      { numRuns: 40 },
    );
  });
});

describe('HTTP: odd paths and methods are 404s, never 500s', () => {
  const http = useHttpFixture();

  it('answers percent-encoding errors, doubled slashes, dots and unknown methods with a JSON 404', async () => {
    for (const [method, path] of [
      ['GET', '/subscriptions/%ZZ.json'],
      ['GET', '/subscriptions/%E0%A4%A.json'],
      ['GET', '//subscriptions/1.json'],
      ['GET', '/subscriptions/../customers/1.json'],
      ['GET', '/products/handle/.json'],
      ['GET', '/subscriptions/1.json.xml'],
      ['GET', '/subscriptions/-1.json'],
      ['GET', '/subscriptions/1e3.json'],
    ] as const) {
      const reply = await http().as('acme', { method, path });
      expect(reply.status, `${method} ${path}`).toBe(404);
      expect(reply.headers['content-type'], `${method} ${path}`).toBe('application/json; charset=utf-8');
    }
    expect(http().logged).toEqual([]);
  });
});
