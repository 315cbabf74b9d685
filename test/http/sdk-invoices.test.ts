import {
  ApiError,
  CreateInvoiceStatus,
  Direction,
  InvoiceEventType,
  InvoicePaymentMethodType,
  InvoicePaymentType,
  InvoiceStatus,
  InvoicesController,
} from '@maxio-com/advanced-billing-sdk';
import { describe, expect, it } from 'vitest';
import { seedCatalog, useHttpFixture } from './support/http-fixture.js';
import { acmeClient, sdk } from './support/maxio-sdk.js';
import { subscribeOverHttp } from './support/subscribe.js';

/**
 * The official Maxio SDK's `InvoicesController` (6.1.0) against our server in `chargify` compat:
 * every call goes over real HTTP through the SDK's own axios and is validated by the SDK's own
 * response schemas, so an invoice, credit note or event shape the SDK cannot read fails here.
 */

describe('official Maxio SDK 6.1.0: InvoicesController against the chargify-compat server', () => {
  const fixture = useHttpFixture({ compat: 'chargify' });

  it('lists, reads, creates, pays, refunds and voids invoices and reads credit notes and events', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const sub = await subscribeOverHttp(f);
    const invoices = new InvoicesController(acmeClient(f));

    const listed = await sdk(
      invoices.listInvoices({ subscriptionId: sub.id, page: 1, perPage: 20, direction: Direction.Asc }),
    );
    expect(listed.invoices).toHaveLength(1);
    const signup = listed.invoices[0]!;
    expect(signup).toMatchObject({ status: InvoiceStatus.Paid, totalAmount: '10.00', dueAmount: '0.00' });
    expect(signup.lineItems?.[0]?.unitPrice).toBe('10.00');

    const read = await sdk(invoices.readInvoice(signup.uid as string));
    expect(read.number).toBe(signup.number);
    expect(read.customer?.email).toBe('ada@example.com');
    const paidOnly = await sdk(invoices.listInvoices({ status: InvoiceStatus.Open }));
    expect(paidOnly.invoices).toEqual([]);

    const created = await sdk(
      invoices.createInvoice(sub.id, {
        invoice: { lineItems: [{ title: 'Data migration', quantity: 1, unitPrice: '120.00' }], memo: 'One-off work' },
      }),
    );
    const uid = created.invoice.uid as string;
    expect(created.invoice).toMatchObject({ status: InvoiceStatus.Open, totalAmount: '120.00', dueAmount: '120.00' });

    const partly = await sdk(
      invoices.recordPaymentForInvoice(uid, {
        payment: { amount: '100.00', memo: 'Wire transfer', method: InvoicePaymentMethodType.Other },
        type: InvoicePaymentType.External,
      }),
    );
    expect(partly).toMatchObject({ status: InvoiceStatus.Open, paidAmount: '100.00', dueAmount: '20.00' });
    const paid = await sdk(
      invoices.recordPaymentForInvoice(uid, {
        payment: { amount: 20, memo: 'Check 1002', method: InvoicePaymentMethodType.Check },
      }),
    );
    expect(paid).toMatchObject({ status: InvoiceStatus.Paid, dueAmount: '0.00' });
    const paymentId = paid.payments?.[0]?.transactionId as number;
    expect(typeof paymentId).toBe('number');

    const refunded = await sdk(
      invoices.refundInvoice(uid, { refund: { amount: '15.00', memo: 'Discount agreed later', paymentId } }),
    );
    expect(refunded.refundAmount).toBe('15.00');

    const notes = await sdk(invoices.listCreditNotes({ subscriptionId: sub.id }));
    expect(notes.creditNotes).toHaveLength(1);
    const note = notes.creditNotes[0]!;
    expect(note).toMatchObject({ totalAmount: '15.00' });
    const readNote = await sdk(invoices.readCreditNote(note.uid as string));
    expect(readNote.originInvoices).toEqual([{ uid, number: created.invoice.number }]);

    const events = await sdk(invoices.listInvoiceEvents({ invoiceUid: uid, page: 1, perPage: 50 }));
    const types = (events.events ?? []).map((event) => event.eventType);
    expect(types).toEqual(
      expect.arrayContaining([
        InvoiceEventType.IssueInvoice,
        InvoiceEventType.ApplyPayment,
        InvoiceEventType.RefundInvoice,
      ]),
    );

    const another = await sdk(
      invoices.createInvoice(sub.id, { invoice: { lineItems: [{ title: 'Typo', quantity: '1', unitPrice: 5 }] } }),
    );
    const voided = await sdk(
      invoices.voidInvoice(another.invoice.uid as string, { mVoid: { reason: 'Created by mistake' } }),
    );
    expect(voided.status).toBe(InvoiceStatus.Voided);
  });

  it('creates a draft invoice and issues it: no number until issued, then the next one', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const sub = await subscribeOverHttp(f);
    const invoices = new InvoicesController(acmeClient(f));
    const created = await sdk(
      invoices.createInvoice(sub.id, {
        invoice: {
          lineItems: [{ title: 'Consulting', quantity: 3, unitPrice: '40.00' }],
          status: CreateInvoiceStatus.Draft,
        },
      }),
    );
    const uid = created.invoice.uid as string;
    expect(created.invoice).toMatchObject({ status: InvoiceStatus.Draft, totalAmount: '120.00' });
    expect(created.invoice.number).toBeUndefined();
    const drafts = await sdk(invoices.listInvoices({ status: InvoiceStatus.Draft }));
    expect(drafts.invoices.map((i) => i.uid)).toEqual([uid]);

    const issued = await sdk(invoices.issueInvoice(uid));
    expect(issued).toMatchObject({
      uid,
      status: InvoiceStatus.Open,
      number: '2',
      sequenceNumber: 2,
      dueAmount: '120.00',
    });
    expect(issued.lineItems?.[0]).toMatchObject({ quantity: '3', unitPrice: '40.00', totalAmount: '120.00' });
    expect(typeof issued.lineItems?.[0]?.transactionId).toBe('number');
    const again = await invoices.issueInvoice(uid).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ApiError);
    expect((again as ApiError).statusCode).toBe(422);
  });

  it('gets the SDK errors the controller declares: 404 for an unknown invoice, a 422 list for a bad payment', async () => {
    const f = fixture();
    await seedCatalog(f.engine);
    const sub = await subscribeOverHttp(f);
    const invoices = new InvoicesController(acmeClient(f));
    const missing = await invoices.readInvoice('inv_doesnotexist').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiError);
    expect((missing as ApiError).statusCode).toBe(404);

    const created = await sdk(
      invoices.createInvoice(sub.id, { invoice: { lineItems: [{ title: 'Work', quantity: 1, unitPrice: '10.00' }] } }),
    );
    const bad = await invoices
      .recordPaymentForInvoice(created.invoice.uid as string, { payment: { amount: '-5.00' } })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ApiError);
    expect((bad as ApiError).statusCode).toBe(422);
    expect((bad as { result?: { errors?: string[] } }).result?.errors).toEqual([
      'Amount: must be greater than or equal to 0.',
    ]);
  });
});
