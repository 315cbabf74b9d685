import { describe, expect, it } from 'vitest';
import { seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

/** Routes of payment profiles and subscription references, as raw HTTP: bodies and statuses exactly. */
describe('payment profile and subscription reference routes', () => {
  const fixture = useHttpFixture();

  async function subscribed() {
    const f = fixture();
    await seedCatalog(f.engine);
    const reply = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
    expect(reply.status).toBe(201);
    return { f, sub: reply.json<{ subscription: { id: number; customer: { id: number } } }>().subscription };
  }

  it('creates a profile from a card without the number ever coming back, and refuses tokens and bank accounts', async () => {
    const { f, sub } = await subscribed();
    const number = '5555555555554444';
    const created = await f.as('acme', {
      method: 'POST',
      path: '/payment_profiles.json',
      json: {
        payment_profile: {
          customer_id: sub.customer.id,
          full_number: number,
          expiration_month: '4',
          expiration_year: '2031',
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.text).not.toContain(number);
    expect(created.json()).toMatchObject({
      payment_profile: {
        payment_type: 'credit_card',
        masked_card_number: 'XXXX-XXXX-XXXX-4444',
        customer_id: sub.customer.id,
      },
    });
    const declined = await f.as('acme', {
      method: 'POST',
      path: '/payment_profiles.json',
      json: {
        payment_profile: {
          customer_id: sub.customer.id,
          full_number: '4111111111111112',
          expiration_month: 4,
          expiration_year: 2031,
        },
      },
    });
    expect(declined.status).toBe(422);
    expect(declined.text).not.toContain('4111111111111112');
    expect(declined.json()).toEqual({ errors: ['Credit card number: is invalid.'] });
    const token = await f.as('acme', {
      method: 'POST',
      path: '/payment_profiles.json',
      json: { payment_profile: { customer_id: sub.customer.id, chargify_token: 'tok_abc' } },
    });
    expect(token.status).toBe(422);
    expect(token.json<{ errors: string[] }>().errors[0]).toMatch(
      /^Chargify token: this server issues no one-time tokens/,
    );
    const bank = await f.as('acme', {
      method: 'POST',
      path: '/payment_profiles.json',
      json: {
        payment_profile: { customer_id: sub.customer.id, bank_name: 'Best Bank', bank_account_number: '111111111111' },
      },
    });
    expect(bank.status).toBe(422);
    expect(bank.json<{ errors: string[] }>().errors[0]).toMatch(/^Payment type: 'bank_account' is not supported/);
    const noCustomer = await f.as('acme', {
      method: 'POST',
      path: '/payment_profiles.json',
      json: { payment_profile: { full_number: number, expiration_month: 4, expiration_year: 2031 } },
    });
    expect(noCustomer.status).toBe(404);
    // Only the signup card and the first created one exist.
    const list = await f.as('acme', { path: `/payment_profiles.json?customer_id=${sub.customer.id}` });
    expect(list.json<unknown[]>()).toHaveLength(2);
    expect((await f.as('acme', { path: '/payment_profiles.json?customer_id=abc' })).json()).toEqual([]);
    expect((await f.as('acme', { path: '/payment_profiles.json?per_page=1&page=2' })).json<unknown[]>()).toHaveLength(
      1,
    );
  });

  it('deletes: 422 for a profile in use, {} when done, 404 for another customer’s via a subscription', async () => {
    const { f, sub } = await subscribed();
    const read = await f.as('acme', { path: `/subscriptions/${sub.id}.json` });
    const profileId = read.json<{ subscription: { credit_card: { id: number } } }>().subscription.credit_card.id;
    const inUse = await f.as('acme', { method: 'DELETE', path: `/payment_profiles/${profileId}.json` });
    expect(inUse.status).toBe(422);
    expect(inUse.json()).toEqual({
      errors: [`Payment profile: is in use by subscription ${sub.id} and cannot be deleted.`],
    });
    const wrong = await f.as('acme', { method: 'DELETE', path: `/subscriptions/${sub.id}/payment_profiles/999.json` });
    expect(wrong.status).toBe(404);
    const done = await f.as('acme', {
      method: 'DELETE',
      path: `/subscriptions/${sub.id}/payment_profiles/${profileId}.json`,
    });
    expect(done.status).toBe(200);
    expect(done.json()).toEqual({});
    expect((await f.as('acme', { path: `/payment_profiles/${profileId}.json` })).status).toBe(404);
  });

  it('looks subscriptions up by reference (no longer "not supported"), and a taken reference on PUT changes nothing', async () => {
    const { f, sub } = await subscribed();
    const blank = await f.as('acme', { path: '/subscriptions/lookup.json' });
    expect(blank.status).toBe(422);
    expect(blank.json()).toEqual({ errors: ['Reference: cannot be blank.'] });
    const missing = await f.as('acme', { path: '/subscriptions/lookup.json?reference=x' });
    expect(missing.status).toBe(404);
    expect(missing.text).not.toContain('not supported');
    const set = await f.as('acme', {
      method: 'PUT',
      path: `/subscriptions/${sub.id}.json`,
      json: { subscription: { reference: 'r-1' } },
    });
    expect(set.json<{ subscription: { reference: string } }>().subscription.reference).toBe('r-1');
    const found = await f.as('acme', { path: '/subscriptions/lookup.json?reference=r-1' });
    expect(found.json<{ subscription: { id: number } }>().subscription.id).toBe(sub.id);
    // A second subscription asks for the taken reference together with a new billing date: neither is kept.
    const second = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: {
        subscription: {
          product_handle: 'pro',
          customer_id: sub.customer.id,
          credit_card_attributes: { full_number: '4111111111111111', expiration_month: 12, expiration_year: 2030 },
        },
      },
    });
    const secondId = second.json<{ subscription: { id: number; next_assessment_at: string } }>().subscription;
    const refused = await f.as('acme', {
      method: 'PUT',
      path: `/subscriptions/${secondId.id}.json`,
      json: { subscription: { reference: 'r-1', next_billing_at: '2026-06-01T00:00:00Z' } },
    });
    expect(refused.status).toBe(422);
    expect(refused.json()).toEqual({ errors: ['Reference: must be unique - that value has been taken.'] });
    const after = await f.as('acme', { path: `/subscriptions/${secondId.id}.json` });
    expect(after.json<{ subscription: { reference: null; next_assessment_at: string } }>().subscription).toMatchObject({
      reference: null,
      next_assessment_at: secondId.next_assessment_at,
    });
    const bad = await f.as('acme', {
      method: 'PUT',
      path: `/subscriptions/${secondId.id}.json`,
      json: { subscription: { reference: { x: 1 } } },
    });
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual({ errors: ['Reference: must be a string.'] });
  });
});
