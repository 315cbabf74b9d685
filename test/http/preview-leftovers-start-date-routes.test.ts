import { describe, expect, it } from 'vitest';
import { seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

/**
 * `PUT /subscriptions/{id}.json` with `next_billing_at` on a delayed signup (`awaiting_signup`):
 * it moves the start; a date at or after the subscription's expiration is a 422 in the service's
 * `{"errors":[...]}` style. Timestamps are in the site's zone (New York).
 */

type SubscriptionBody = {
  subscription: { id: number; state: string; next_assessment_at: string | null; current_period_ends_at: string | null };
};

describe('preview leftovers: billing-date changes of a delayed signup', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('moves the start of an awaiting subscription, and the start happens then', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const body = signupBody('pro') as { subscription: Record<string, unknown> };
    const created = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: {
        subscription: {
          ...body.subscription,
          initial_billing_at: '2026-02-01T09:00:00-05:00',
          expires_at: '2026-06-01T09:00:00-05:00',
        },
      },
    });
    expect(created.status, created.text).toBe(201);
    const { id } = created.json<SubscriptionBody>().subscription;

    const moved = await f.as('acme', {
      method: 'PUT',
      path: `/subscriptions/${id}.json`,
      json: { subscription: { next_billing_at: '2026-02-10T09:00:00-05:00' } },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.json<SubscriptionBody>().subscription).toMatchObject({
      state: 'awaiting_signup',
      next_assessment_at: '2026-02-10T09:00:00-05:00',
      current_period_ends_at: '2026-02-10T09:00:00-05:00',
    });

    const refused = await f.as('acme', {
      method: 'PUT',
      path: `/subscriptions/${id}.json`,
      json: { subscription: { next_billing_at: '2026-07-01T09:00:00-04:00' } },
    });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json<{ errors: string[] }>().errors).toEqual([
      'Next billing at: must be before the subscription expires (2026-06-01T14:00:00.000Z).',
    ]);

    f.clock.set('2026-02-01T14:00:00Z');
    await f.engine.runDue();
    expect(f.gateway.chargeCalls).toBe(0);
    f.clock.set('2026-02-10T14:00:00Z');
    await f.engine.runDue();
    const read = await f.as('acme', { path: `/subscriptions/${id}.json` });
    expect(read.json<SubscriptionBody>().subscription).toMatchObject({
      state: 'active',
      current_period_ends_at: '2026-03-10T09:00:00-04:00',
    });
    expect(f.gateway.chargeCalls).toBe(1);
  });
});
