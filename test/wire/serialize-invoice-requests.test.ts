import { describe, expect, it } from 'vitest';
import { BillingError } from '../../src/errors.js';
import {
  asInvoiceErrorMap,
  invoiceVoidRequest,
  readAdhocInvoice,
  readCreditNoteListQuery,
  readInvoiceEventQuery,
  readInvoiceListQuery,
  readInvoicePayment,
  readInvoiceRefund,
} from '../../src/wire/invoice-request.js';
import { parseWireRequest } from '../../src/wire/wire-request.js';

/** The messages of the validation error `run` throws (fails the test when it throws nothing else). */
function messages(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof BillingError && error.code === 'validation') return error.details.map((d) => d.message);
    throw error;
  }
  throw new Error('expected a validation error');
}

describe('invoice payment requests', () => {
  it('reads major-unit amounts of the site currency into minor units, as a string or a number', () => {
    expect(readInvoicePayment({ payment: { amount: '12.34', memo: 'Check 7' } }, 'USD')).toEqual({
      amountInCents: 1234,
      method: 'external',
      memo: 'Check 7',
    });
    expect(readInvoicePayment({ payment: { amount: 5 }, type: 'external' }, 'USD')).toEqual({
      amountInCents: 500,
      method: 'external',
    });
    expect(readInvoicePayment({ payment: { amount: '1500' } }, 'JPY').amountInCents).toBe(1500);
    // No memo: the method and details the client sent say what the money was.
    expect(readInvoicePayment({ payment: { amount: '1', method: 'check', details: 'No. 55' } }, 'USD').memo).toBe(
      'check: No. 55',
    );
  });

  it('refuses a bad amount, a prepayment and a payment profile together, with the service messages', () => {
    expect(
      messages(() =>
        readInvoicePayment({ payment: { amount: 'lots', payment_profile_id: 9 }, type: 'prepayment' }, 'USD'),
      ),
    ).toEqual([
      'Payment profile id: is not supported by this server yet.',
      "Type: must be 'external' or 'payment'; prepayments and service credits on an invoice are not supported by this server yet.",
    ]);
    // `payment` charges the subscription's card.
    expect(readInvoicePayment({ payment: { amount: '1' }, type: 'payment' }, 'USD')).toEqual({
      amountInCents: 100,
      method: 'payment',
    });
    expect(messages(() => readInvoicePayment({ payment: { amount: '1.234' } }, 'USD'))).toEqual([
      'Amount: has more decimal places than USD allows.',
    ]);
    expect(messages(() => readInvoicePayment({ payment: {} }, 'USD'))).toEqual(['Amount: is not a number.']);
    expect(messages(() => readInvoicePayment({ amount: '1.00' }, 'USD'))[0]).toMatch(/"payment" object/);
  });
});

describe('invoice refund and void requests', () => {
  it('reads a refund with its payment id and requires a memo', () => {
    expect(readInvoiceRefund({ refund: { amount: '7.50', memo: 'Seats', payment_id: '304' } }, 'USD')).toEqual({
      amountInCents: 750,
      memo: 'Seats',
      paymentTransactionId: 304,
    });
    expect(messages(() => readInvoiceRefund({ refund: { amount: 'x', memo: ' ' } }, 'USD'))).toEqual([
      'Amount: is not a number.',
      'Memo: cannot be blank.',
    ]);
    expect(
      messages(() =>
        readInvoiceRefund({ refund: { amount: '1', memo: 'm', external: true, apply_credit: 'true' } }, 'USD'),
      ),
    ).toEqual(['External: is not supported by this server yet.', 'Apply credit: is not supported by this server yet.']);
    // `false` asks for what the engine does anyway.
    expect(readInvoiceRefund({ refund: { amount: '1', memo: 'm', external: false } }, 'USD').amountInCents).toBe(100);
  });

  it('reads a void reason and refuses a blank one', () => {
    expect(parseWireRequest(invoiceVoidRequest, { void: { reason: '  Duplicate ' } })).toEqual({ reason: 'Duplicate' });
    expect(messages(() => parseWireRequest(invoiceVoidRequest, { void: { reason: '' } }))).toEqual([
      'Reason: cannot be blank.',
    ]);
  });
});

describe('ad-hoc invoice requests', () => {
  it('reads lines with a default quantity of 1, a memo and net terms', () => {
    expect(
      readAdhocInvoice(
        {
          invoice: {
            line_items: [
              { title: ' Setup ', unit_price: '99.00' },
              { title: 'Hours', quantity: '2.5', unit_price: 40, description: 'Consulting' },
            ],
            memo: 'Thanks',
            net_terms: '30',
            status: 'open',
          },
        },
        'USD',
      ),
    ).toEqual({
      lineItems: [
        { title: 'Setup', quantity: '1', unitPriceInCents: 9900 },
        { title: 'Hours', quantity: '2.5', unitPriceInCents: 4000, description: 'Consulting' },
      ],
      memo: 'Thanks',
      netTerms: 30,
    });
  });

  it('reports every problem of every line at once, each under its line', () => {
    let caught: unknown;
    try {
      readAdhocInvoice(
        {
          invoice: {
            line_items: [
              { title: 'ok', unit_price: '1' },
              { quantity: '-1', unit_price: 'x', product_id: 4 },
            ],
            net_terms: -2,
            status: 'pending',
          },
        },
        'USD',
      );
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(BillingError);
    expect((caught as BillingError).details).toEqual([
      {
        message: "Status: must be 'open' or 'draft'.",
        attribute: 'invoice.status',
      },
      { message: 'Product id: is not supported by this server yet.', attribute: 'invoice.line_items.1.product_id' },
      { message: 'Title: cannot be blank.', attribute: 'invoice.line_items.1.title' },
      { message: 'Quantity: must be a number greater than 0.', attribute: 'invoice.line_items.1.quantity' },
      { message: 'Amount: is not a number.', attribute: 'invoice.line_items.1.unit_price' },
      { message: 'Net terms: must be greater than or equal to 0.', attribute: 'invoice.net_terms' },
    ]);
    const map = asInvoiceErrorMap(caught) as BillingError;
    expect(map.shape).toBe('map');
    expect(messages(() => readAdhocInvoice({ invoice: {} }, 'USD'))).toEqual([
      'Line items: must have at least one line.',
    ]);
  });

  it('reads a draft status; open (or none) is the default', () => {
    const line_items = [{ title: 'Setup', unit_price: '1.00' }];
    expect(readAdhocInvoice({ invoice: { line_items, status: 'draft' } }, 'USD').status).toBe('draft');
    expect(readAdhocInvoice({ invoice: { line_items, status: 'open' } }, 'USD')).not.toHaveProperty('status');
    expect(readAdhocInvoice({ invoice: { line_items } }, 'USD')).not.toHaveProperty('status');
  });
});

describe('invoice list queries', () => {
  it('reads the SDK parameters, skipping empty pairs and include flags', () => {
    expect(
      readInvoiceListQuery({
        status: 'open',
        subscription_id: '12',
        start_date: '2026-01-01',
        end_date: '2026-01-31',
        date_field: 'due_date',
        number: 'INV-7',
        customer_ids: '3',
        page: '2',
        per_page: '500',
        direction: 'DESC',
        line_items: 'true',
        sort: '',
      }),
    ).toEqual({
      page: 2,
      perPage: 200,
      status: 'open',
      subscriptionId: 12,
      customerId: 3,
      number: 'INV-7',
      startDate: '2026-01-01',
      endDate: '2026-01-31',
      dateField: 'due_date',
      direction: 'desc',
    });
    expect(readInvoiceListQuery({ status: '', page: 'x' })).toEqual({ page: 1, perPage: 20 });
  });

  it('refuses filters that cannot match as written', () => {
    expect(
      messages(() =>
        readInvoiceListQuery({
          status: 'late',
          subscription_id: 'abc',
          end_date: '2026-02-30',
          date_field: 'settled_at',
          number: 'A,B',
          customer_ids: '1,2',
        }),
      ),
    ).toEqual([
      'Status: must be one of draft, open, paid, voided, canceled.',
      'Subscription id: must be a positive whole number.',
      'End date: must be a date (YYYY-MM-DD).',
      'Date field: must be one of issue_date, due_date, paid_date, created_at, updated_at.',
      'Number: only one number at a time is supported by this server yet.',
      'Customer ids: only one customer at a time is supported by this server yet.',
    ]);
  });

  it('reads credit note and event queries', () => {
    expect(readCreditNoteListQuery({ subscription_id: '5', direction: 'asc' })).toEqual({
      page: 1,
      perPage: 20,
      subscriptionId: 5,
      direction: 'asc',
    });
    expect(messages(() => readCreditNoteListQuery({ subscription_id: '-1' }))).toEqual([
      'Subscription id: must be a positive whole number.',
    ]);
    expect(readInvoiceEventQuery({ invoice_uid: 'inv_1', per_page: '10' })).toEqual({
      page: 1,
      perPage: 10,
      invoiceUid: 'inv_1',
    });
    expect(readInvoiceEventQuery({})).toEqual({ page: 1, perPage: 100 });
  });
});
