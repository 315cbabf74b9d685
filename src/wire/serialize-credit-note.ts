import { localDateString } from '../domain/time/index.js';
import type { CreditNoteLineItem, CreditNoteRecord } from '../invoices/model.js';
import {
  type InvoiceAddressJson,
  type InvoiceCustomerJson,
  type InvoiceSellerJson,
  invoiceAddressJson,
  invoiceCustomerJson,
  invoiceSellerJson,
  wireAmount,
} from './serialize-invoice.js';
import type { WireContext } from './wire-context.js';

/**
 * Credit notes as the hosted service writes them (the official SDK's `CreditNote` model): the same
 * seller, customer and address shapes as an invoice, amounts as decimal strings, `issue_date` as
 * `YYYY-MM-DD` in the site zone, and `origin_invoices` naming the invoice whose payment it returns.
 */

export interface CreditNoteLineItemJson {
  readonly uid: string;
  readonly title: string;
  readonly description: string;
  readonly quantity: string;
  readonly unit_price: string;
  readonly subtotal_amount: string;
  readonly discount_amount: string;
  readonly tax_amount: string;
  readonly total_amount: string;
  readonly tiered_unit_price: boolean;
  readonly component_id: null;
  readonly price_point_id: null;
  readonly custom_item: boolean;
}

export interface CreditNoteRefundJson {
  readonly transaction_id: number;
  readonly memo: string;
  readonly original_amount?: string;
  readonly applied_amount?: string;
}

export interface CreditNoteJson {
  readonly uid: string;
  readonly site_id: number;
  readonly customer_id: number;
  readonly subscription_id: number;
  readonly number: string;
  readonly sequence_number: number;
  readonly issue_date: string;
  readonly applied_date?: string;
  readonly status: CreditNoteRecord['status'];
  readonly currency: string;
  readonly memo: string;
  readonly seller: InvoiceSellerJson;
  readonly customer: InvoiceCustomerJson;
  readonly billing_address: InvoiceAddressJson;
  readonly subtotal_amount: string;
  readonly discount_amount: string;
  readonly tax_amount: string;
  readonly total_amount: string;
  readonly applied_amount: string;
  readonly remaining_amount: string;
  readonly line_items: CreditNoteLineItemJson[];
  readonly discounts: never[];
  readonly taxes: never[];
  readonly applications: never[];
  readonly refunds: CreditNoteRefundJson[];
  readonly origin_invoices: { readonly uid: string; readonly number?: string }[];
}

function lineItemJson(note: CreditNoteRecord, item: CreditNoteLineItem, index: number): CreditNoteLineItemJson {
  const money = (cents: number) => wireAmount(cents, note.currency);
  return {
    uid: `${note.uid}_li_${index + 1}`,
    title: item.title,
    description: item.description,
    quantity: item.quantity,
    unit_price: money(item.unitPriceInCents),
    subtotal_amount: money(item.subtotalInCents),
    discount_amount: money(0),
    tax_amount: money(item.taxInCents),
    total_amount: money(item.totalInCents),
    tiered_unit_price: false,
    component_id: null,
    price_point_id: null,
    custom_item: false,
  };
}

/**
 * The refund lines a note records. The record keeps the note's total, not each line's amount, so
 * amounts are shown only when one line carries the whole note (the engine's case).
 */
function refundsJson(note: CreditNoteRecord): CreditNoteRefundJson[] {
  const ids = note.refundTransactionIds;
  const total = wireAmount(note.totalInCents, note.currency);
  if (ids.length === 1) {
    return [{ transaction_id: ids[0] as number, memo: note.memo, original_amount: total, applied_amount: total }];
  }
  return ids.map((transactionId) => ({ transaction_id: transactionId, memo: note.memo }));
}

/**
 * The fields of a credit note, unwrapped: what `GET /credit_notes/{uid}.json` answers. A note
 * issued by a refund has returned its whole amount to the customer, so it is fully applied (to the
 * refund) and nothing remains; `invoiceNumber` names the origin invoice when the caller knows it.
 */
export function creditNoteJson(note: CreditNoteRecord, context: WireContext, invoiceNumber?: string): CreditNoteJson {
  const money = (cents: number) => wireAmount(cents, note.currency);
  const subtotal = note.lineItems.reduce((sum, item) => sum + item.subtotalInCents, 0);
  const tax = note.lineItems.reduce((sum, item) => sum + item.taxInCents, 0);
  const applied = note.status === 'applied' ? note.totalInCents : 0;
  return {
    uid: note.uid,
    site_id: note.siteId,
    customer_id: note.customerId,
    subscription_id: note.subscriptionId,
    number: note.number,
    sequence_number: note.sequenceNumber,
    issue_date: note.issueDate,
    ...(note.status === 'applied' ? { applied_date: localDateString(note.createdAt, context.timeZone) } : {}),
    status: note.status,
    currency: note.currency,
    memo: note.memo,
    seller: invoiceSellerJson(note.seller),
    customer: invoiceCustomerJson(note.customer),
    billing_address: invoiceAddressJson(note.customer.billingAddress),
    subtotal_amount: money(subtotal),
    discount_amount: money(0),
    tax_amount: money(tax),
    total_amount: money(note.totalInCents),
    applied_amount: money(applied),
    remaining_amount: money(note.totalInCents - applied),
    line_items: note.lineItems.map((item, index) => lineItemJson(note, item, index)),
    discounts: [],
    taxes: [],
    applications: [],
    refunds: refundsJson(note),
    origin_invoices: [{ uid: note.invoiceUid, ...(invoiceNumber === undefined ? {} : { number: invoiceNumber }) }],
  };
}

/** `{"credit_note":{...}}`, the wrapped form (webhook payloads and the spec's wrapped answers). */
export function serializeCreditNote(
  note: CreditNoteRecord,
  context: WireContext,
  invoiceNumber?: string,
): { credit_note: CreditNoteJson } {
  return { credit_note: creditNoteJson(note, context, invoiceNumber) };
}

/** `{"credit_notes":[...]}`: the body of `GET /credit_notes.json` (the SDK's `ListCreditNotesResponse`). */
export function serializeCreditNoteList(
  notes: readonly CreditNoteRecord[],
  context: WireContext,
): { credit_notes: CreditNoteJson[] } {
  return { credit_notes: notes.map((note) => creditNoteJson(note, context)) };
}
