import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp } from './support/subscribe.js';

// Values near the valid ones, so that generated bodies reach the engine's checks, not only the wire's.
const nearValid = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom('7.00', '-5', '1e3', '0.001', '', ' ', 'pro', 'TEN', 'true', '1', 0, -1, 1.5, 2 ** 60, null),
);
const fields = (keys: readonly string[]) => fc.dictionary(fc.constantFrom(...keys), nearValid);

const LEDGER_KEYS = [
  'amount',
  'amount_in_cents',
  'memo',
  'payment_id',
  'external',
  'delay_capture',
  'adjustment_method',
];
const COUPON_KEYS = ['name', 'code', 'percentage', 'amount_in_cents', 'recurring', 'end_date', 'product_family_id'];
const COMPONENT_KEYS = ['name', 'unit_name', 'handle', 'pricing_scheme', 'unit_price', 'prices'];
const MIGRATION_KEYS = ['product_handle', 'product_id', 'preserve_period', 'include_trial', 'proration_date'];

describe('HTTP: bad input on the new routes is never a 500', () => {
  const http = useHttpFixture({ rateLimit: false });

  it('ledger, note and migration writes with generated bodies answer 2xx, 404, 409 or 422', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const sub = `/subscriptions/${s.id}`;
    await fc.assert(
      fc.asyncProperty(fields(LEDGER_KEYS), fields(MIGRATION_KEYS), nearValid, async (ledger, migration, token) => {
        const replies = await Promise.all([
          http().as('acme', { method: 'POST', path: `${sub}/charges.json`, json: { charge: ledger } }),
          http().as('acme', { method: 'POST', path: `${sub}/adjustments.json`, json: { adjustment: ledger } }),
          http().as('acme', { method: 'POST', path: `${sub}/credits.json`, json: { credit: ledger } }),
          http().as('acme', { method: 'POST', path: `${sub}/payments.json`, json: { payment: ledger } }),
          http().as('acme', {
            method: 'POST',
            path: `${sub}/refunds.json`,
            json: { refund: ledger, external: ledger.external ?? null, uniqueness_token: token },
          }),
          http().as('acme', { method: 'POST', path: `${sub}/notes.json`, json: { note: ledger } }),
          http().as('acme', { method: 'POST', path: `${sub}/migrations/preview.json`, json: { migration } }),
        ]);
        for (const reply of replies) {
          expect([200, 201, 404, 409, 422], reply.text).toContain(reply.status);
          expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
        }
      }),
      { numRuns: 40 },
    );
    expect(http().logged).toEqual([]);
  });

  it('coupon, component and custom field writes with generated bodies answer 2xx, 404 or 422', async () => {
    const { familyId } = await seedCatalog(http().engine);
    await fc.assert(
      fc.asyncProperty(fields(COUPON_KEYS), fields(COMPONENT_KEYS), nearValid, async (coupon, component, anything) => {
        const replies = await Promise.all([
          http().as('acme', { method: 'POST', path: '/coupons.json', json: { coupon } }),
          http().as('acme', {
            method: 'POST',
            path: `/product_families/${familyId}/metered_components.json`,
            json: { metered_component: component },
          }),
          http().as('acme', {
            method: 'POST',
            path: '/customers/metafields.json',
            json: { metafields: [{ name: anything, input_type: anything, enum: anything, scope: anything }] },
          }),
          http().as('acme', {
            path: `/transactions.json?kinds[]=${encodeURIComponent(JSON.stringify(anything) ?? '')}&since_date=${encodeURIComponent(JSON.stringify(anything) ?? '')}`,
          }),
        ]);
        for (const reply of replies) expect([200, 201, 404, 422], reply.text).toContain(reply.status);
      }),
      { numRuns: 40 },
    );
    expect(http().logged).toEqual([]);
  });
});
