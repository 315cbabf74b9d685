import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import type { InvoiceEventRecord } from '../../src/invoices/model.js';
import { creditNoteJson, serializeCreditNoteList } from '../../src/wire/serialize-credit-note.js';
import {
  invoiceJson,
  serializeInvoice,
  serializeInvoiceEvents,
  serializeInvoiceList,
  wireInvoiceRole,
} from '../../src/wire/serialize-invoice.js';
import { serializeStatement } from '../../src/wire/serialize-statement.js';
import type { WireContext } from '../../src/wire/wire-context.js';
import { sampleCreditNote, sampleInvoice } from '../invoices/support/document-samples.js';

/**
 * The invoice serializers against the official SDK's own response schemas (6.1.0, loaded from the
 * package's CommonJS build): what the SDK's deserializer would do with our JSON after a round trip
 * through text, field by field, including its strict enums and its non-nullable strings.
 */
const requireSdk = createRequire(createRequire(import.meta.url).resolve('@maxio-com/advanced-billing-sdk'));
interface SdkValidation {
  readonly errors: false | readonly { readonly message: string; readonly path: readonly string[] }[];
  readonly result?: unknown;
}
const { validateAndMap } = requireSdk('./schema.js') as {
  validateAndMap(value: unknown, schema: unknown): SdkValidation;
};
const sdkSchema = (file: string, name: string): unknown =>
  (requireSdk(`./models/${file}.js`) as Record<string, unknown>)[name];

/** Validates JSON as the SDK does after parsing a response body; returns the SDK's messages. */
function sdkErrors(json: unknown, schema: unknown): string[] {
  const outcome = validateAndMap(JSON.parse(JSON.stringify(json)), schema);
  return outcome.errors === false ? [] : outcome.errors.map((e) => `${e.path.join('.')}: ${e.message}`);
}

const CONTEXT: WireContext = { timeZone: 'America/New_York', currency: 'USD', compat: 'chargify' };

describe('invoice JSON', () => {
  it('writes amounts as decimal strings, dates as the site zone gives them, and every part of the invoice', () => {
    const json = invoiceJson(sampleInvoice(), CONTEXT);
    expect(json).toMatchObject({
      uid: 'inv_8gk5bwkct3gqt',
      number: 'INV-1042',
      sequence_number: 1042,
      status: 'open',
      role: 'renewal',
      currency: 'USD',
      issue_date: '2026-02-15',
      due_date: '2026-02-15',
      paid_date: null,
      net_terms: 0,
      subtotal_amount: '39.00',
      discount_amount: '3.90',
      tax_amount: '0.00',
      total_amount: '35.10',
      credit_amount: '0.00',
      paid_amount: '20.00',
      due_amount: '15.10',
      refund_amount: '0.00',
      product_name: 'Pro',
      created_at: '2026-02-15T12:00:00-05:00',
      seller: {
        name: 'Acme Projects Inc.',
        phone: '+1 415 555 0100',
        address: { street: '1 Market Street', zip: '94105' },
      },
      customer: { chargify_id: 7, first_name: 'Ada', email: 'ada@example.com', reference: 'ada-1' },
      billing_address: { street: '12 St James Square', line2: null, city: 'London', country: 'GB' },
      recipient_emails: ['ada@example.com'],
    });
    expect(json.line_items).toHaveLength(2);
    expect(json.line_items[1]).toMatchObject({
      title: 'Seats',
      quantity: '2',
      unit_price: '5.00',
      subtotal_amount: '10.00',
      discount_amount: '1.00',
      total_amount: '9.00',
      period_range_start: '2026-02-15',
      period_range_end: '2026-03-15',
      transaction_id: 302,
      component_id: 9,
      kind: 'component',
    });
    expect(json.discounts).toEqual([
      expect.objectContaining({
        code: 'SPRING10',
        discount_amount: '3.90',
        source_type: 'Coupon',
        transaction_id: 303,
      }),
    ]);
    expect(json.payments).toEqual([
      expect.objectContaining({
        applied_amount: '20.00',
        memo: 'Check 1001',
        transaction_id: 304,
        transaction_time: '2026-02-16T10:00:00-05:00',
        payment_method: expect.objectContaining({ type: 'external' }),
      }),
    ]);
  });

  it('is read by the SDK: Invoice, ListInvoicesResponse and InvoiceResponse validate without an error', () => {
    const invoice = sampleInvoice();
    expect(sdkErrors(invoiceJson(invoice, CONTEXT), sdkSchema('invoice', 'invoiceSchema'))).toEqual([]);
    expect(
      sdkErrors(
        serializeInvoiceList([invoice], CONTEXT),
        sdkSchema('listInvoicesResponse', 'listInvoicesResponseSchema'),
      ),
    ).toEqual([]);
    expect(
      sdkErrors(serializeInvoice(invoice, CONTEXT), sdkSchema('invoiceResponse', 'invoiceResponseSchema')),
    ).toEqual([]);
  });

  it('leaves out what the SDK types as a plain string when the record has no value, instead of writing null', () => {
    const invoice = sampleInvoice({
      productName: null,
      productFamilyName: null,
      seller: { ...sampleInvoice().seller, phone: null },
      discounts: [{ transactionId: 1, title: 'Credit', couponCode: null, amountInCents: 100 }],
      taxes: [{ title: 'Flat fee', percentage: null, amountInCents: 50 }],
      lineItems: [{ ...sampleInvoice().lineItems[0]!, periodStart: null, periodEnd: null, kind: null }],
    });
    const json = invoiceJson(invoice, CONTEXT);
    expect(json).not.toHaveProperty('product_name');
    expect(json.seller).not.toHaveProperty('phone');
    expect(json.discounts[0]).not.toHaveProperty('code');
    expect(json.taxes[0]).not.toHaveProperty('percentage');
    expect(json.line_items[0]).not.toHaveProperty('period_range_start');
    expect(json.line_items[0]).not.toHaveProperty('kind');
    expect(sdkErrors(json, sdkSchema('invoice', 'invoiceSchema'))).toEqual([]);
  });

  it('names every role with one the SDK enum knows', () => {
    const schema = sdkSchema('invoice', 'invoiceSchema');
    const roles = ['signup', 'renewal', 'migration', 'allocation', 'one_time', 'adhoc', 'reactivation'] as const;
    for (const role of roles) {
      expect(sdkErrors(invoiceJson(sampleInvoice({ role }), CONTEXT), schema), role).toEqual([]);
    }
    expect(wireInvoiceRole('allocation')).toBe('proration');
    expect(wireInvoiceRole('one_time')).toBe('adhoc');
  });

  it('writes a zero-decimal currency with its own digits', () => {
    const json = invoiceJson(sampleInvoice({ currency: 'JPY', totalInCents: 3510 }), { ...CONTEXT, currency: 'JPY' });
    expect(json.total_amount).toBe('3510');
    expect(json.line_items[0]?.unit_price).toBe('2900');
  });

  it('the SDK check is not blind: a null where it wants a string fails it', () => {
    const broken = { ...invoiceJson(sampleInvoice(), CONTEXT), product_name: null, role: 'allocation' };
    expect(sdkErrors(broken, sdkSchema('invoice', 'invoiceSchema')).length).toBeGreaterThan(0);
  });
});

describe('invoice events JSON', () => {
  const at = new Date('2026-02-16T15:00:00Z');
  const events: InvoiceEventRecord[] = [
    { id: 1, invoiceUid: 'inv_8gk5bwkct3gqt', eventType: 'issue_invoice', data: {}, createdAt: at },
    {
      id: 2,
      invoiceUid: 'inv_8gk5bwkct3gqt',
      eventType: 'apply_payment',
      data: { amountInCents: 2000, memo: 'Check 1001', method: 'external', transactionId: 304 },
      createdAt: at,
    },
    {
      id: 3,
      invoiceUid: 'inv_8gk5bwkct3gqt',
      eventType: 'apply_payment',
      data: { amountInCents: 500, method: 'payment' },
      createdAt: at,
    },
    {
      id: 4,
      invoiceUid: 'inv_8gk5bwkct3gqt',
      eventType: 'refund_invoice',
      data: {
        amountInCents: 750,
        memo: 'Seats',
        creditNoteUid: 'cn_1',
        paymentTransactionId: 304,
        refundTransactionId: 310,
      },
      createdAt: at,
    },
    { id: 5, invoiceUid: 'inv_8gk5bwkct3gqt', eventType: 'void_invoice', data: { reason: 'Duplicate' }, createdAt: at },
    {
      id: 6,
      invoiceUid: 'inv_8gk5bwkct3gqt',
      eventType: 'change_invoice_status',
      data: { fromStatus: 'open', toStatus: 'paid' },
      createdAt: at,
    },
    {
      id: 7,
      invoiceUid: 'inv_8gk5bwkct3gqt',
      eventType: 'apply_credit_note',
      data: { amountInCents: 100, creditNoteUid: 'cn_2', creditNoteNumber: 'CN-2' },
      createdAt: at,
    },
  ];

  it('writes each event type in a shape the SDK union reads as that type', () => {
    const body = serializeInvoiceEvents(
      events,
      sampleInvoice(),
      { page: 1, perPage: 100, total: events.length },
      CONTEXT,
    );
    expect(body.total_pages).toBe(1);
    expect(body.events.map((e) => e.event_type)).toEqual(events.map((e) => e.eventType));
    expect(body.events[1]?.event_data).toMatchObject({ applied_amount: '20.00', memo: 'Check 1001', external: true });
    expect(body.events[3]?.event_data).toMatchObject({ refund_amount: '7.50', payment_id: 304, refund_id: 310 });
    expect(body.events[4]?.event_data).toMatchObject({ reason: 'Duplicate' });
    expect(sdkErrors(body, sdkSchema('listInvoiceEventsResponse', 'listInvoiceEventsResponseSchema'))).toEqual([]);
  });
});

describe('credit note JSON', () => {
  it('writes the note with its origin invoice and amounts, and the SDK reads it', () => {
    const json = creditNoteJson(sampleCreditNote(), CONTEXT, 'INV-1042');
    expect(json).toMatchObject({
      uid: 'cn_7b3zq2k4m9xyw',
      number: 'CN-17',
      status: 'applied',
      issue_date: '2026-02-20',
      total_amount: '7.50',
      applied_amount: '7.50',
      remaining_amount: '0.00',
      origin_invoices: [{ uid: 'inv_8gk5bwkct3gqt', number: 'INV-1042' }],
      refunds: [{ transaction_id: 310, applied_amount: '7.50' }],
    });
    expect(json.line_items[0]).toMatchObject({ title: 'Refund: Seats', unit_price: '7.50', total_amount: '7.50' });
    expect(sdkErrors(json, sdkSchema('creditNote', 'creditNoteSchema'))).toEqual([]);
    const open = creditNoteJson(sampleCreditNote({ status: 'open' }), CONTEXT);
    expect(open).not.toHaveProperty('applied_date');
    expect(open.remaining_amount).toBe('7.50');
    expect(
      sdkErrors(
        serializeCreditNoteList([sampleCreditNote()], CONTEXT),
        sdkSchema('listCreditNotesResponse', 'listCreditNotesResponseSchema'),
      ),
    ).toEqual([]);
  });
});

describe('statement JSON', () => {
  it('writes the period, balances in cents and settled only when closed with nothing owed', () => {
    const statement = {
      id: 3,
      subscriptionId: 12,
      customerId: 7,
      periodIndex: 1,
      openedAt: new Date('2026-02-15T17:00:00Z'),
      closedAt: new Date('2026-03-15T16:00:00Z'),
      openingBalanceInCents: 0,
      closingBalanceInCents: 0,
      invoiceUids: ['inv_8gk5bwkct3gqt'],
      transactionIds: [301, 302, 304],
      totalChargesInCents: 3900,
      totalPaymentsInCents: 3510,
      totalCreditsInCents: 390,
    };
    expect(serializeStatement(statement, CONTEXT).statement).toMatchObject({
      id: 3,
      opened_at: '2026-02-15T12:00:00-05:00',
      closed_at: '2026-03-15T12:00:00-04:00',
      settled_at: '2026-03-15T12:00:00-04:00',
      total_in_cents: 3900,
      paid_in_cents: 3510,
      invoice_uids: ['inv_8gk5bwkct3gqt'],
    });
    expect(serializeStatement({ ...statement, closingBalanceInCents: 150 }, CONTEXT).statement.settled_at).toBeNull();
    expect(serializeStatement({ ...statement, closedAt: null }, CONTEXT).statement.settled_at).toBeNull();
  });
});
