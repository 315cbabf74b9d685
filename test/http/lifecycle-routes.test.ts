import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

type Sub = { subscription: Record<string, unknown> & { id: number } };

async function subscribe(fixture: HttpFixture, body: unknown = signupBody()): Promise<Sub['subscription']> {
  const reply = await fixture.as('acme', { method: 'POST', path: '/subscriptions.json', json: body });
  expect(reply.status).toBe(201);
  return reply.json<Sub>().subscription;
}

async function read(fixture: HttpFixture, id: number): Promise<Sub['subscription']> {
  return (await fixture.as('acme', { path: `/subscriptions/${id}.json` })).json<Sub>().subscription;
}

describe('HTTP subscription changes', () => {
  const http = useHttpFixture();

  it('PUT /subscriptions/{id}.json replaces the card', async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    const reply = await http().as('acme', {
      method: 'PUT',
      path: `/subscriptions/${s.id}.json`,
      json: {
        subscription: {
          credit_card_attributes: { full_number: '5555555555554444', expiration_month: '10', expiration_year: '2030' },
        },
      },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({
      subscription: {
        id: s.id,
        credit_card: {
          payment_type: 'credit_card',
          masked_card_number: 'XXXX-XXXX-XXXX-4444',
          card_type: 'master',
          expiration_month: 10,
        },
      },
    });
  });

  it('PUT and POST /subscriptions/{id}.json change the billing date', async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    const put = await http().as('acme', {
      method: 'PUT',
      path: `/subscriptions/${s.id}.json`,
      json: { subscription: { next_billing_at: '2026-03-01T12:00:00Z' } },
    });
    expect(put.status).toBe(200);
    expect(put.json()).toMatchObject({
      subscription: {
        next_assessment_at: '2026-03-01T07:00:00-05:00',
        current_period_ends_at: '2026-03-01T07:00:00-05:00',
      },
    });
    const post = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}.json`,
      json: { subscription: { next_billing_at: '2026-03-05T12:00:00Z' } },
    });
    expect(post.status).toBe(200);
    expect(post.json()).toMatchObject({ subscription: { next_assessment_at: '2026-03-05T07:00:00-05:00' } });
  });

  it('an update with nothing to change returns the subscription unchanged; a component change is refused', async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    const empty = await http().as('acme', {
      method: 'PUT',
      path: `/subscriptions/${s.id}.json`,
      json: { subscription: {} },
    });
    expect(empty.status).toBe(200);
    expect(empty.json<Sub>().subscription).toEqual(s);
    const product = await http().as('acme', {
      method: 'PUT',
      path: `/subscriptions/${s.id}.json`,
      json: { subscription: { components: [{ component_id: 1, allocated_quantity: 2 }] } },
    });
    expect(product.status).toBe(422);
    expect(product.json()).toEqual({ errors: ['Components: cannot be changed here by this server yet.'] });
  });

  it('GET /subscriptions.json lists newest first with state, product and paging filters', async () => {
    const { productId } = await seedCatalog(http().engine);
    const first = await subscribe(http());
    http().clock.advance({ minutes: 1 });
    const second = await subscribe(http(), {
      subscription: {
        product_handle: 'pro',
        customer_id: (first.customer as { id: number }).id,
        credit_card_attributes: { full_number: '1', expiration_month: 1, expiration_year: 2030 },
      },
    });
    await http().as('acme', { method: 'DELETE', path: `/subscriptions/${first.id}.json` });
    const ids = async (query: string) =>
      (await http().as('acme', { path: `/subscriptions.json${query}` }))
        .json<Sub[]>()
        .map((item) => item.subscription.id);
    expect(await ids('')).toEqual([second.id, first.id]);
    expect(await ids('?state=active')).toEqual([second.id]);
    expect(await ids('?state=canceled')).toEqual([first.id]);
    expect(await ids('?state[]=cancelled&state[]=active')).toEqual([second.id, first.id]);
    expect(await ids(`?product=${productId}`)).toEqual([second.id, first.id]);
    expect(await ids('?per_page=1&page=2')).toEqual([first.id]);
    expect(await ids('?direction=asc')).toEqual([first.id, second.id]);
  });

  it('GET /subscriptions.json refuses filters it cannot apply rather than ignoring them', async () => {
    const product = await http().as('acme', { path: '/subscriptions.json?product=pro' });
    expect(product.status).toBe(422);
    expect(product.json()).toEqual({ errors: ['Product: must be a numeric product id.'] });
    const coupon = await http().as('acme', { path: '/subscriptions.json?coupon=12' });
    expect(coupon.status).toBe(422);
    const state = await http().as('acme', { path: '/subscriptions.json?state=sleeping' });
    expect(state.status).toBe(422);
    expect(state.json()).toEqual({ errors: ["State: 'sleeping' is not a valid state."] });
  });
});

describe('HTTP subscription lifecycle', () => {
  const http = useHttpFixture();

  it('DELETE without a body cancels now', async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    const reply = await http().as('acme', { method: 'DELETE', path: `/subscriptions/${s.id}.json` });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({
      subscription: {
        state: 'cancelled',
        canceled_at: '2026-01-15T07:00:00-05:00',
        cancellation_method: 'merchant_api',
        next_assessment_at: null,
      },
    });
  });

  it('DELETE twice: the second answers 422 with the singular error key', async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    await http().as('acme', { method: 'DELETE', path: `/subscriptions/${s.id}.json` });
    const again = await http().as('acme', { method: 'DELETE', path: `/subscriptions/${s.id}.json` });
    expect(again.status).toBe(422);
    expect(again.json()).toEqual({ error: 'The subscription is already canceled' });
  });

  it('DELETE with cancel_at_end_of_period "1" keeps the subscription live until the period ends', async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    const reply = await http().as('acme', {
      method: 'DELETE',
      path: `/subscriptions/${s.id}.json`,
      json: { subscription: { cancel_at_end_of_period: '1', cancellation_message: 'later' } },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({
      subscription: { state: 'active', cancel_at_end_of_period: true, delayed_cancel_at: s.current_period_ends_at },
    });
  });

  it('DELETE with unwrapped fields is refused, not read as a plain cancel', async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    const reply = await http().as('acme', {
      method: 'DELETE',
      path: `/subscriptions/${s.id}.json`,
      json: { cancel_at_end_of_period: 1 },
    });
    expect(reply.status).toBe(422);
    expect((await read(http(), s.id)).state).toBe('active');
  });

  it('POST and DELETE /delayed_cancel.json set and clear the delayed cancellation with a message', async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    const set = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/delayed_cancel.json`,
      json: { subscription: { cancellation_message: 'moving' } },
    });
    expect(set.status).toBe(200);
    expect(set.json<{ message: string }>().message).toMatch(/canceled at the end/);
    expect(await read(http(), s.id)).toMatchObject({
      cancel_at_end_of_period: true,
      delayed_cancel_at: s.current_period_ends_at,
    });
    const undo = await http().as('acme', { method: 'DELETE', path: `/subscriptions/${s.id}/delayed_cancel.json` });
    expect(undo.status).toBe(200);
    expect(undo.json()).toEqual({ message: 'This subscription will no longer be canceled' });
    expect(await read(http(), s.id)).toMatchObject({ cancel_at_end_of_period: false, delayed_cancel_at: null });
  });

  it('PUT /reactivate.json brings a cancelled subscription back; resume keeps its dates', async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    await http().as('acme', { method: 'DELETE', path: `/subscriptions/${s.id}.json` });
    http().clock.advance({ days: 2 });
    const reply = await http().as('acme', {
      method: 'PUT',
      path: `/subscriptions/${s.id}/reactivate.json?resume=true`,
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({
      subscription: { state: 'active', current_period_ends_at: s.current_period_ends_at },
    });
    const active = await http().as('acme', { method: 'PUT', path: `/subscriptions/${s.id}/reactivate.json` });
    expect(active.status).toBe(422);
    expect(active.json()).toEqual({
      errors: ['Cannot reactivate a subscription that is not marked "Canceled", "Unpaid", or "Trial Ended".'],
    });
  });

  it('PUT /reactivate.json reads options from the body and refuses a bad flag', async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    await http().as('acme', { method: 'DELETE', path: `/subscriptions/${s.id}.json` });
    const bad = await http().as('acme', {
      method: 'PUT',
      path: `/subscriptions/${s.id}/reactivate.json`,
      json: { preserve_balance: 'maybe' },
    });
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual({ errors: ['Preserve balance: must be true or false.'] });
    const ok = await http().as('acme', {
      method: 'PUT',
      path: `/subscriptions/${s.id}/reactivate.json`,
      json: { preserve_balance: '1', resume: { require_resume: 'true' } },
    });
    expect(ok.status).toBe(200);
    expect(ok.json()).toMatchObject({ subscription: { state: 'active' } });
  });

  it('POST /hold.json and /resume.json put a subscription on hold and back', async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    const hold = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/hold.json`,
      json: { hold: { automatically_resume_at: '2026-01-25T12:00:00Z' } },
    });
    expect(hold.status).toBe(200);
    expect(hold.json()).toMatchObject({ subscription: { state: 'on_hold' } });
    const resume = await http().as('acme', { method: 'POST', path: `/subscriptions/${s.id}/resume.json` });
    expect(resume.status).toBe(200);
    expect(resume.json()).toMatchObject({ subscription: { state: 'active' } });
    const again = await http().as('acme', { method: 'POST', path: `/subscriptions/${s.id}/resume.json` });
    expect(again.status).toBe(422);
    expect(again.json()).toEqual({ errors: ['Only subscriptions that are on hold can be resumed.'] });
  });

  it("lifecycle routes of another site's subscription are 404s", async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    for (const [method, path] of [
      ['DELETE', `/subscriptions/${s.id}.json`],
      ['POST', `/subscriptions/${s.id}/delayed_cancel.json`],
      ['PUT', `/subscriptions/${s.id}/reactivate.json`],
      ['POST', `/subscriptions/${s.id}/hold.json`],
      ['POST', `/subscriptions/${s.id}/resume.json`],
      ['PUT', `/subscriptions/${s.id}.json`],
    ] as const) {
      const reply = await http().as('globex', {
        method,
        path,
        json: method === 'PUT' && path.endsWith(`${s.id}.json`) ? { subscription: {} } : undefined,
      });
      expect(reply.status, `${method} ${path}`).toBe(404);
    }
    expect((await read(http(), s.id)).state).toBe('active');
  });
});

describe('HTTP customers and payment profiles', () => {
  const http = useHttpFixture();

  it('GET /customers.json pages; PUT updates; DELETE removes (200 with a JSON body)', async () => {
    const site = http().engine.site('acme');
    const a = await site.customers.create({ firstName: 'A', lastName: 'One', email: 'a@example.com' });
    const b = await site.customers.create({ firstName: 'B', lastName: 'Two', email: 'b@example.com' });
    const list = await http().as('acme', { path: '/customers.json?&per_page=1&page=2&&' });
    expect(list.status).toBe(200);
    expect(list.json<{ customer: { id: number } }[]>().map((c) => c.customer.id)).toHaveLength(1);
    const all = await http().as('acme', { path: '/customers.json' });
    expect(
      all
        .json<{ customer: { id: number } }[]>()
        .map((c) => c.customer.id)
        .sort(),
    ).toEqual([a.id, b.id].sort());

    const updated = await http().as('acme', {
      method: 'PUT',
      path: `/customers/${a.id}.json`,
      json: { customer: { email: 'new@example.com', city: 'Paris' } },
    });
    expect(updated.status).toBe(200);
    expect(updated.json()).toMatchObject({
      customer: { id: a.id, email: 'new@example.com', city: 'Paris', first_name: 'A' },
    });

    const deleted = await http().as('acme', { method: 'DELETE', path: `/customers/${b.id}.json` });
    expect(deleted.status).toBe(200);
    expect(deleted.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(deleted.json()).toEqual({});
    expect((await http().as('acme', { path: `/customers/${b.id}.json` })).status).toBe(404);
  });

  it('GET /customers.json refuses a filter it cannot apply', async () => {
    const reply = await http().as('acme', { path: '/customers.json?date_field=birthday' });
    expect(reply.status).toBe(422);
  });

  it('PUT /payment_profiles/{id}.json changes the stored card and answers with payment_type', async () => {
    await seedCatalog(http().engine);
    const s = await subscribe(http());
    const profileId = (s.credit_card as { id: number }).id;
    const reply = await http().as('acme', {
      method: 'PUT',
      path: `/payment_profiles/${profileId}.json`,
      json: { payment_profile: { expiration_year: 2031, billing_city: 'Boston' } },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({
      payment_profile: {
        id: profileId,
        payment_type: 'credit_card',
        expiration_year: 2031,
        expiration_month: 12,
        billing_city: 'Boston',
        masked_card_number: 'XXXX-XXXX-XXXX-1111',
      },
    });
    expect((await read(http(), s.id)).credit_card).toMatchObject({ expiration_year: 2031 });
    expect(
      (
        await http().as('globex', {
          method: 'PUT',
          path: `/payment_profiles/${profileId}.json`,
          json: { payment_profile: {} },
        })
      ).status,
    ).toBe(404);
  });
});
