/**
 * The payloads of the document events (`invoice_issued`, `invoice_voided`, `credit_note_created`)
 * and the invoice summary that `payment_success` / `payment_failure` webhooks carry: flat, in the
 * hosted service's field names, amounts as decimal strings of major units as its webhooks send.
 */
import { toMajorString } from '../domain/money/index.js';
import type { CreditNoteRecord, InvoiceRecord } from './model.js';

/** An amount as the service's invoice webhooks show it ("12.50"). */
function amount(cents: number, currency: string): string {
  return toMajorString(cents, currency);
}

/** The invoice fields a payment webhook carries. */
export function invoiceSummary(invoice: InvoiceRecord): Record<string, unknown> {
  const c = invoice.currency;
  return {
    uid: invoice.uid,
    number: invoice.number,
    status: invoice.status,
    issue_date: invoice.issueDate,
    due_date: invoice.dueDate,
    paid_date: invoice.paidDate,
    currency: c,
    subtotal_amount: amount(invoice.subtotalInCents, c),
    discount_amount: amount(invoice.discountInCents, c),
    tax_amount: amount(invoice.taxInCents, c),
    total_amount: amount(invoice.totalInCents, c),
    credit_amount: amount(invoice.creditInCents, c),
    paid_amount: amount(invoice.paidInCents, c),
    refund_amount: amount(invoice.refundInCents, c),
    due_amount: amount(invoice.dueInCents, c),
  };
}

/** The payload of `invoice_issued` and `invoice_voided`. */
export function invoiceEventPayload(
  invoice: InvoiceRecord,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ...invoiceSummary(invoice),
    role: invoice.role,
    subscription_id: invoice.subscriptionId,
    customer_id: invoice.customerId,
    product_name: invoice.productName,
    line_items: invoice.lineItems.map((item) => ({
      title: item.title,
      description: item.description,
      quantity: item.quantity,
      unit_price: amount(item.unitPriceInCents, invoice.currency),
      subtotal_amount: amount(item.subtotalInCents, invoice.currency),
      discount_amount: amount(item.discountInCents, invoice.currency),
      tax_amount: amount(item.taxInCents, invoice.currency),
      total_amount: amount(item.totalInCents, invoice.currency),
      product_id: item.productId,
      component_id: item.componentId,
    })),
    timestamp: invoice.updatedAt.toISOString(),
    ...extra,
  };
}

/** The payload of `credit_note_created`. */
export function creditNoteEventPayload(note: CreditNoteRecord): Record<string, unknown> {
  return {
    uid: note.uid,
    number: note.number,
    invoice_uid: note.invoiceUid,
    subscription_id: note.subscriptionId,
    customer_id: note.customerId,
    issue_date: note.issueDate,
    currency: note.currency,
    memo: note.memo,
    total_amount: amount(note.totalInCents, note.currency),
    status: note.status,
    timestamp: note.createdAt.toISOString(),
  };
}
