import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp } from './support/subscribe.js';

// Values near the valid ones, so that generated bodies reach the engine's checks, not only the wire's.
const nearValid = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom(
    '3',
    '-1',
    '1.5',
    '',
    ' ',
    'true',
    1,
    0,
    -1,
    1.5,
    2 ** 60,
    null,
    'prorated',
    'full',
    'prorate-delay-capture',
    'no-prorate',
    'https://hooks.example.com/x',
    'http://127.0.0.1/x',
    ['signup_success'],
    [1, 2],
  ),
);
const fields = (keys: readonly string[]) => fc.dictionary(fc.constantFrom(...keys), nearValid);

const ALLOCATION_KEYS = [
  'component_id',
  'quantity',
  'memo',
  'proration_upgrade_scheme',
  'proration_downgrade_scheme',
  'accrue_charge',
  'upgrade_charge',
  'downgrade_credit',
  'payment_collection_method',
  'initiate_dunning',
  'price_point_id',
];
const ENDPOINT_KEYS = ['url', 'webhook_subscriptions'];
const SIGNUP_COMPONENT_KEYS = ['component_id', 'allocated_quantity', 'quantity', 'unit_balance', 'enabled'];

describe('HTTP: bad input on the allocation, usage, webhook and call routes is never a 500', () => {
  const http = useHttpFixture({ rateLimit: false });

  it('allocation, preview, usage and signup-component writes answer 2xx, 404, 409 or 422', async () => {
    const f = http();
    const { familyId } = await seedCatalog(f.engine);
    const acme = f.engine.site('acme');
    const seats = await acme.components.create(familyId, {
      kind: 'quantity_based_component',
      name: 'Seats',
      unitName: 'seat',
      unitPrice: '5',
    });
    const calls = await acme.components.create(familyId, {
      kind: 'metered_component',
      name: 'Calls',
      unitName: 'call',
      unitPrice: '0.01',
    });
    const s = await subscribeOverHttp(f);
    const sub = `/subscriptions/${s.id}`;
    const seatPath = `${sub}/components/${seats.component.id}`;
    await fc.assert(
      fc.asyncProperty(
        fields(ALLOCATION_KEYS),
        fc.array(fields(ALLOCATION_KEYS), { maxLength: 3 }),
        fields(SIGNUP_COMPONENT_KEYS),
        nearValid,
        async (allocation, list, component, anything) => {
          // One at a time: concurrent allocations of one subscription may answer 409, which is not the point here.
          const replies = [
            await f.as('acme', { method: 'POST', path: `${seatPath}/allocations.json`, json: { allocation } }),
            await f.as('acme', { method: 'POST', path: `${sub}/allocations.json`, json: { allocations: list } }),
            await f.as('acme', {
              method: 'POST',
              path: `${sub}/allocations/preview.json`,
              json: { allocations: list, effective_proration_date: anything },
            }),
            await f.as('acme', {
              method: 'POST',
              path: `${sub}/components/${calls.component.id}/usages.json`,
              json: { usage: allocation, uniqueness_token: anything },
            }),
            await f.as('acme', {
              path: `${sub}/components/${calls.component.id}/usages.json?since_id=${encodeURIComponent(JSON.stringify(anything) ?? '')}`,
            }),
            await f.as('acme', {
              method: 'POST',
              path: '/subscriptions.json',
              json: { subscription: { product_handle: 'pro', customer_id: s.customerId, components: [component] } },
            }),
          ];
          for (const reply of replies) {
            expect([200, 201, 404, 409, 422], reply.text).toContain(reply.status);
            expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
          }
        },
      ),
      { numRuns: 30 },
    );
    expect(f.logged).toEqual([]);
  });

  it('endpoint, replay, webhook list and call reads answer 2xx, 404 or 422', async () => {
    const f = http();
    await fc.assert(
      fc.asyncProperty(fields(ENDPOINT_KEYS), nearValid, async (endpoint, anything) => {
        const text = encodeURIComponent(JSON.stringify(anything) ?? '');
        const replies = await Promise.all([
          f.as('acme', { method: 'POST', path: '/endpoints.json', json: { endpoint } }),
          f.as('acme', { method: 'PUT', path: '/endpoints/1.json', json: { endpoint } }),
          f.as('acme', { method: 'POST', path: '/webhooks/replay.json', json: { ids: anything } }),
          f.as('acme', { path: `/webhooks.json?status=${text}&since_date=${text}&page=${text}&order=${text}` }),
          f.as('acme', { path: `/calls/${text}.json` }),
        ]);
        for (const reply of replies) {
          expect([200, 201, 404, 422], reply.text).toContain(reply.status);
          expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
        }
      }),
      { numRuns: 40 },
    );
    expect(f.logged).toEqual([]);
  });
});
