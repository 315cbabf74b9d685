import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp, transactionsOverHttp } from './support/subscribe.js';

const http = useHttpFixture();

/** Acme's catalog with a seat (5.00 each), an on/off support (20.00) and a metered API call (0.01) component. */
async function components(f: HttpFixture) {
  const { familyId } = await seedCatalog(f.engine);
  const acme = f.engine.site('acme');
  const seats = await acme.components.create(familyId, {
    kind: 'quantity_based_component',
    name: 'Seats',
    handle: 'seats',
    unitName: 'seat',
    unitPrice: '5',
  });
  const support = await acme.components.create(familyId, {
    kind: 'on_off_component',
    name: 'Support',
    handle: 'support',
    unitPrice: '20',
  });
  const calls = await acme.components.create(familyId, {
    kind: 'metered_component',
    name: 'API calls',
    unitName: 'call',
    unitPrice: '0.01',
  });
  return {
    familyId,
    seats: seats.component.id,
    support: support.component.id,
    calls: calls.component.id,
  };
}

interface AllocationJson {
  readonly allocation_id: number;
  readonly component_id: number;
  readonly subscription_id: number;
  readonly quantity: number;
  readonly previous_quantity: number;
  readonly memo: string | null;
  readonly timestamp: string;
  readonly created_at: string;
  readonly proration_upgrade_scheme: string | null;
  readonly proration_downgrade_scheme: string | null;
  readonly accrue_charge: boolean;
  readonly upgrade_charge: string | null;
  readonly downgrade_credit: string | null;
  readonly payment?: {
    id: number | null;
    amount_in_cents: number;
    success: boolean;
    memo: string | null;
    status: string;
  };
}

function allocate(
  f: HttpFixture,
  id: number,
  componentId: number | string,
  allocation: unknown,
  site = 'acme' as const,
) {
  return f.as(site, {
    method: 'POST',
    path: `/subscriptions/${id}/components/${componentId}/allocations.json`,
    json: { allocation },
  });
}

// Half of the first period (January 15 to February 15, 31 days): a prorated change costs half.
const HALF_PERIOD = { hours: 31 * 12 };

describe('allocations over HTTP', () => {
  it('POST .../components/{cid}/allocations.json allocates, prorates, collects now and answers 201', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    f.clock.advance(HALF_PERIOD);
    const reply = await allocate(f, s.id, c.seats, { quantity: 3, memo: 'Three seats' });
    expect(reply.status, reply.text).toBe(201);
    const { allocation } = reply.json<{ allocation: AllocationJson }>();
    expect(allocation).toMatchObject({
      component_id: c.seats,
      subscription_id: s.id,
      quantity: 3,
      previous_quantity: 0,
      memo: 'Three seats',
      timestamp: '2026-01-31T00:00:00Z',
      // The site's zone (New York, UTC-5 in January).
      created_at: '2026-01-30T19:00:00-05:00',
      proration_upgrade_scheme: 'prorate-attempt-capture',
      proration_downgrade_scheme: 'prorate',
      accrue_charge: false,
      upgrade_charge: 'prorated',
      downgrade_credit: 'prorated',
    });
    expect(typeof allocation.allocation_id).toBe('number');
    // 3 seats at 5.00 for half the period: 7.50, collected at once from the card.
    expect(allocation.payment).toMatchObject({ amount_in_cents: 750, success: true, status: 'succeeded' });
    const lines = await transactionsOverHttp(f, s.id);
    expect(lines.slice(0, 2).map((l) => [l.transaction_type, l.kind, l.amount_in_cents])).toEqual([
      ['payment', 'component_proration', 750],
      ['charge', 'quantity_based_component', 750],
    ]);
    expect(allocation.payment?.id).toBe(lines[0]?.id);
  });

  it('honours classic schemes: a delayed capture has no payment, a no-prorate downgrade no credit', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    f.clock.advance(HALF_PERIOD);
    const up = await allocate(f, s.id, c.seats, { quantity: 4, proration_upgrade_scheme: 'prorate-delay-capture' });
    expect(up.status, up.text).toBe(201);
    const upBody = up.json<{ allocation: AllocationJson }>().allocation;
    expect(upBody).toMatchObject({ accrue_charge: true, proration_upgrade_scheme: 'prorate-delay-capture' });
    expect(upBody).not.toHaveProperty('payment');
    const down = await allocate(f, s.id, c.seats, {
      quantity: 1,
      proration_downgrade_scheme: 'no-prorate',
      accrue_charge: 'true',
    });
    expect(down.status, down.text).toBe(201);
    expect(down.json<{ allocation: AllocationJson }>().allocation).toMatchObject({
      quantity: 1,
      previous_quantity: 4,
      downgrade_credit: 'none',
      proration_downgrade_scheme: 'no-prorate',
    });
    const lines = await transactionsOverHttp(f, s.id);
    // Only the accrued 10.00 charge (4 seats, half period): no payment, no credit.
    expect(lines.filter((l) => l.kind !== null && l.kind !== 'baseline').map((l) => l.amount_in_cents)).toContain(1000);
    expect(lines.some((l) => l.transaction_type === 'credit')).toBe(false);
    expect(lines.some((l) => l.kind === 'component_proration')).toBe(false);
  });

  it('a declined collection is reported in payment, and the allocation stands', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    f.gateway.injectFailure({ outcome: 'declined' });
    const reply = await allocate(f, s.id, c.seats, { quantity: 2 });
    expect(reply.status, reply.text).toBe(201);
    const { allocation } = reply.json<{ allocation: AllocationJson }>();
    expect(allocation.payment).toMatchObject({ success: false, status: 'declined', amount_in_cents: 1000 });
    expect(allocation.payment).toMatchObject({ id: null, memo: expect.any(String) });
    const list = await f.as('acme', { path: `/subscriptions/${s.id}/components.json` });
    expect(list.json<{ component: { allocated_quantity: number } }[]>()[0]?.component.allocated_quantity).toBe(2);
  });

  it('422 T14: an on/off quantity other than 0 or 1, in the allocation object shape', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    const reply = await allocate(f, s.id, c.support, { quantity: 50 });
    expect(reply.status).toBe(422);
    expect(reply.json()).toEqual({
      errors: [
        {
          kind: 'allocation',
          component_id: c.support,
          on: 'quantity',
          message: 'Quantity: must be either 1 (on) or 0 (off).',
        },
      ],
    });
  });

  it('422: problems the wire layer finds have the allocation object shape too', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    const wrong = await allocate(f, s.id, c.seats, {
      quantity: { n: 1 },
      accrue_charge: 'maybe',
      price_point_id: { id: 9 },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.json()).toEqual({
      errors: [
        { kind: 'allocation', component_id: c.seats, on: 'quantity', message: 'Quantity: is not a number.' },
        {
          kind: 'allocation',
          component_id: c.seats,
          on: 'accrue_charge',
          message: 'Accrue charge: must be true or false.',
        },
      ],
    });
    const unwrapped = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/components/${c.seats}/allocations.json`,
      json: { quantity: 2 },
    });
    expect(unwrapped.status).toBe(422);
    expect(unwrapped.json<{ errors: { on: string; component_id: number }[] }>().errors[0]).toMatchObject({
      kind: 'allocation',
      component_id: c.seats,
      on: 'allocation',
    });
    // Values the engine checks: a mode outside full / prorated / none, a negative quantity.
    const modes = await allocate(f, s.id, c.seats, { quantity: -1, upgrade_charge: 'sometimes' });
    expect(modes.status).toBe(422);
    expect(modes.json<{ errors: { on: string }[] }>().errors.map((e) => e.on)).toEqual(['quantity', 'upgrade_charge']);
    // Nothing was allocated by any of them.
    const history = await f.as('acme', { path: `/subscriptions/${s.id}/components/${c.seats}/allocations.json` });
    expect(history.json()).toEqual([]);
  });

  it('names a component by handle:<handle> in the path', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    const reply = await allocate(f, s.id, 'handle:support', { quantity: 1 });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json<{ allocation: AllocationJson }>().allocation.component_id).toBe(c.support);
    expect((await allocate(f, s.id, 'handle:nope', { quantity: 1 })).status).toBe(404);
  });

  it('POST /subscriptions/{id}/allocations.json applies all in order with top-level defaults, or none', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    const reply = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/allocations.json`,
      json: {
        accrue_charge: false,
        allocations: [
          { component_id: c.seats, quantity: 2, memo: 'two' },
          { component_id: String(c.support), quantity: 1, accrue_charge: true },
        ],
      },
    });
    expect(reply.status, reply.text).toBe(201);
    const list = reply.json<{ allocation: AllocationJson }[]>();
    expect(list.map((a) => [a.allocation.component_id, a.allocation.quantity, a.allocation.accrue_charge])).toEqual([
      [c.seats, 2, false],
      [c.support, 1, true],
    ]);
    // The seats were collected now (10.00, a full period); the accrued support charge was not.
    expect(list[0]?.allocation.payment).toMatchObject({ amount_in_cents: 1000, success: true });
    expect(list[1]?.allocation).not.toHaveProperty('payment');

    const bad = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/allocations.json`,
      json: {
        allocations: [
          { component_id: c.seats, quantity: 9 },
          { component_id: c.support, quantity: 7 },
        ],
      },
    });
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual({
      errors: [
        {
          kind: 'allocation',
          component_id: c.support,
          on: 'quantity',
          message: 'Quantity: must be either 1 (on) or 0 (off).',
        },
      ],
    });
    const seats = await f.as('acme', { path: `/subscriptions/${s.id}/components/${c.seats}/allocations.json` });
    // The seat change of the refused request was not kept: still one allocation, to 2.
    expect(seats.json<{ allocation: AllocationJson }[]>().map((a) => a.allocation.quantity)).toEqual([2]);

    const blank = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/allocations.json`,
      json: { allocations: [{ quantity: 1 }] },
    });
    expect(blank.status).toBe(422);
    expect(blank.json()).toEqual({ errors: ['Component: cannot be blank.'] });
    const empty = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/allocations.json`,
      json: { allocations: [] },
    });
    expect(empty.status).toBe(422);
  });

  it('POST .../allocations/preview.json shows the prorated cost and writes nothing', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    f.clock.advance(HALF_PERIOD);
    const preview = (json: unknown) =>
      f.as('acme', { method: 'POST', path: `/subscriptions/${s.id}/allocations/preview.json`, json });
    const reply = await preview({
      allocations: [
        { component_id: c.seats, quantity: 3 },
        { component_id: c.support, quantity: 1, memo: 'support on' },
      ],
    });
    expect(reply.status, reply.text).toBe(200);
    const body = reply.json<{ allocation_preview: Record<string, unknown> }>().allocation_preview;
    expect(body).toMatchObject({
      period_type: 'prorated',
      direction: 'upgrade',
      // Half a period of 3 seats (7.50) and of support (10.00).
      subtotal_in_cents: 1750,
      total_in_cents: 1750,
      total_tax_in_cents: 0,
      total_discount_in_cents: 0,
      existing_balance_in_cents: 0,
      start_date: '2026-01-15T07:00:00-05:00',
      end_date: '2026-02-15T07:00:00-05:00',
    });
    expect(body.line_items).toEqual([
      expect.objectContaining({
        transaction_type: 'charge',
        kind: 'quantity_based_component',
        amount_in_cents: 750,
        component_id: c.seats,
        direction: 'upgrade',
      }),
      expect.objectContaining({
        transaction_type: 'charge',
        kind: 'on_off_component',
        amount_in_cents: 1000,
        memo: 'support on',
        component_id: c.support,
      }),
    ]);
    expect(body.allocations).toEqual([
      expect.objectContaining({ component_id: c.seats, quantity: 3, previous_quantity: 0 }),
      expect.objectContaining({ component_id: c.support, quantity: 1, previous_quantity: 0 }),
    ]);
    const components_ = await f.as('acme', { path: `/subscriptions/${s.id}/components.json` });
    expect(components_.json()).toEqual([]);

    // A downgrade previews as a negative total.
    await allocate(f, s.id, c.seats, { quantity: 4 });
    const down = await preview({ allocations: [{ component_id: c.seats, quantity: 2 }] });
    expect(down.json<{ allocation_preview: { direction: string; total_in_cents: number } }>()).toMatchObject({
      allocation_preview: { direction: 'downgrade', total_in_cents: -500 },
    });

    const twice = await preview({
      allocations: [
        { component_id: c.seats, quantity: 3 },
        { component_id: c.seats, quantity: 5 },
      ],
    });
    expect(twice.status).toBe(422);
    expect(twice.json<{ errors: { on: string }[] }>().errors[0]).toMatchObject({
      kind: 'allocation',
      component_id: c.seats,
      on: 'component_id',
    });
    const dated = await preview({
      effective_proration_date: '2026-02-01',
      allocations: [{ component_id: c.seats, quantity: 3 }],
    });
    expect(dated.status).toBe(422);
    expect(dated.json()).toEqual({ errors: ['Effective proration date: is not supported by this server yet.'] });
    const onOff = await preview({ allocations: [{ component_id: c.support, quantity: 3 }] });
    expect(onOff.status).toBe(422);
    expect(onOff.json<{ errors: { message: string }[] }>().errors[0]?.message).toBe(
      'Quantity: must be either 1 (on) or 0 (off).',
    );
  });

  it('GET .../allocations.json lists the history newest first, 50 a page', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    for (const quantity of [1, 2, 3]) {
      expect((await allocate(f, s.id, c.seats, { quantity })).status).toBe(201);
      f.clock.advance({ minutes: 1 });
    }
    const path = `/subscriptions/${s.id}/components/${c.seats}/allocations.json`;
    const reply = await f.as('acme', { path });
    expect(reply.status).toBe(200);
    const list = reply.json<{ allocation: AllocationJson }[]>();
    expect(list.map((a) => [a.allocation.quantity, a.allocation.previous_quantity])).toEqual([
      [3, 2],
      [2, 1],
      [1, 0],
    ]);
    expect((await f.as('acme', { path: `${path}?page=2` })).json()).toEqual([]);
    // Another component's history is separate.
    const support = await f.as('acme', { path: `/subscriptions/${s.id}/components/${c.support}/allocations.json` });
    expect(support.json()).toEqual([]);
  });

  it('records metered usage and lists it newest first with id bounds and paging', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    const usage = (quantity: unknown, memo?: string) =>
      f.as('acme', {
        method: 'POST',
        path: `/subscriptions/${s.id}/components/${c.calls}/usages.json`,
        json: { usage: { quantity, ...(memo === undefined ? {} : { memo }) } },
      });
    const first = await usage(5, 'batch 1');
    expect(first.status, first.text).toBe(201);
    const firstBody = first.json<{ usage: Record<string, unknown> }>().usage;
    expect(firstBody).toMatchObject({
      quantity: 5,
      memo: 'batch 1',
      component_id: c.calls,
      subscription_id: s.id,
      previous_unit_balance: 0,
      new_unit_balance: 5,
      created_at: '2026-01-15T07:00:00-05:00',
    });
    const second = await usage('7');
    expect(second.json<{ usage: Record<string, unknown> }>().usage).toMatchObject({
      quantity: 7,
      memo: null,
      previous_unit_balance: 5,
      new_unit_balance: 12,
    });
    const path = `/subscriptions/${s.id}/components/${c.calls}/usages.json`;
    const list = await f.as('acme', { path });
    expect(list.status).toBe(200);
    const usages = list.json<{ usage: { id: number; quantity: number } }[]>();
    expect(usages.map((u) => u.usage.quantity)).toEqual([7, 5]);
    expect(usages[0]?.usage).not.toHaveProperty('new_unit_balance');
    const firstId = firstBody.id as number;
    const bounded = await f.as('acme', { path: `${path}?max_id=${firstId}&&` });
    expect(bounded.json<{ usage: { id: number } }[]>().map((u) => u.usage.id)).toEqual([firstId]);
    const paged = await f.as('acme', { path: `${path}?per_page=1&page=2` });
    expect(paged.json<{ usage: { quantity: number } }[]>().map((u) => u.usage.quantity)).toEqual([5]);

    const dated = await f.as('acme', { path: `${path}?since_date=2026-01-01` });
    expect(dated.status).toBe(422);
    expect(dated.json()).toEqual({ errors: ['Since date: is not supported by this server yet.'] });
    const notMetered = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/components/${c.seats}/usages.json`,
      json: { usage: { quantity: 1 } },
    });
    expect(notMetered.status).toBe(422);
    expect(notMetered.json()).toEqual({
      errors: ['Component: usage can only be recorded for metered components.'],
    });
    const blank = await usage(undefined);
    expect(blank.status).toBe(422);
    expect(blank.json()).toEqual({ errors: ['Quantity: cannot be blank.'] });
  });

  it('GET /subscriptions/{id}/components.json lists allocations, balances and pricing', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    await allocate(f, s.id, c.seats, { quantity: 3 });
    await allocate(f, s.id, c.support, { quantity: 1 });
    await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${s.id}/components/${c.calls}/usages.json`,
      json: { usage: { quantity: 40 } },
    });
    const reply = await f.as('acme', { path: `/subscriptions/${s.id}/components.json` });
    expect(reply.status).toBe(200);
    const list = reply.json<{ component: Record<string, unknown> }[]>().map((item) => item.component);
    expect(list).toEqual([
      expect.objectContaining({
        id: c.seats,
        component_id: c.seats,
        subscription_id: s.id,
        component_handle: 'seats',
        kind: 'quantity_based_component',
        name: 'Seats',
        unit_name: 'seat',
        allocated_quantity: 3,
        unit_balance: 0,
        pricing_scheme: 'per_unit',
        unit_price: '5.00',
        currency: 'USD',
        recurring: true,
      }),
      expect.objectContaining({
        component_id: c.support,
        kind: 'on_off_component',
        enabled: true,
        allocated_quantity: 1,
      }),
      expect.objectContaining({ component_id: c.calls, kind: 'metered_component', unit_balance: 40, recurring: false }),
    ]);
    expect(list[0]).not.toHaveProperty('enabled');
    const one = await f.as('acme', { path: `/subscriptions/${s.id}/components/${c.support}.json` });
    expect(one.json()).toMatchObject({ component: { component_id: c.support, enabled: true } });
  });

  it('signs up with components[] (id or handle:, allocated_quantity, enabled, unit_balance) and charges them', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f, {
      components: [
        { component_id: c.seats, allocated_quantity: 2 },
        { component_id: 'handle:support', enabled: true },
        { component_id: String(c.calls), unit_balance: 10 },
      ],
    });
    const reply = await f.as('acme', { path: `/subscriptions/${s.id}/components.json` });
    const list =
      reply.json<{ component: { component_id: number; allocated_quantity: number; unit_balance: number } }[]>();
    expect(
      list.map((i) => [i.component.component_id, i.component.allocated_quantity, i.component.unit_balance]),
    ).toEqual([
      [c.seats, 2, 0],
      [c.support, 1, 0],
      [c.calls, 0, 10],
    ]);
    // The signup charged the product (10.00), two seats (10.00) and support (20.00).
    const lines = await transactionsOverHttp(f, s.id);
    const signupPayment = lines.find((l) => l.id === s.signupPaymentId);
    expect(signupPayment?.amount_in_cents).toBe(4000);

    const unknown = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: {
        subscription: {
          product_handle: 'pro',
          customer_id: s.customerId,
          components: [
            { component_id: 999_999, quantity: 1 },
            { quantity: 1 },
            { component_id: c.seats, custom_price: { unit_price: '1' } },
          ],
        },
      },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.json()).toEqual({
      errors: ['Component id: cannot be blank.', 'Custom price: is not supported by this server yet.'],
    });
    const missing = await f.as('acme', {
      method: 'POST',
      path: '/subscriptions.json',
      json: {
        subscription: {
          product_handle: 'pro',
          customer_id: s.customerId,
          components: [{ component_id: 999_999, quantity: 1 }],
        },
      },
    });
    expect(missing.status).toBe(422);
    expect(missing.json()).toEqual({ errors: ["Component: '999999' does not exist."] });
  });

  it('404: an unknown subscription or component, and a subscription without that component', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    const cases = [
      {
        method: 'POST',
        path: `/subscriptions/999/components/${c.seats}/allocations.json`,
        json: { allocation: { quantity: 1 } },
      },
      {
        method: 'POST',
        path: `/subscriptions/${s.id}/components/999/allocations.json`,
        json: { allocation: { quantity: 1 } },
      },
      {
        method: 'POST',
        path: '/subscriptions/999/allocations.json',
        json: { allocations: [{ component_id: c.seats, quantity: 1 }] },
      },
      {
        method: 'POST',
        path: '/subscriptions/999/allocations/preview.json',
        json: { allocations: [{ component_id: c.seats, quantity: 1 }] },
      },
      { method: 'GET', path: `/subscriptions/999/components/${c.seats}/allocations.json` },
      { method: 'GET', path: `/subscriptions/${s.id}/components/999/allocations.json` },
      { method: 'POST', path: `/subscriptions/${s.id}/components/999/usages.json`, json: { usage: { quantity: 1 } } },
      { method: 'GET', path: `/subscriptions/${s.id}/components/999/usages.json` },
      { method: 'GET', path: '/subscriptions/999/components.json' },
      { method: 'GET', path: `/subscriptions/${s.id}/components/${c.seats}.json` },
      { method: 'GET', path: '/subscriptions/abc/components.json' },
    ];
    for (const request of cases) {
      const reply = await f.as('acme', request);
      expect(reply.status, `${request.method} ${request.path}: ${reply.text}`).toBe(404);
      expect(reply.headers['content-type']).toContain('application/json');
    }
  });

  it('tenancy: another site key is a 401; a site own key on another site ids is a 404 and changes nothing', async () => {
    const f = http();
    const c = await components(f);
    const s = await subscribeOverHttp(f);
    await allocate(f, s.id, c.seats, { quantity: 2 });
    await seedCatalog(f.engine, 'globex');
    const cases = [
      {
        method: 'POST',
        path: `/subscriptions/${s.id}/components/${c.seats}/allocations.json`,
        json: { allocation: { quantity: 9 } },
      },
      {
        method: 'POST',
        path: `/subscriptions/${s.id}/allocations.json`,
        json: { allocations: [{ component_id: c.seats, quantity: 9 }] },
      },
      {
        method: 'POST',
        path: `/subscriptions/${s.id}/allocations/preview.json`,
        json: { allocations: [{ component_id: c.seats, quantity: 9 }] },
      },
      { method: 'GET', path: `/subscriptions/${s.id}/components/${c.seats}/allocations.json` },
      {
        method: 'POST',
        path: `/subscriptions/${s.id}/components/${c.calls}/usages.json`,
        json: { usage: { quantity: 1 } },
      },
      { method: 'GET', path: `/subscriptions/${s.id}/components/${c.calls}/usages.json` },
      { method: 'GET', path: `/subscriptions/${s.id}/components.json` },
      { method: 'GET', path: `/subscriptions/${s.id}/components/${c.seats}.json` },
    ];
    for (const request of cases) {
      const stolen = await f.as('acme', { ...request, key: f.keys.globex });
      expect(stolen.status, `${request.method} ${request.path}`).toBe(401);
      const foreign = await f.as('globex', request);
      expect(foreign.status, `${request.method} ${request.path}: ${foreign.text}`).toBe(404);
    }
    const history = await f.as('acme', { path: `/subscriptions/${s.id}/components/${c.seats}/allocations.json` });
    expect(history.json<{ allocation: AllocationJson }[]>().map((a) => a.allocation.quantity)).toEqual([2]);
    const usages = await f.as('acme', { path: `/subscriptions/${s.id}/components/${c.calls}/usages.json` });
    expect(usages.json()).toEqual([]);
  });
});
