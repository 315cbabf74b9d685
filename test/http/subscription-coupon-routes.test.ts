import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

type Sub = { subscription: Record<string, unknown> & { id: number; coupon_codes: string[] } };

/** A subscription to `pro` (10.00 a month) and coupons of its family: HALF and TENTH stack, SOLO does not. */
async function setup(f: HttpFixture): Promise<Sub['subscription']> {
  const { familyId } = await seedCatalog(f.engine);
  const acme = f.engine.site('acme');
  for (const [code, percentage, stackable] of [
    ['HALF', '50', true],
    ['TENTH', '10', true],
    ['SOLO', '5', false],
  ] as const) {
    await acme.coupons.create({ name: code, code, percentage, recurring: true, stackable, productFamilyId: familyId });
  }
  const reply = await f.as('acme', { method: 'POST', path: '/subscriptions.json', json: signupBody() });
  expect(reply.status).toBe(201);
  return reply.json<Sub>().subscription;
}

const transactions = async (f: HttpFixture, id: number) =>
  (await f.as('acme', { path: `/subscriptions/${id}/transactions.json` })).json<unknown[]>();

describe('HTTP subscription coupons', () => {
  const http = useHttpFixture();

  it('POST /add_coupon.json with {codes} adds to the coupons and answers the subscription', async () => {
    const f = http();
    const s = await setup(f);
    const before = await transactions(f, s.id);
    const reply = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/add_coupon.json`,
      json: { codes: ['half'] },
    });
    expect(reply.status).toBe(200);
    expect(reply.json()).toMatchObject({
      subscription: { id: s.id, coupon_code: 'HALF', coupon_codes: ['HALF'], balance_in_cents: 0 },
    });
    const more = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/add_coupon.json`,
      json: { codes: ['TENTH'] },
    });
    expect(more.json<Sub>().subscription.coupon_codes).toEqual(['HALF', 'TENTH']);
    // Nothing is billed now: the coupons discount from the next renewal.
    expect(await transactions(f, s.id)).toEqual(before);
  });

  it('the ?code= query form replaces every coupon', async () => {
    const f = http();
    const s = await setup(f);
    await f.as('acme', { method: 'POST', path: `/subscriptions/${s.id}/add_coupon.json`, json: { codes: ['HALF'] } });
    const reply = await f.as('acme', { method: 'POST', path: `/subscriptions/${s.id}/add_coupon.json?code=TENTH` });
    expect(reply.status).toBe(200);
    expect(reply.json<Sub>().subscription.coupon_codes).toEqual(['TENTH']);
  });

  it('refuses bad codes with a 422 in the service style and changes nothing', async () => {
    const f = http();
    const s = await setup(f);
    await f.as('acme', { method: 'POST', path: `/subscriptions/${s.id}/add_coupon.json`, json: { codes: ['HALF'] } });
    const cases: [unknown, string[]][] = [
      [{ codes: ['NOPE'] }, ["Coupon Codes: 'NOPE' - Coupon code could not be found."]],
      [{ codes: ['HALF'] }, ["Coupon Codes: 'HALF' - Coupon is already applied to this subscription."]],
      [{ codes: ['SOLO'] }, ["Coupon Codes: 'SOLO' - That coupon is not stackable"]],
      [{ codes: ['TENTH', 'NOPE'] }, ["Coupon Codes: 'NOPE' - Coupon code could not be found."]],
      [{ codes: [] }, ['Coupon Codes: cannot be blank.']],
      [{ codes: [7] }, ['Coupon Codes: cannot be blank.']],
      [{}, ['Coupon Codes: cannot be blank.']],
      [['HALF'], ['Coupon Codes: the body must be an object with a list of codes.']],
    ];
    for (const [json, errors] of cases) {
      const reply = await f.as('acme', { method: 'POST', path: `/subscriptions/${s.id}/add_coupon.json`, json });
      expect([reply.status, reply.json()]).toEqual([422, { errors }]);
    }
    const read = await f.as('acme', { path: `/subscriptions/${s.id}.json` });
    expect(read.json<Sub>().subscription.coupon_codes).toEqual(['HALF']);
    const missing = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions/999999/add_coupon.json',
      json: { codes: ['HALF'] },
    });
    expect(missing.status).toBe(404);
  });

  it('DELETE /remove_coupon.json removes a coupon and answers the service’s string', async () => {
    const f = http();
    const s = await setup(f);
    await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/add_coupon.json`,
      json: { codes: ['HALF', 'TENTH'] },
    });
    const several = await f.as('acme', { method: 'DELETE', path: `/subscriptions/${s.id}/remove_coupon.json` });
    expect(several.status).toBe(422);
    const wrong = await f.as('acme', {
      method: 'DELETE',
      path: `/subscriptions/${s.id}/remove_coupon.json?coupon_code=SOLO`,
    });
    expect([wrong.status, wrong.json()]).toEqual([
      422,
      { errors: ["Coupon code: 'SOLO' is not applied to this subscription."] },
    ]);
    const removed = await f.as('acme', {
      method: 'DELETE',
      path: `/subscriptions/${s.id}/remove_coupon.json?coupon_code=half`,
    });
    expect([removed.status, removed.text]).toEqual([200, 'Coupon successfully removed']);
    const last = await f.as('acme', { method: 'DELETE', path: `/subscriptions/${s.id}/remove_coupon.json` });
    expect(last.status).toBe(200);
    const none = await f.as('acme', { method: 'DELETE', path: `/subscriptions/${s.id}/remove_coupon.json` });
    expect([none.status, none.json()]).toEqual([422, { errors: ["There's no coupon applied to this subscription"] }]);
    const read = await f.as('acme', { path: `/subscriptions/${s.id}.json` });
    expect(read.json<Sub>().subscription.coupon_codes).toEqual([]);
  });

  it('a subscription of another site is not found', async () => {
    const f = http();
    const s = await setup(f);
    const reply = await f.as('globex', {
      method: 'POST',
      path: `/subscriptions/${s.id}/add_coupon.json`,
      json: { codes: ['HALF'] },
    });
    expect(reply.status).toBe(404);
  });
});
