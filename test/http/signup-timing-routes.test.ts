import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

/**
 * `POST /subscriptions.json` with `initial_billing_at` (a delayed signup), `expires_at` and
 * `payment_profile_id` over HTTP: the answers (timestamps in the site's zone, New York), the
 * start by due work, and the refusals in the service's `{"errors":[...]}` style.
 */

type SubscriptionBody = {
  subscription: {
    id: number;
    state: string;
    balance_in_cents: number;
    next_assessment_at: string | null;
    current_period_started_at: string | null;
    current_period_ends_at: string | null;
    activated_at: string | null;
    expires_at: string | null;
    customer: { id: number };
    credit_card?: { id: number };
  };
};

function signup(f: HttpFixture, extra: Record<string, unknown>, base = signupBody('pro')) {
  const body = base as { subscription: Record<string, unknown> };
  return f.as('acme', {
    method: 'POST',
    path: '/subscriptions.json',
    json: { subscription: { ...body.subscription, ...extra } },
  });
}

describe('signup timing routes', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('a delayed signup answers awaiting_signup, charges nothing, and is started by due work', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const reply = await signup(f, { initial_billing_at: '2026-02-01T09:00:00-05:00' });
    expect(reply.status, reply.text).toBe(201);
    const created = reply.json<SubscriptionBody>().subscription;
    expect(created).toMatchObject({
      state: 'awaiting_signup',
      balance_in_cents: 0,
      activated_at: null,
      next_assessment_at: '2026-02-01T09:00:00-05:00',
      current_period_ends_at: '2026-02-01T09:00:00-05:00',
    });
    expect(created.credit_card).toBeDefined();
    expect(f.gateway.chargeCalls).toBe(0);

    f.clock.set('2026-02-01T14:00:00Z');
    await f.engine.runDue();
    const read = await f.as('acme', { path: `/subscriptions/${created.id}.json` });
    expect(read.json<SubscriptionBody>().subscription).toMatchObject({
      state: 'active',
      balance_in_cents: 0,
      activated_at: '2026-02-01T09:00:00-05:00',
      current_period_started_at: '2026-02-01T09:00:00-05:00',
      current_period_ends_at: '2026-03-01T09:00:00-05:00',
    });
    expect(f.gateway.chargeCalls).toBe(1);
  });

  it('an awaiting subscription is canceled by DELETE', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const created = (await signup(f, { initial_billing_at: '2026-02-01' })).json<SubscriptionBody>().subscription;
    const reply = await f.as('acme', { method: 'DELETE', path: `/subscriptions/${created.id}.json` });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json<SubscriptionBody>().subscription.state).toBe('canceled');
    f.clock.set('2026-03-01T00:00:00Z');
    await f.engine.runDue();
    expect(f.gateway.chargeCalls).toBe(0);
  });

  it('shows expires_at in the site zone and expires the subscription then', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const reply = await signup(f, { expires_at: '2026-02-10T12:00:00Z' });
    expect(reply.status, reply.text).toBe(201);
    const created = reply.json<SubscriptionBody>().subscription;
    expect(created.expires_at).toBe('2026-02-10T07:00:00-05:00');
    f.clock.set('2026-02-10T12:00:00Z');
    await f.engine.runDue();
    const read = await f.as('acme', { path: `/subscriptions/${created.id}.json` });
    expect(read.json<SubscriptionBody>().subscription).toMatchObject({ state: 'expired', next_assessment_at: null });
  });

  it('pays with payment_profile_id of the customer', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const first = (await signup(f, {})).json<SubscriptionBody>().subscription;
    const profileId = first.credit_card!.id;
    const reply = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: { subscription: { product_handle: 'pro', customer_id: first.customer.id, payment_profile_id: profileId } },
    });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json<SubscriptionBody>().subscription).toMatchObject({
      state: 'active',
      balance_in_cents: 0,
      credit_card: expect.objectContaining({ id: profileId }),
      customer: expect.objectContaining({ id: first.customer.id }),
    });
    expect(f.gateway.chargeCalls).toBe(2);
  });

  it('refuses bad input with 422s and creates nothing', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const first = (await signup(f, {})).json<SubscriptionBody>().subscription;
    const cases: { subscription: Record<string, unknown>; errors: string[] }[] = [
      {
        subscription: { product_handle: 'pro', customer_id: first.customer.id, payment_profile_id: 424242 },
        errors: ["Payment profile with id '424242' does not exist for this site."],
      },
      {
        subscription: { product_handle: 'pro', customer_id: first.customer.id, payment_profile_id: 'abc' },
        errors: ['Payment profile id: must be a positive whole number.'],
      },
      {
        subscription: {
          ...(signupBody('pro') as { subscription: Record<string, unknown> }).subscription,
          customer_attributes: undefined,
          customer_id: first.customer.id,
          payment_profile_id: first.credit_card!.id,
        },
        errors: [
          'Payment profile id: cannot be given together with credit card attributes or payment profile attributes.',
        ],
      },
      {
        subscription: { product_handle: 'pro', customer_id: first.customer.id, initial_billing_at: 'tomorrow' },
        errors: ['Initial billing at: is not a valid date.'],
      },
      {
        subscription: { product_handle: 'pro', customer_id: first.customer.id, expires_at: '2025-01-01' },
        errors: ['Expires at: must be in the future.'],
      },
    ];
    for (const c of cases) {
      const reply = await f.as('acme', {
        method: 'POST',
        path: '/subscriptions.json',
        json: { subscription: c.subscription },
      });
      expect(reply.status, reply.text).toBe(422);
      expect(reply.json()).toEqual({ errors: c.errors });
    }
    const list = await f.as('acme', { path: '/subscriptions.json' });
    expect(list.json<unknown[]>()).toHaveLength(1);
    expect(f.gateway.chargeCalls).toBe(1);
  });

  it('previews a delayed signup: its current manifest is what the start bills, the next one the renewal after', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const reply = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/preview.json',
      json: { subscription: { product_handle: 'pro', initial_billing_at: '2026-02-01T09:00:00-05:00' } },
    });
    expect(reply.status, reply.text).toBe(200);
    const preview = reply.json<{ subscription_preview: Record<string, Record<string, unknown>> }>()
      .subscription_preview;
    // The current manifest is the start at initial_billing_at (nothing is charged at signup).
    expect(preview.current_billing_manifest).toMatchObject({
      total_in_cents: 1000,
      start_date: '2026-02-01T09:00:00-05:00',
      end_date: '2026-03-01T09:00:00-05:00',
    });
    // The next manifest is the renewal after it.
    expect(preview.next_billing_manifest).toMatchObject({
      total_in_cents: 1000,
      start_date: '2026-03-01T09:00:00-05:00',
    });
    expect(f.gateway.chargeCalls).toBe(0);
  });
});
