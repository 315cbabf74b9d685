import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

type CouponJson = Record<string, unknown> & { id: number; code: string };

async function createCoupon(fixture: HttpFixture, familyId: number, coupon: Record<string, unknown>) {
  const reply = await fixture.as('acme', {
    method: 'POST',
    path: `/product_families/${familyId}/coupons.json`,
    json: { coupon },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.json<{ coupon: CouponJson }>().coupon;
}

describe('HTTP coupons', () => {
  const http = useHttpFixture();

  it('POST /product_families/{id}/coupons.json creates a coupon as the SDK sends it (201, string percentage)', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/product_families/${familyId}/coupons.json`,
      json: { coupon: { name: 'Ten off', code: 'save10', description: 'ten percent', percentage: '10' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.json()).toMatchObject({
      coupon: {
        name: 'Ten off',
        code: 'SAVE10',
        description: 'ten percent',
        discount_type: 'percent',
        percentage: '10',
        amount_in_cents: null,
        product_family_id: familyId,
        product_family_name: 'Acme Projects',
        recurring: false,
        recurring_scheme: 'do_not_recur',
        allow_negative_balance: false,
        compounding_strategy: 'compound',
        archived_at: null,
        created_at: '2026-01-15T07:00:00-05:00',
      },
    });
  });

  it('POST /coupons.json takes the family in the body; amounts, end dates and limits come back typed', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const reply = await http().as('acme', {
      method: 'POST',
      path: '/coupons.json',
      json: {
        coupon: {
          name: 'Five',
          code: 'FIVE',
          amount_in_cents: '500',
          recurring: 'true',
          duration_period_count: '3',
          allow_negative_balance: 'false',
          end_date: '2026-12-31',
          conversion_limit: 100,
          product_family_id: String(familyId),
        },
      },
    });
    expect(reply.status).toBe(201);
    const coupon = reply.json<{ coupon: CouponJson }>().coupon;
    expect(coupon).toMatchObject({
      discount_type: 'amount',
      percentage: null,
      amount_in_cents: 500,
      recurring: true,
      recurring_scheme: 'recur_with_duration',
      duration_period_count: 3,
      conversion_limit: '100',
      product_family_id: familyId,
    });
    // The end date is the end of that day in the site's zone, written with its offset.
    expect(coupon.end_date).toMatch(/^2026-12-31T23:59:59(\.\d+)?-05:00$/);
  });

  it('GET /coupons.json lists a bare array, 30 a page by default', async () => {
    const { familyId } = await seedCatalog(http().engine);
    for (let n = 0; n < 32; n++) await createCoupon(http(), familyId, { name: `C${n}`, code: `C${n}`, percentage: 1 });
    const first = await http().as('acme', { path: '/coupons.json' });
    expect(first.status).toBe(200);
    const page = first.json<{ coupon: CouponJson }[]>();
    expect(page).toHaveLength(30);
    expect(page[0]?.coupon.code).toBe('C0');
    const second = await http().as('acme', { path: '/coupons.json?page=2' });
    expect(second.json<{ coupon: CouponJson }[]>().map((c) => c.coupon.code)).toEqual(['C30', 'C31']);
    const small = await http().as('acme', { path: '/coupons.json?per_page=5&page=2' });
    expect(small.json<{ coupon: CouponJson }[]>().map((c) => c.coupon.code)).toEqual(['C5', 'C6', 'C7', 'C8', 'C9']);
  });

  it('GET, PUT and DELETE /coupons/{id}.json read, change and archive a coupon', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const coupon = await createCoupon(http(), familyId, { name: 'Ten', code: 'TEN', percentage: '10' });
    const read = await http().as('acme', { path: `/coupons/${coupon.id}.json` });
    expect(read.status).toBe(200);
    expect(read.json()).toEqual({ coupon });
    const changed = await http().as('acme', {
      method: 'PUT',
      path: `/coupons/${coupon.id}.json`,
      json: { coupon: { amount_in_cents: 250, description: 'flat now' } },
    });
    expect(changed.status).toBe(200);
    expect(changed.json()).toMatchObject({
      coupon: { percentage: null, amount_in_cents: 250, discount_type: 'amount', description: 'flat now' },
    });
    http().clock.advance({ hours: 1 });
    const archived = await http().as('acme', { method: 'DELETE', path: `/coupons/${coupon.id}.json` });
    expect(archived.status).toBe(200);
    expect(archived.json()).toMatchObject({ coupon: { id: coupon.id, archived_at: '2026-01-15T08:00:00-05:00' } });
    const validate = await http().as('acme', { path: '/coupons/validate.json?code=TEN' });
    expect(validate.status).toBe(404);
    expect(validate.json()).toEqual({ errors: 'Coupon is invalid.' });
  });

  it('find and validate by code; a miss is a 404 whose errors is a string (C5)', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const coupon = await createCoupon(http(), familyId, { name: 'Ten', code: 'TEN', percentage: '10' });
    const found = await http().as('acme', { path: '/coupons/find.json?code=ten' });
    expect(found.status).toBe(200);
    expect(found.json()).toMatchObject({ coupon: { id: coupon.id, code: 'TEN' } });
    const valid = await http().as('acme', { path: `/coupons/validate.json?code=TEN&product_family_id=${familyId}` });
    expect(valid.status).toBe(200);
    expect(valid.json()).toMatchObject({ coupon: { id: coupon.id } });
    const nested = await http().as('acme', { path: `/product_families/${familyId}/coupons/validate.json?code=TEN` });
    expect(nested.json()).toMatchObject({ coupon: { id: coupon.id } });
    const byHandle = await http().as('acme', {
      path: '/product_families/handle:acme-projects/coupons/validate.json?code=TEN',
    });
    expect(byHandle.json()).toMatchObject({ coupon: { id: coupon.id } });
    for (const path of [
      '/coupons/validate.json?code=NOPE',
      '/coupons/validate.json',
      `/coupons/validate.json?code=TEN&product_family_id=${familyId + 1}`,
      '/coupons/validate.json?code=TEN&product_family_id=0',
      `/product_families/${familyId + 1}/coupons/validate.json?code=TEN`,
      '/coupons/find.json?code=NOPE',
    ]) {
      const reply = await http().as('acme', { path });
      expect(reply.status, path).toBe(404);
      expect(reply.json(), path).toEqual({ errors: 'Coupon code could not be found.' });
    }
  });

  it('422 for a coupon without a discount or with both kinds; 404 for an unknown coupon or family', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const none = await http().as('acme', {
      method: 'POST',
      path: `/product_families/${familyId}/coupons.json`,
      json: { coupon: { name: 'X', code: 'X' } },
    });
    expect(none.status).toBe(422);
    expect(none.json()).toEqual({ errors: ['Percentage or amount: one of them must be set.'] });
    const both = await http().as('acme', {
      method: 'POST',
      path: '/coupons.json',
      json: { coupon: { name: 'X', code: 'X', percentage: '5', amount_in_cents: 5 } },
    });
    expect(both.status).toBe(422);
    expect(both.json()).toEqual({ errors: ['Percentage or amount: only one of them may be set.'] });
    const flag = await http().as('acme', {
      method: 'POST',
      path: '/coupons.json',
      json: { coupon: { name: 'X', code: 'X', percentage: '5', recurring: 'maybe' } },
    });
    expect(flag.status).toBe(422);
    expect(flag.json()).toEqual({ errors: ['Recurring: must be true or false.'] });
    const taken = await http().as('acme', {
      method: 'POST',
      path: '/coupons.json',
      json: { coupon: { name: 'X', code: 'X', percentage: '5' } },
    });
    expect(taken.status).toBe(201);
    const again = await http().as('acme', {
      method: 'POST',
      path: '/coupons.json',
      json: { coupon: { name: 'Y', code: 'x', percentage: '5' } },
    });
    expect(again.status).toBe(422);
    expect(again.json()).toEqual({ errors: ['Code: must be unique - that value has been taken.'] });
    for (const [method, path] of [
      ['GET', '/coupons/999.json'],
      ['PUT', '/coupons/999.json'],
      ['DELETE', '/coupons/999.json'],
      ['POST', '/product_families/999/coupons.json'],
    ] as const) {
      const reply = await http().as('acme', {
        method,
        path,
        json: { coupon: { name: 'Z', code: 'Z', percentage: 1 } },
      });
      expect(reply.status, `${method} ${path}`).toBe(404);
    }
  });

  it('a uniqueness_token is refused on coupon writes, which cannot honour one', async () => {
    const { familyId } = await seedCatalog(http().engine);
    const reply = await http().as('acme', {
      method: 'POST',
      path: `/product_families/${familyId}/coupons.json`,
      json: { coupon: { name: 'X', code: 'X', percentage: 1 }, uniqueness_token: 't' },
    });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual({
      errors: ['Uniqueness token: is not supported on this endpoint by this server yet.'],
    });
    expect((await http().as('acme', { path: '/coupons/find.json?code=X' })).status).toBe(404);
  });
});

describe('HTTP signup with coupons', () => {
  const http = useHttpFixture();

  it('coupon_code discounts the signup and shows on the subscription; coupon_codes stack', async () => {
    const { familyId } = await seedCatalog(http().engine);
    await createCoupon(http(), familyId, { name: 'Ten', code: 'TEN', percentage: '10', stackable: true });
    await createCoupon(http(), familyId, { name: 'One', code: 'ONE', amount_in_cents: 100, stackable: true });
    const body = signupBody() as { subscription: Record<string, unknown> };
    const one = await http().as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: { subscription: { ...body.subscription, coupon_code: 'ten' } },
    });
    expect(one.status).toBe(201);
    expect(one.json()).toMatchObject({
      subscription: { coupon_code: 'TEN', coupon_codes: ['TEN'], signup_revenue: '9.00', balance_in_cents: 0 },
    });
    const two = await http().as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: {
        subscription: {
          ...body.subscription,
          customer_attributes: { first_name: 'B', last_name: 'C', email: 'b@c.co' },
          coupon_code: 'TEN',
          coupon_codes: ['ten', 'ONE'],
        },
      },
    });
    expect(two.status).toBe(201);
    expect(two.json()).toMatchObject({ subscription: { coupon_codes: ['TEN', 'ONE'] } });
  });

  it('C4: an unknown coupon_code is a 422 naming the code as sent', async () => {
    await seedCatalog(http().engine);
    const body = signupBody() as { subscription: Record<string, unknown> };
    const reply = await http().as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: { subscription: { ...body.subscription, coupon_code: 'abc' } },
    });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual({ errors: ["Coupon Code: 'abc' - Coupon code could not be found."] });
  });
});
