import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp } from './support/subscribe.js';

type ReasonCodeJson = { id: number; code: string; description: string; position: number; site_id: number };

describe('HTTP reason codes', () => {
  const http = useHttpFixture();

  it('creates, lists, reads, updates and deletes reason codes as the SDK sends them', async () => {
    const created = await http().as('acme', {
      method: 'POST',
      path: '/reason_codes.json',
      json: { reason_code: { code: 'TOO_EXPENSIVE', description: 'Too expensive', position: 5 } },
    });
    expect(created.status, created.text).toBe(201);
    const code = created.json<{ reason_code: ReasonCodeJson }>().reason_code;
    expect(code).toEqual({
      id: expect.any(Number),
      site_id: expect.any(Number),
      code: 'TOO_EXPENSIVE',
      description: 'Too expensive',
      position: 5,
      created_at: '2026-01-15T07:00:00-05:00',
      updated_at: '2026-01-15T07:00:00-05:00',
    });
    await http().as('acme', {
      method: 'POST',
      path: '/reason_codes.json',
      json: { reason_code: { code: 'FIRST', description: 'First', position: 1 } },
    });
    const list = await http().as('acme', { path: '/reason_codes.json' });
    expect(list.json<{ reason_code: ReasonCodeJson }[]>().map((r) => r.reason_code.code)).toEqual([
      'FIRST',
      'TOO_EXPENSIVE',
    ]);
    const page = await http().as('acme', { path: '/reason_codes.json?page=2&per_page=1' });
    expect(page.json<{ reason_code: ReasonCodeJson }[]>().map((r) => r.reason_code.code)).toEqual(['TOO_EXPENSIVE']);
    expect((await http().as('globex', { path: '/reason_codes.json' })).json()).toEqual([]);
    expect((await http().as('globex', { path: `/reason_codes/${code.id}.json` })).status).toBe(404);

    const read = await http().as('acme', { path: `/reason_codes/${code.id}.json` });
    expect(read.json()).toEqual(created.json());
    const updated = await http().as('acme', {
      method: 'PUT',
      path: `/reason_codes/${code.id}.json`,
      json: { reason_code: { description: 'Price' } },
    });
    expect(updated.status).toBe(200);
    expect(updated.json()).toMatchObject({ reason_code: { code: 'TOO_EXPENSIVE', description: 'Price', position: 5 } });

    const bad = await http().as('acme', {
      method: 'POST',
      path: '/reason_codes.json',
      json: { reason_code: { code: 'first', description: '' } },
    });
    expect(bad.status).toBe(422);
    // Blank fields are reported first; the code's uniqueness is checked only on an otherwise valid code.
    expect(bad.json()).toEqual({ errors: ['Description: cannot be blank.'] });
    const deleted = await http().as('acme', { method: 'DELETE', path: `/reason_codes/${code.id}.json` });
    expect(deleted.status).toBe(200);
    expect(deleted.json()).toEqual({ ok: 'ok' });
    expect((await http().as('acme', { method: 'DELETE', path: `/reason_codes/${code.id}.json` })).status).toBe(404);
  });

  it('refuses a cancellation naming a reason code the site does not have', async () => {
    await seedCatalog(http().engine);
    await http().engine.site('acme').reasonCodes.create({ code: 'CH1', description: 'Churn' });
    const s = await subscribeOverHttp(http());
    const refused = await http().as('acme', {
      method: 'DELETE',
      path: `/subscriptions/${s.id}.json`,
      json: { subscription: { cancellation_message: 'bye', reason_code: 'CH9' } },
    });
    expect(refused.status).toBe(422);
    expect(refused.json()).toEqual({ errors: ["Reason code: 'CH9' is not a reason code of this site."] });
    const ok = await http().as('acme', {
      method: 'DELETE',
      path: `/subscriptions/${s.id}.json`,
      json: { subscription: { cancellation_message: 'bye', reason_code: 'ch1' } },
    });
    expect(ok.status, ok.text).toBe(200);
  });
});

describe('HTTP coupon subcodes and usage', () => {
  const http = useHttpFixture();

  it('creates, lists, replaces and deletes subcodes; a subcode signs up with its coupon; usage per product', async () => {
    const { familyId, productId } = await seedCatalog(http().engine);
    const coupon = await http().engine.site('acme').coupons.create({
      name: 'Ten',
      code: 'SAVE10',
      percentage: '10',
      productFamilyId: familyId,
    });
    const created = await http().as('acme', {
      method: 'POST',
      path: `/coupons/${coupon.id}/codes.json`,
      json: { codes: ['20%OFF', 'friend', 'SAVE10', 'no spaces'] },
    });
    expect(created.status, created.text).toBe(200);
    expect(created.json()).toEqual({
      created_codes: ['20%OFF', 'FRIEND'],
      duplicate_codes: ['SAVE10'],
      invalid_codes: ['no spaces'],
    });
    const list = await http().as('acme', { path: `/coupons/${coupon.id}/codes.json` });
    expect(list.json()).toEqual({ codes: ['20%OFF', 'FRIEND'] });
    expect((await http().as('acme', { path: `/coupons/${coupon.id}/codes.json?page=2&per_page=1` })).json()).toEqual({
      codes: ['FRIEND'],
    });
    // The SDK percent-encodes the subcode in the path.
    const deleted = await http().as('acme', { method: 'DELETE', path: `/coupons/${coupon.id}/codes/20%25OFF.json` });
    expect(deleted.status, deleted.text).toBe(200);
    expect(
      (await http().as('acme', { method: 'DELETE', path: `/coupons/${coupon.id}/codes/20%25OFF.json` })).status,
    ).toBe(404);
    const replaced = await http().as('acme', {
      method: 'PUT',
      path: `/coupons/${coupon.id}/codes.json`,
      json: { codes: ['FRIEND', 'PARTNER'] },
    });
    expect(replaced.json()).toEqual({ created_codes: ['FRIEND', 'PARTNER'], duplicate_codes: [], invalid_codes: [] });
    const noList = await http().as('acme', {
      method: 'POST',
      path: `/coupons/${coupon.id}/codes.json`,
      json: { codes: 'X' },
    });
    expect(noList.status).toBe(422);
    expect((await http().as('globex', { path: `/coupons/${coupon.id}/codes.json` })).status).toBe(404);

    const s = await subscribeOverHttp(http(), { coupon_code: 'partner' });
    expect(s.id).toBeGreaterThan(0);
    const usage = await http().as('acme', { path: `/product_families/${familyId}/coupons/${coupon.id}/usage.json` });
    expect(usage.status, usage.text).toBe(200);
    expect(usage.json()).toEqual([
      { id: productId, name: 'Pro', signups: 1, savings: 1, savings_in_cents: 100, revenue: 9, revenue_in_cents: 900 },
    ]);
  });
});

describe('HTTP dunning cancel and renewal preview', () => {
  const http = useHttpFixture();

  it('previews the next renewal and refuses components; cancel_dunning refuses a subscription not in dunning', async () => {
    await seedCatalog(http().engine);
    const s = await subscribeOverHttp(http());
    const preview = await http().as('acme', { method: 'POST', path: `/subscriptions/${s.id}/renewals/preview.json` });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.json()).toMatchObject({
      renewal_preview: {
        next_assessment_at: '2026-02-15T07:00:00-05:00',
        subtotal_in_cents: 1000,
        total_discount_in_cents: 0,
        total_in_cents: 1000,
        existing_balance_in_cents: 0,
        total_amount_due_in_cents: 1000,
        uncalculated_taxes: false,
        line_items: [{ transaction_type: 'charge', amount_in_cents: 1000 }],
      },
    });
    const withComponents = await http().as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/renewals/preview.json`,
      json: { components: [{ component_id: 1, quantity: 2 }] },
    });
    expect(withComponents.status).toBe(422);
    const refused = await http().as('acme', { method: 'POST', path: `/subscriptions/${s.id}/cancel_dunning.json` });
    expect(refused.status).toBe(422);
    expect(refused.json()).toEqual({
      errors: ['A subscription that is active is not in dunning; there is no dunning to cancel.'],
    });
    expect(
      (await http().as('globex', { method: 'POST', path: `/subscriptions/${s.id}/cancel_dunning.json` })).status,
    ).toBe(404);
  });
});

describe('HTTP webhook settings', () => {
  const http = useHttpFixture();

  it('turns the site’s webhooks off and on, refusing a body without a boolean', async () => {
    const off = await http().as('acme', {
      method: 'PUT',
      path: '/webhooks/settings.json',
      json: { webhooks_enabled: false },
    });
    expect(off.status, off.text).toBe(200);
    expect(off.json()).toEqual({ webhooks_enabled: false });
    expect((await http().engine.sites.get('acme')).settings.webhooksEnabled).toBe(false);
    expect((await http().engine.sites.get('globex')).settings.webhooksEnabled).toBe(true);
    const on = await http().as('acme', {
      method: 'PUT',
      path: '/webhooks/settings.json',
      json: { webhooks_enabled: 'true' },
    });
    expect(on.json()).toEqual({ webhooks_enabled: true });
    const bad = await http().as('acme', {
      method: 'PUT',
      path: '/webhooks/settings.json',
      json: { webhooks_enabled: 'maybe' },
    });
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual({ errors: ['Webhooks enabled: must be true or false.'] });
    expect((await http().engine.sites.get('acme')).settings.webhooksEnabled).toBe(true);
  });
});
