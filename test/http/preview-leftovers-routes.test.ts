import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, signupBody, useHttpFixture } from './support/http-fixture.js';

/**
 * Over HTTP: the signup preview of a delayed start shows the start (setup fee included), the
 * renewal preview and a subscription's proforma after an advance invoice show only what the
 * renewal bills beyond it, an allocation's payment pays the invoice it issued, and a delayed
 * signup takes allocations before its start. Timestamps are in the site's zone (New York).
 */

type Manifest = {
  total_in_cents: number;
  subtotal_in_cents: number;
  start_date: string;
  end_date: string;
  period_type: string;
  line_items: { transaction_type: string; kind: string; amount_in_cents: number }[];
};

/** The catalog's `pro` (10.00 a month), a setup-fee plan, and seats at 9.00 each. */
async function seed(f: HttpFixture) {
  const { familyId } = await seedCatalog(f.engine);
  const acme = f.engine.site('acme');
  await acme.catalog.createProduct(familyId, {
    name: 'Setup',
    handle: 'setup',
    priceInCents: 1000,
    interval: 1,
    intervalUnit: 'month',
    initialChargeInCents: 500,
  });
  const seats = await acme.components.create(familyId, {
    name: 'Seats',
    kind: 'quantity_based',
    unitName: 'seat',
    handle: 'seats',
    unitPrice: '9',
  });
  return { seats: seats.component.id };
}

async function subscribe(f: HttpFixture, extra: Record<string, unknown> = {}, product = 'pro') {
  const body = signupBody(product) as { subscription: Record<string, unknown> };
  const reply = await f.as('acme', {
    method: 'POST',
    path: '/subscriptions.json',
    json: { subscription: { ...body.subscription, ...extra } },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.json<{ subscription: { id: number; state: string } }>().subscription;
}

describe('preview leftovers routes', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('previews a delayed start with its setup fee, dated at initial_billing_at; the start bills the same', async () => {
    const f = fixture();
    await seed(f);
    const body = signupBody('setup') as { subscription: Record<string, unknown> };
    const subscription = { ...body.subscription, initial_billing_at: '2026-02-01T09:00:00-05:00' };
    const reply = await f.as('acme', { method: 'POST', path: '/subscriptions/preview.json', json: { subscription } });
    expect(reply.status, reply.text).toBe(200);
    const { current_billing_manifest: current, next_billing_manifest: next } = reply.json<{
      subscription_preview: { current_billing_manifest: Manifest; next_billing_manifest: Manifest };
    }>().subscription_preview;
    expect(current).toMatchObject({
      total_in_cents: 1500,
      start_date: '2026-02-01T09:00:00-05:00',
      end_date: '2026-03-01T09:00:00-05:00',
      period_type: 'recurring',
    });
    expect(current.line_items.map((i) => [i.kind, i.amount_in_cents])).toEqual([
      ['baseline', 1000],
      ['initial', 500],
    ]);
    expect(next).toMatchObject({ total_in_cents: 1000, start_date: '2026-03-01T09:00:00-05:00' });
    expect(f.gateway.chargeCalls).toBe(0);

    const created = await subscribe(f, { initial_billing_at: '2026-02-01T09:00:00-05:00' }, 'setup');
    f.clock.set('2026-02-01T14:00:00Z');
    await f.engine.runDue();
    const invoices = await f.as('acme', { path: `/invoices.json?subscription_id=${created.id}` });
    const [invoice] = invoices.json<{ invoices: { total_amount: string; status: string }[] }>().invoices;
    expect([invoice?.total_amount, invoice?.status]).toEqual(['15.00', 'paid']);
  });

  it('the renewal preview and the proforma after an advance invoice show only the difference; the renewal bills it', async () => {
    const f = fixture();
    const { seats } = await seed(f);
    const { id } = await subscribe(f, { components: [{ component_id: seats, allocated_quantity: 1 }] });
    const issued = await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/advance_invoice/issue.json` });
    expect(issued.status, issued.text).toBe(201);
    const upgrade = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${id}/components/${seats}/allocations.json`,
      json: { allocation: { quantity: 2, accrue_charge: true, upgrade_charge: 'none' } },
    });
    expect(upgrade.status, upgrade.text).toBe(201);
    const preview = await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/renewals/preview.json` });
    expect(preview.status, preview.text).toBe(200);
    const renewal = preview.json<{
      renewal_preview: Manifest & { existing_balance_in_cents: number; total_amount_due_in_cents: number };
    }>().renewal_preview;
    expect(renewal.line_items.map((i) => [i.transaction_type, i.kind, i.amount_in_cents])).toEqual([
      ['charge', 'quantity_based_component', 900],
    ]);
    expect([renewal.total_in_cents, renewal.existing_balance_in_cents, renewal.total_amount_due_in_cents]).toEqual([
      900, 1900, 2800,
    ]);
    const proforma = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${id}/proforma_invoices/preview.json`,
    });
    expect(proforma.status, proforma.text).toBe(200);
    expect(proforma.json<{ total_amount: string }>().total_amount).toBe('9.00');

    const charged = f.gateway.chargeCalls;
    f.clock.set('2026-02-15T12:00:00Z');
    await f.engine.runDue();
    expect(f.gateway.chargeCalls).toBe(charged + 1);
    const read = await f.as('acme', { path: `/subscriptions/${id}.json` });
    expect(read.json<{ subscription: { balance_in_cents: number } }>().subscription.balance_in_cents).toBe(0);
    const invoices = await f.as('acme', { path: `/invoices.json?subscription_id=${id}&status=open` });
    expect(invoices.json<{ invoices: unknown[] }>().invoices).toEqual([]);
  });

  it('an allocation’s payment pays the invoice it issued; the advance invoice stays open for the renewal', async () => {
    const f = fixture();
    const { seats } = await seed(f);
    const { id } = await subscribe(f);
    const issued = await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/advance_invoice/issue.json` });
    const advanceUid = issued.json<{ uid: string }>().uid;
    const allocated = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${id}/components/${seats}/allocations.json`,
      json: { allocation: { quantity: 1, upgrade_charge: 'full' } },
    });
    expect(allocated.status, allocated.text).toBe(201);
    const open = await f.as('acme', { path: `/invoices.json?subscription_id=${id}&status=open` });
    const openUids = open.json<{ invoices: { uid: string; due_amount: string }[] }>().invoices;
    expect(openUids.map((i) => [i.uid, i.due_amount])).toEqual([[advanceUid, '10.00']]);
    const read = await f.as('acme', { path: `/subscriptions/${id}.json` });
    expect(read.json<{ subscription: { balance_in_cents: number } }>().subscription.balance_in_cents).toBe(1000);
  });

  it('a delayed signup takes an allocation before its start: no charge now, the start bills it', async () => {
    const f = fixture();
    const { seats } = await seed(f);
    const created = await subscribe(f, { initial_billing_at: '2026-02-01T09:00:00-05:00' });
    expect(created.state).toBe('awaiting_signup');
    const allocated = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${created.id}/components/${seats}/allocations.json`,
      json: { allocation: { quantity: 3 } },
    });
    expect(allocated.status, allocated.text).toBe(201);
    expect(allocated.json<{ allocation: { quantity: number; previous_quantity: number } }>().allocation).toMatchObject({
      quantity: 3,
      previous_quantity: 0,
    });
    expect(f.gateway.chargeCalls).toBe(0);
    f.clock.set('2026-02-01T14:00:00Z');
    await f.engine.runDue();
    const invoices = await f.as('acme', { path: `/invoices.json?subscription_id=${created.id}` });
    const [invoice] = invoices.json<{ invoices: { total_amount: string; status: string }[] }>().invoices;
    // 10.00 and 3 seats at 9.00.
    expect([invoice?.total_amount, invoice?.status]).toEqual(['37.00', 'paid']);
  });
});
