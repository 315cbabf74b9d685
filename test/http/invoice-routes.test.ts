import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { readPdf, squash } from '../invoices/support/pdf-text.js';
import { basic } from './support/client.js';
import { type HttpFixture, seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { subscribeOverHttp } from './support/subscribe.js';

/**
 * The invoice routes over real HTTP on the engine: invoices issued by a signup and by an ad-hoc
 * invoice, paid, refunded into a credit note and voided; the lists and their filters; PDFs read
 * back with a PDF reader; statements; and bad input refused with the service's messages and
 * nothing changed.
 */

interface InvoiceBody {
  uid: string;
  number: string;
  status: string;
  role: string;
  subscription_id: number;
  total_amount: string;
  paid_amount: string;
  due_amount: string;
  refund_amount: string;
  line_items: { title: string; quantity: string; unit_price: string; total_amount: string }[];
  payments: { applied_amount: string; memo: string; transaction_id: number }[];
}

async function json<T>(f: HttpFixture, path: string, status = 200, site: 'acme' | 'globex' = 'acme'): Promise<T> {
  const reply = await f.as(site, { path });
  expect(reply.status, `${path}: ${reply.text}`).toBe(status);
  return reply.json<T>();
}

/** A GET whose body is kept as bytes (the fixture's client decodes bodies as UTF-8 text, which would mangle a PDF). */
function getBytes(
  f: HttpFixture,
  path: string,
): Promise<{ status: number; type: string | undefined; bytes: Uint8Array }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: f.port,
        path,
        headers: { host: `acme.localhost:${f.port}`, authorization: basic(f.keys.acme) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], bytes: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function post(f: HttpFixture, path: string, body: unknown) {
  return f.as('acme', { method: 'POST', path, json: body });
}

async function signup(f: HttpFixture) {
  await seedCatalog(f.engine);
  const sub = await subscribeOverHttp(f);
  const { invoices } = await json<{ invoices: InvoiceBody[] }>(f, `/invoices.json?subscription_id=${sub.id}`);
  expect(invoices).toHaveLength(1);
  return { sub, invoice: invoices[0] as InvoiceBody };
}

async function adhoc(f: HttpFixture, subscriptionId: number, unitPrice = '25.00', quantity: unknown = 2) {
  const reply = await post(f, `/subscriptions/${subscriptionId}/invoices.json`, {
    invoice: { line_items: [{ title: 'Onboarding workshop', quantity, unit_price: unitPrice }], memo: 'Workshop' },
  });
  expect(reply.status, reply.text).toBe(201);
  return reply.json<{ invoice: InvoiceBody }>().invoice;
}

describe('invoice routes', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('lists and reads the signup invoice in the service shape, and filters the list', async () => {
    const f = fixture();
    const { sub, invoice } = await signup(f);
    expect(invoice).toMatchObject({
      status: 'paid',
      role: 'signup',
      subscription_id: sub.id,
      total_amount: '10.00',
      paid_amount: '10.00',
      due_amount: '0.00',
    });
    expect(invoice.line_items[0]).toMatchObject({ quantity: '1', unit_price: '10.00', total_amount: '10.00' });

    const read = await json<InvoiceBody>(f, `/invoices/${invoice.uid}.json`);
    expect(read.uid).toBe(invoice.uid);
    expect(read.number).toBe(invoice.number);

    const paid = await json<{ invoices: InvoiceBody[] }>(f, '/invoices.json?status=paid');
    expect(paid.invoices.map((i) => i.uid)).toEqual([invoice.uid]);
    expect((await json<{ invoices: InvoiceBody[] }>(f, '/invoices.json?status=open')).invoices).toEqual([]);
    const byNumber = await json<{ invoices: InvoiceBody[] }>(f, `/invoices.json?number=${invoice.number}`);
    expect(byNumber.invoices.map((i) => i.uid)).toEqual([invoice.uid]);
    const byDate = await json<{ invoices: InvoiceBody[] }>(
      f,
      '/invoices.json?start_date=2026-01-16&end_date=2026-01-31&date_field=issue_date',
    );
    expect(byDate.invoices).toEqual([]);
    // The other site sees none of them.
    expect((await json<{ invoices: InvoiceBody[] }>(f, '/invoices.json', 200, 'globex')).invoices).toEqual([]);
    expect((await f.as('globex', { path: `/invoices/${invoice.uid}.json` })).status).toBe(404);
  });

  it('refuses a list filter that cannot match as written, with the service-style messages', async () => {
    const f = fixture();
    const reply = await f.as('acme', { path: '/invoices.json?status=unpaid&start_date=2026-13-01&direction=up' });
    expect(reply.status).toBe(422);
    expect(reply.json<{ errors: string[] }>().errors).toEqual([
      'Status: must be one of draft, open, paid, voided, canceled.',
      'Start date: must be a date (YYYY-MM-DD).',
      "Direction: must be 'asc' or 'desc'.",
    ]);
  });

  it('serves the invoice as a PDF whose text has its number and total, and as an HTML page', async () => {
    const f = fixture();
    const { invoice } = await signup(f);
    const reply = await f.as('acme', { path: `/invoices/${invoice.uid}.pdf` });
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/pdf');
    expect(reply.headers['content-disposition']).toBe(`inline; filename="${invoice.number}.pdf"`);
    const { bytes } = await getBytes(f, `/invoices/${invoice.uid}.pdf`);
    expect(Buffer.from(bytes).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = squash((await readPdf(bytes)).text);
    expect(text).toContain(invoice.number);
    expect(text).toContain('Total USD 10.00');
    expect(text).toContain('Ada Lovelace');

    const page = await f.as('acme', { path: `/invoices/${invoice.uid}.html` });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain(`<dd data-field="invoice-number">${invoice.number}</dd>`);
    expect((await f.as('acme', { path: '/invoices/inv_nosuchinvoice.pdf' })).status).toBe(404);
    expect((await f.as('globex', { path: `/invoices/${invoice.uid}.pdf` })).status).toBe(404);
  });

  it('shows on the PDF the subscription metafields whose invoices scope is on, and no others', async () => {
    const f = fixture();
    const { sub, invoice } = await signup(f);
    const fields = await post(f, '/subscriptions/metafields.json', {
      metafields: [
        { name: 'PO number', scope: { invoices: '1' } },
        { name: 'Internal note', scope: { invoices: '0' } },
      ],
    });
    expect(fields.status, fields.text).toBeLessThan(300);
    const values = await post(f, `/subscriptions/${sub.id}/metadata.json`, {
      metadata: [
        { name: 'PO number', value: 'PO-4471' },
        { name: 'Internal note', value: 'late payer' },
      ],
    });
    expect(values.status, values.text).toBeLessThan(300);
    const { bytes } = await getBytes(f, `/invoices/${invoice.uid}.pdf`);
    const text = squash((await readPdf(bytes)).text);
    expect(text).toContain('PO number: PO-4471');
    expect(text).not.toContain('late payer');
  });

  it('creates an ad-hoc invoice, records payments on it until it is paid, and refunds into a credit note', async () => {
    const f = fixture();
    const { sub } = await signup(f);
    const created = await adhoc(f, sub.id);
    expect(created).toMatchObject({ status: 'open', total_amount: '50.00', due_amount: '50.00', paid_amount: '0.00' });
    // The engine bills the line as one charge of quantity x unit price.
    expect(created.line_items.map((item) => [item.title, item.total_amount])).toEqual([
      ['Onboarding workshop', '50.00'],
    ]);

    const first = await post(f, `/invoices/${created.uid}/payments.json`, {
      payment: { amount: '20.00', memo: 'Check 1001', method: 'check' },
      type: 'external',
    });
    expect(first.status, first.text).toBe(200);
    expect(first.json<InvoiceBody>()).toMatchObject({ status: 'open', paid_amount: '20.00', due_amount: '30.00' });

    const second = await post(f, `/invoices/${created.uid}/payments.json`, { payment: { amount: 30, method: 'cash' } });
    expect(second.status, second.text).toBe(200);
    const paid = second.json<InvoiceBody>();
    expect(paid).toMatchObject({ status: 'paid', paid_amount: '50.00', due_amount: '0.00' });
    expect(paid.payments.map((p) => p.applied_amount)).toEqual(['20.00', '30.00']);
    expect(paid.payments[1]?.memo).toBe('cash');

    const paymentId = paid.payments[0]?.transaction_id;
    const refund = await post(f, `/invoices/${created.uid}/refunds.json`, {
      refund: { amount: '5.00', memo: 'Goodwill', payment_id: paymentId },
    });
    expect(refund.status, refund.text).toBe(200);
    expect(refund.json<InvoiceBody>().refund_amount).toBe('5.00');

    const notes = await json<{
      credit_notes: { uid: string; total_amount: string; origin_invoices: { uid: string }[] }[];
    }>(f, `/credit_notes.json?subscription_id=${sub.id}`);
    expect(notes.credit_notes).toHaveLength(1);
    const note = notes.credit_notes[0]!;
    expect(note).toMatchObject({ total_amount: '5.00', origin_invoices: [{ uid: created.uid }] });
    const read = await json<{ uid: string; origin_invoices: { uid: string; number: string }[] }>(
      f,
      `/credit_notes/${note.uid}.json`,
    );
    expect(read.origin_invoices).toEqual([{ uid: created.uid, number: created.number }]);
    const pdf = await getBytes(f, `/credit_notes/${note.uid}.pdf`);
    expect(pdf.status).toBe(200);
    expect(pdf.type).toBe('application/pdf');
    const text = squash((await readPdf(pdf.bytes)).text);
    expect(text).toContain('Total credited USD 5.00');

    const events = await json<{ events: { event_type: string }[] }>(
      f,
      `/invoices/events.json?invoice_uid=${created.uid}`,
    );
    expect(events.events.map((e) => e.event_type)).toEqual(
      expect.arrayContaining(['issue_invoice', 'apply_payment', 'refund_invoice']),
    );
    const same = await json<{ events: { event_type: string }[] }>(f, `/invoices/${created.uid}/events.json`);
    expect(same.events.map((e) => e.event_type)).toEqual(events.events.map((e) => e.event_type));
  });

  it('voids an open invoice with a reason, and refuses a void without one, changing nothing', async () => {
    const f = fixture();
    const { sub } = await signup(f);
    const created = await adhoc(f, sub.id);
    const refused = await post(f, `/invoices/${created.uid}/void.json`, { void: {} });
    expect(refused.status).toBe(422);
    expect(refused.json()).toEqual({ errors: ['Reason: cannot be blank.'] });
    expect((await json<InvoiceBody>(f, `/invoices/${created.uid}.json`)).status).toBe('open');

    const voided = await post(f, `/invoices/${created.uid}/void.json`, { void: { reason: 'Billed by mistake' } });
    expect(voided.status, voided.text).toBe(200);
    expect(voided.json<InvoiceBody>().status).toBe('voided');
    expect((await json<InvoiceBody>(f, `/invoices/${created.uid}.json`)).status).toBe('voided');

    const reopened = await post(f, `/invoices/${created.uid}/reopen.json`, undefined);
    expect(reopened.status, reopened.text).toBe(200);
    expect(reopened.json<InvoiceBody>()).toMatchObject({ status: 'open', due_amount: '50.00' });
    const again = await post(f, `/invoices/${created.uid}/reopen.json`, undefined);
    expect(again.status).toBe(422);
    expect(again.json()).toEqual({ errors: ['Invoice: a open invoice cannot be reopened.'] });
    // Only a draft is issued; an open invoice already is.
    expect((await post(f, `/invoices/${created.uid}/issue.json`, {})).status).toBe(422);
    expect((await json<InvoiceBody>(f, `/invoices/${created.uid}.json`)).status).toBe('open');
  });

  it('creates a draft ad-hoc invoice off the ledger and without a number, and issues it', async () => {
    const f = fixture();
    const { sub, invoice: signupInvoice } = await signup(f);
    const reply = await post(f, `/subscriptions/${sub.id}/invoices.json`, {
      invoice: {
        line_items: [{ title: 'Onboarding workshop', quantity: 2, unit_price: '25.00' }],
        memo: 'Workshop',
        net_terms: 30,
        status: 'draft',
      },
    });
    expect(reply.status, reply.text).toBe(201);
    const draft = reply.json<{ invoice: InvoiceBody & Record<string, unknown> }>().invoice;
    expect(draft).toMatchObject({ status: 'draft', total_amount: '50.00', due_amount: '50.00' });
    expect(draft).not.toHaveProperty('number');
    expect(draft).not.toHaveProperty('sequence_number');
    expect(draft.line_items[0]).not.toHaveProperty('transaction_id');
    const drafts = await json<{ invoices: InvoiceBody[] }>(f, '/invoices.json?status=draft');
    expect(drafts.invoices.map((i) => i.uid)).toEqual([draft.uid]);
    expect(
      (await json<{ subscription: { balance_in_cents: number } }>(f, `/subscriptions/${sub.id}.json`)).subscription
        .balance_in_cents,
    ).toBe(0);
    // Not payable while a draft.
    expect((await post(f, `/invoices/${draft.uid}/payments.json`, { payment: { amount: '1.00' } })).status).toBe(422);

    const issued = await post(f, `/invoices/${draft.uid}/issue.json`, { on_failed_payment: 'leave_open_invoice' });
    expect(issued.status, issued.text).toBe(200);
    const body = issued.json<InvoiceBody & { sequence_number: number; issue_date: string; due_date: string }>();
    expect(body).toMatchObject({ uid: draft.uid, status: 'open', due_amount: '50.00' });
    expect(body.sequence_number).toBe(Number(signupInvoice.number.replace(/\D/g, '')) + 1);
    expect(typeof body.number).toBe('string');
    expect(body.line_items[0]).toMatchObject({ quantity: '2', unit_price: '25.00', total_amount: '50.00' });
    expect(
      (await json<{ subscription: { balance_in_cents: number } }>(f, `/subscriptions/${sub.id}.json`)).subscription
        .balance_in_cents,
    ).toBe(5000);
    // Paid by card (`type: payment`) through the gateway.
    const byCard = await post(f, `/invoices/${draft.uid}/payments.json`, {
      payment: { amount: '50.00' },
      type: 'payment',
    });
    expect(byCard.status, byCard.text).toBe(200);
    expect(byCard.json<InvoiceBody>()).toMatchObject({ status: 'paid', paid_amount: '50.00', due_amount: '0.00' });
    expect(byCard.json<InvoiceBody>().payments[0]).toMatchObject({ applied_amount: '50.00' });
    const twice = await post(f, `/invoices/${draft.uid}/issue.json`, {});
    expect(twice.status).toBe(422);
    expect(twice.json()).toEqual({ errors: ['Invoice: a paid invoice cannot be issued; only drafts can.'] });

    const unknownStatus = await post(f, `/subscriptions/${sub.id}/invoices.json`, {
      invoice: { line_items: [{ title: 'X', quantity: 1, unit_price: '1.00' }], status: 'pending' },
    });
    expect(unknownStatus.status).toBe(422);
    expect(unknownStatus.json()).toEqual({ errors: { 'invoice.status': ["Status: must be 'open' or 'draft'."] } });
  });

  it('refuses bad payments and ad-hoc invoices with the service messages, changing nothing', async () => {
    const f = fixture();
    const { sub } = await signup(f);
    const created = await adhoc(f, sub.id);

    const badAmount = await post(f, `/invoices/${created.uid}/payments.json`, { payment: { amount: 'ten' } });
    expect(badAmount.status).toBe(422);
    expect(badAmount.json()).toEqual({ errors: ['Amount: is not a number.'] });
    const prepayment = await post(f, `/invoices/${created.uid}/payments.json`, {
      payment: { amount: '1.00' },
      type: 'prepayment',
    });
    expect(prepayment.status).toBe(422);
    expect(prepayment.json<{ errors: string[] }>().errors[0]).toMatch(
      /^Type: must be 'external' or 'payment'; prepayments and service credits/,
    );
    const noMemo = await post(f, `/invoices/${created.uid}/refunds.json`, { refund: { amount: '1.00' } });
    expect(noMemo.status).toBe(422);
    expect(noMemo.json()).toEqual({ errors: ['Memo: cannot be blank.'] });
    expect(await json<InvoiceBody>(f, `/invoices/${created.uid}.json`)).toMatchObject({
      paid_amount: '0.00',
      due_amount: '50.00',
    });

    const before = await json<{ invoices: InvoiceBody[] }>(f, '/invoices.json');
    const badAdhoc = await post(f, `/subscriptions/${sub.id}/invoices.json`, {
      invoice: { line_items: [{ title: '', quantity: 0, unit_price: 'x' }], coupons: [{ code: 'X' }] },
    });
    expect(badAdhoc.status).toBe(422);
    expect(badAdhoc.json()).toEqual({
      errors: {
        'invoice.coupons': ['Coupons: is not supported by this server yet.'],
        'invoice.line_items.0.title': ['Title: cannot be blank.'],
        'invoice.line_items.0.quantity': ['Quantity: must be a number greater than 0.'],
        'invoice.line_items.0.unit_price': ['Amount: is not a number.'],
      },
    });
    expect((await json<{ invoices: InvoiceBody[] }>(f, '/invoices.json')).invoices).toHaveLength(
      before.invoices.length,
    );
    expect((await f.as('acme', { path: '/invoices/events.json' })).status).toBe(422);
  });

  it('lists a subscription statements and reads one', async () => {
    const f = fixture();
    const { sub, invoice } = await signup(f);
    const list = await json<{ statement: { id: number; subscription_id: number; invoice_uids: string[] } }[]>(
      f,
      `/subscriptions/${sub.id}/statements.json`,
    );
    expect(list.length).toBeGreaterThanOrEqual(1);
    const first = list[0]!.statement;
    expect(first.subscription_id).toBe(sub.id);
    expect(first.invoice_uids).toContain(invoice.uid);
    const read = await json<{ statement: { id: number; total_in_cents: number } }>(f, `/statements/${first.id}.json`);
    expect(read.statement).toMatchObject({ id: first.id, total_in_cents: 1000 });
    expect((await f.as('globex', { path: `/statements/${first.id}.json` })).status).toBe(404);
  });
});
