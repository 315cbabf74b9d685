import { describe, expect, it } from 'vitest';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';

/**
 * The advance-invoice routes over raw HTTP: `POST /subscriptions/{id}/advance_invoice/issue.json`,
 * `GET /subscriptions/{id}/advance_invoice.json` and `POST /subscriptions/{id}/advance_invoice/void.json`,
 * their bodies, statuses and errors, and that `/subscriptions/{id}.json` does not shadow them.
 */

const CUSTOMER = { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };
const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2030 };

async function subscribe(f: HttpFixture): Promise<number> {
  await seedCatalog(f.engine);
  const view = await f.engine
    .site('acme')
    .subscriptions.create({ productHandle: 'pro', customer: CUSTOMER, creditCard: VISA });
  return view.subscription.id;
}

interface InvoiceBody {
  uid: string;
  status: string;
  total_amount: string;
  due_amount: string;
  line_items: { title: string; total_amount: string }[];
}

describe('advance invoice routes', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('issues (201), reads (200) and voids (200) the bare invoice; the read is a 404 after the void', async () => {
    const f = fixture();
    const id = await subscribe(f);
    const none = await f.as('acme', { path: `/subscriptions/${id}/advance_invoice.json` });
    expect(none.status).toBe(404);

    const issued = await f.as('acme', { method: 'POST', path: `/subscriptions/${id}/advance_invoice/issue.json` });
    expect(issued.status).toBe(201);
    const invoice = issued.json<InvoiceBody>();
    expect(invoice).toMatchObject({ status: 'open', total_amount: '10.00', due_amount: '10.00' });
    expect(invoice.line_items.map((l) => l.total_amount)).toEqual(['10.00']);

    const read = await f.as('acme', { path: `/subscriptions/${id}/advance_invoice.json` });
    expect(read.status).toBe(200);
    expect(read.json<InvoiceBody>().uid).toBe(invoice.uid);

    const again = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${id}/advance_invoice/issue.json`,
      json: { force: false },
    });
    expect(again.status).toBe(422);
    expect(again.json<{ errors: string[] }>().errors[0]).toContain('an advance invoice already exists');

    const noReason = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${id}/advance_invoice/void.json`,
      json: { void: {} },
    });
    expect(noReason.status).toBe(422);

    const voided = await f.as('acme', {
      method: 'POST',
      path: `/subscriptions/${id}/advance_invoice/void.json`,
      json: { void: { reason: 'Not needed' } },
    });
    expect(voided.status).toBe(200);
    expect(voided.json<InvoiceBody>()).toMatchObject({ uid: invoice.uid, status: 'voided' });
    expect((await f.as('acme', { path: `/subscriptions/${id}/advance_invoice.json` })).status).toBe(404);
    expect((await f.engine.site('acme').subscriptions.get(id)).balanceInCents).toBe(0);
  });

  it('replaces the invoice with force: true', async () => {
    const f = fixture();
    const id = await subscribe(f);
    const path = `/subscriptions/${id}/advance_invoice/issue.json`;
    const first = (await f.as('acme', { method: 'POST', path, json: {} })).json<InvoiceBody>();
    const forced = await f.as('acme', { method: 'POST', path, json: { force: true } });
    expect(forced.status).toBe(201);
    expect(forced.json<InvoiceBody>().uid).not.toBe(first.uid);
    expect((await f.engine.site('acme').invoices.get(first.uid)).status).toBe('voided');
  });

  it('refuses a bad body, an unknown subscription and a canceled one', async () => {
    const f = fixture();
    const id = await subscribe(f);
    const path = `/subscriptions/${id}/advance_invoice/issue.json`;
    const bad = await f.as('acme', { method: 'POST', path, json: { force: 'yes' } });
    expect(bad.status).toBe(422);
    expect(bad.json()).toEqual({ errors: ['Force: must be true or false.'] });
    const list = await f.as('acme', { method: 'POST', path, json: [1] });
    expect(list.status).toBe(422);
    const unknown = await f.as('acme', { method: 'POST', path: '/subscriptions/999999/advance_invoice/issue.json' });
    expect(unknown.status).toBe(404);
    await f.engine.site('acme').subscriptions.cancel(id);
    const canceled = await f.as('acme', { method: 'POST', path });
    expect(canceled.status).toBe(422);
    // Nothing was issued by any of them.
    const { invoices } = await f.engine.site('acme').invoices.list({ subscriptionId: id });
    expect(invoices).toHaveLength(1);
  });

  it("keeps another site's subscription out of reach", async () => {
    const f = fixture();
    const id = await subscribe(f);
    const issued = await f.as('globex', { method: 'POST', path: `/subscriptions/${id}/advance_invoice/issue.json` });
    expect(issued.status).toBe(404);
  });
});
