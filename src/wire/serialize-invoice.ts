import { toMajorString } from '../domain/money/conversion.js';
import { localDateString } from '../domain/time/index.js';
import type {
  InvoiceCreditApplication,
  InvoiceCustomerChanges,
  InvoiceCustomerSnapshot,
  InvoiceDiscount,
  InvoiceEventRecord,
  InvoiceLineItem,
  InvoicePaymentApplication,
  InvoiceRecord,
  InvoiceRole,
  InvoiceSeller,
  InvoiceTax,
  MultiInvoicePaymentResult,
} from '../invoices/model.js';
import type { AddressFields } from '../ports/billing-records.js';
import { type WireContext, wireTimestamp } from './wire-context.js';

/**
 * Invoices as the hosted service writes them (the official SDK's `Invoice` model and its parts):
 * amounts as decimal strings in the invoice's currency ("10.00"), `issue_date`/`due_date`/`paid_date`
 * as `YYYY-MM-DD` in the site zone, timestamps with the site zone's offset. The SDK validates every
 * field it knows: a field it types as a plain (not nullable) string is left out when the record has
 * no value, never written as null, so that its deserializer accepts the invoice.
 */

/** `{street, line2, city, state, zip, country}`, the service's invoice address. */
export interface InvoiceAddressJson {
  readonly street: string | null;
  readonly line2: string | null;
  readonly city: string | null;
  readonly state: string | null;
  readonly zip: string | null;
  readonly country: string | null;
}

export interface InvoiceSellerJson {
  readonly name: string;
  readonly address: InvoiceAddressJson;
  readonly phone?: string;
  readonly logo_url: null;
}

export interface InvoiceCustomerJson {
  readonly chargify_id: number;
  readonly first_name: string;
  readonly last_name: string;
  readonly organization: string | null;
  readonly email: string;
  readonly vat_number: null;
  readonly reference: string | null;
}

export interface InvoiceLineItemJson {
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
  readonly period_range_start?: string;
  readonly period_range_end?: string;
  /** Absent on a draft's lines, which are not on the ledger yet (the SDK's field is optional, not nullable). */
  readonly transaction_id?: number;
  readonly product_id: number | null;
  readonly component_id: number | null;
  readonly price_point_id: null;
  readonly hide: boolean;
  readonly custom_item: boolean;
  readonly kind?: string;
}

export interface InvoiceDiscountJson {
  readonly uid: string;
  readonly title: string;
  readonly description: null;
  readonly code?: string;
  readonly source_type: 'Coupon';
  readonly discount_type: 'flat_amount';
  readonly eligible_amount: string;
  readonly discount_amount: string;
  readonly transaction_id: number;
}

export interface InvoiceTaxJson {
  readonly uid: string;
  readonly title: string;
  readonly description: null;
  readonly source_type: 'Tax';
  readonly percentage?: string;
  readonly taxable_amount: string;
  readonly tax_amount: string;
}

export interface InvoiceCreditJson {
  readonly uid: string;
  readonly credit_note_number?: string;
  readonly credit_note_uid?: string;
  readonly transaction_time: string | null;
  readonly memo: string;
  readonly original_amount: string;
  readonly applied_amount: string;
}

export interface InvoicePaymentMethodJson {
  readonly details: string;
  readonly kind: string;
  readonly memo: string;
  readonly type: string;
}

export interface InvoicePaymentJson {
  readonly transaction_time: string | null;
  readonly memo: string;
  readonly original_amount: string;
  readonly applied_amount: string;
  readonly payment_method: InvoicePaymentMethodJson;
  readonly transaction_id: number;
  readonly prepayment: boolean;
  readonly gateway_transaction_id: string | null;
  readonly received_on: string | null;
}

export interface InvoiceJson {
  readonly id: number;
  readonly uid: string;
  readonly site_id: number;
  readonly customer_id: number;
  readonly subscription_id: number;
  /** Absent while the invoice is a draft: it has no number yet (the SDK's fields are optional, not nullable). */
  readonly number?: string;
  readonly sequence_number?: number;
  readonly transaction_time: string | null;
  readonly created_at: string | null;
  readonly updated_at: string | null;
  readonly issue_date: string;
  readonly due_date: string;
  readonly paid_date: string | null;
  readonly status: InvoiceRecord['status'];
  readonly role: WireInvoiceRole;
  readonly parent_invoice_id: null;
  readonly collection_method: InvoiceRecord['collectionMethod'];
  readonly payment_instructions: string;
  readonly currency: string;
  readonly consolidation_level: 'none';
  readonly parent_invoice_uid: null;
  readonly subscription_group_id: null;
  readonly parent_invoice_number: null;
  readonly group_primary_subscription_id: null;
  readonly product_name?: string;
  readonly product_family_name?: string;
  readonly seller: InvoiceSellerJson;
  readonly customer: InvoiceCustomerJson;
  readonly payer: InvoiceCustomerJson;
  readonly recipient_emails: string[];
  readonly net_terms: number;
  readonly memo: string;
  readonly billing_address: InvoiceAddressJson;
  readonly subtotal_amount: string;
  readonly discount_amount: string;
  readonly tax_amount: string;
  readonly total_amount: string;
  readonly credit_amount: string;
  readonly debit_amount: string;
  readonly refund_amount: string;
  readonly paid_amount: string;
  readonly due_amount: string;
  readonly line_items: InvoiceLineItemJson[];
  readonly discounts: InvoiceDiscountJson[];
  readonly taxes: InvoiceTaxJson[];
  readonly credits: InvoiceCreditJson[];
  readonly debits: never[];
  readonly payments: InvoicePaymentJson[];
}

/** The roles the service (and the SDK's `InvoiceRole` enum) knows. */
export type WireInvoiceRole = 'signup' | 'renewal' | 'migration' | 'adhoc' | 'reactivation' | 'proration';

/**
 * The service's role for an invoice's origin. It has no `allocation` or `one_time` role: an
 * allocation's prorated charge is a `proration` invoice and a one-time charge an `adhoc` one,
 * which keeps the SDK's strict enum able to read every invoice this server issues.
 */
export function wireInvoiceRole(role: InvoiceRole): WireInvoiceRole {
  if (role === 'allocation') return 'proration';
  if (role === 'one_time') return 'adhoc';
  return role;
}

/** An amount of the invoice's currency as the service's decimal string ("10.00"). */
export function wireAmount(amountInCents: number, currency: string): string {
  return toMajorString(amountInCents, currency);
}

/** The engine's address fields as the service's invoice address. */
export function invoiceAddressJson(address: AddressFields): InvoiceAddressJson {
  return {
    street: address.address,
    line2: address.address2,
    city: address.city,
    state: address.state,
    zip: address.zip,
    country: address.country,
  };
}

export function invoiceSellerJson(seller: InvoiceSeller): InvoiceSellerJson {
  return {
    name: seller.name,
    address: invoiceAddressJson(seller.address),
    ...(seller.phone === null ? {} : { phone: seller.phone }),
    logo_url: null,
  };
}

export function invoiceCustomerJson(customer: InvoiceCustomerSnapshot): InvoiceCustomerJson {
  return {
    chargify_id: customer.customerId,
    first_name: customer.firstName,
    last_name: customer.lastName,
    organization: customer.organization,
    email: customer.email,
    vat_number: null,
    reference: customer.reference,
  };
}

/** A period bound as the service writes line item ranges: the calendar date in the site zone. */
function periodDate(key: string, instant: Date | null, context: WireContext): Record<string, string> {
  return instant === null ? {} : { [key]: localDateString(instant, context.timeZone) };
}

/** Whole days from `from` to `to` (`YYYY-MM-DD` each): the invoice's net terms. */
function daysBetween(from: string, to: string): number {
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000;
  return Number.isFinite(days) ? Math.max(0, Math.round(days)) : 0;
}

function lineItemJson(
  invoice: InvoiceRecord,
  item: InvoiceLineItem,
  index: number,
  context: WireContext,
): InvoiceLineItemJson {
  const money = (cents: number) => wireAmount(cents, invoice.currency);
  return {
    uid: `${invoice.uid}_li_${index + 1}`,
    title: item.title,
    description: item.description,
    quantity: item.quantity,
    unit_price: money(item.unitPriceInCents),
    subtotal_amount: money(item.subtotalInCents),
    discount_amount: money(item.discountInCents),
    tax_amount: money(item.taxInCents),
    total_amount: money(item.totalInCents),
    tiered_unit_price: false,
    ...periodDate('period_range_start', item.periodStart, context),
    ...periodDate('period_range_end', item.periodEnd, context),
    ...(item.transactionId === null ? {} : { transaction_id: item.transactionId }),
    product_id: item.productId,
    component_id: item.componentId,
    price_point_id: null,
    hide: false,
    custom_item: invoice.role === 'adhoc',
    ...(item.kind === null ? {} : { kind: item.kind }),
  };
}

function discountJson(invoice: InvoiceRecord, discount: InvoiceDiscount, index: number): InvoiceDiscountJson {
  return {
    uid: `${invoice.uid}_dli_${index + 1}`,
    title: discount.title,
    description: null,
    ...(discount.couponCode === null ? {} : { code: discount.couponCode }),
    source_type: 'Coupon',
    // The record keeps the amount taken, not the coupon's rule, so the amount is the discount.
    discount_type: 'flat_amount',
    eligible_amount: wireAmount(invoice.subtotalInCents, invoice.currency),
    discount_amount: wireAmount(discount.amountInCents, invoice.currency),
    transaction_id: discount.transactionId,
  };
}

function taxJson(invoice: InvoiceRecord, tax: InvoiceTax, index: number): InvoiceTaxJson {
  return {
    uid: `${invoice.uid}_tli_${index + 1}`,
    title: tax.title,
    description: null,
    source_type: 'Tax',
    ...(tax.percentage === null ? {} : { percentage: tax.percentage }),
    taxable_amount: wireAmount(invoice.subtotalInCents - invoice.discountInCents, invoice.currency),
    tax_amount: wireAmount(tax.amountInCents, invoice.currency),
  };
}

function creditJson(invoice: InvoiceRecord, credit: InvoiceCreditApplication, context: WireContext): InvoiceCreditJson {
  const amount = wireAmount(credit.amountInCents, invoice.currency);
  // Credit note uids start with `cn_`; a prior credit balance has no note to name.
  const note = credit.uid.startsWith('cn_') ? { credit_note_uid: credit.uid } : {};
  return {
    uid: credit.uid,
    ...note,
    transaction_time: wireTimestamp(credit.appliedAt, context),
    memo: credit.memo,
    original_amount: amount,
    applied_amount: amount,
  };
}

/** The service's payment method kinds: a gateway payment is a card payment, anything else external. */
function paymentMethodJson(payment: InvoicePaymentApplication): InvoicePaymentMethodJson {
  const card = payment.method === 'payment';
  return {
    details: card ? '' : payment.memo,
    kind: card ? 'credit_card' : payment.method === 'credit' ? 'other' : 'external',
    memo: payment.memo,
    type: card ? 'credit_card' : 'external',
  };
}

function paymentJson(
  invoice: InvoiceRecord,
  payment: InvoicePaymentApplication,
  context: WireContext,
): InvoicePaymentJson {
  const amount = wireAmount(payment.amountInCents, invoice.currency);
  return {
    transaction_time: wireTimestamp(payment.appliedAt, context),
    memo: payment.memo,
    original_amount: amount,
    applied_amount: amount,
    payment_method: paymentMethodJson(payment),
    transaction_id: payment.transactionId,
    prepayment: false,
    gateway_transaction_id: payment.gatewayTransactionId,
    received_on: localDateString(payment.appliedAt, context.timeZone),
  };
}

/** The fields of an invoice, unwrapped: what `GET /invoices/{uid}.json` answers. */
export function invoiceJson(invoice: InvoiceRecord, context: WireContext): InvoiceJson {
  const money = (cents: number) => wireAmount(cents, invoice.currency);
  const customer = invoiceCustomerJson(invoice.customer);
  return {
    id: invoice.id,
    uid: invoice.uid,
    site_id: invoice.siteId,
    customer_id: invoice.customerId,
    subscription_id: invoice.subscriptionId,
    ...(invoice.number === null ? {} : { number: invoice.number }),
    ...(invoice.sequenceNumber === null ? {} : { sequence_number: invoice.sequenceNumber }),
    transaction_time: wireTimestamp(invoice.createdAt, context),
    created_at: wireTimestamp(invoice.createdAt, context),
    updated_at: wireTimestamp(invoice.updatedAt, context),
    issue_date: invoice.issueDate,
    due_date: invoice.dueDate,
    paid_date: invoice.paidDate,
    status: invoice.status,
    role: wireInvoiceRole(invoice.role),
    parent_invoice_id: null,
    collection_method: invoice.collectionMethod,
    payment_instructions: '',
    currency: invoice.currency,
    consolidation_level: 'none',
    parent_invoice_uid: null,
    subscription_group_id: null,
    parent_invoice_number: null,
    group_primary_subscription_id: null,
    ...(invoice.productName === null ? {} : { product_name: invoice.productName }),
    ...(invoice.productFamilyName === null ? {} : { product_family_name: invoice.productFamilyName }),
    seller: invoiceSellerJson(invoice.seller),
    customer,
    payer: customer,
    recipient_emails: invoice.customer.email === '' ? [] : [invoice.customer.email],
    net_terms: daysBetween(invoice.issueDate, invoice.dueDate),
    memo: invoice.memo,
    billing_address: invoiceAddressJson(invoice.customer.billingAddress),
    subtotal_amount: money(invoice.subtotalInCents),
    discount_amount: money(invoice.discountInCents),
    tax_amount: money(invoice.taxInCents),
    total_amount: money(invoice.totalInCents),
    credit_amount: money(invoice.creditInCents),
    debit_amount: money(0),
    refund_amount: money(invoice.refundInCents),
    paid_amount: money(invoice.paidInCents),
    due_amount: money(invoice.dueInCents),
    line_items: invoice.lineItems.map((item, index) => lineItemJson(invoice, item, index, context)),
    discounts: invoice.discounts.map((discount, index) => discountJson(invoice, discount, index)),
    taxes: invoice.taxes.map((tax, index) => taxJson(invoice, tax, index)),
    credits: invoice.credits.map((credit) => creditJson(invoice, credit, context)),
    debits: [],
    payments: invoice.payments.map((payment) => paymentJson(invoice, payment, context)),
  };
}

/** `{"invoice":{...}}`: the body of `POST /subscriptions/{id}/invoices.json` (the SDK's `InvoiceResponse`). */
export function serializeInvoice(invoice: InvoiceRecord, context: WireContext): { invoice: InvoiceJson } {
  return { invoice: invoiceJson(invoice, context) };
}

/** `{"invoices":[...]}`: the body of `GET /invoices.json` (the SDK's `ListInvoicesResponse`). */
export function serializeInvoiceList(
  invoices: readonly InvoiceRecord[],
  context: WireContext,
): { invoices: InvoiceJson[] } {
  return { invoices: invoices.map((invoice) => invoiceJson(invoice, context)) };
}

/** One invoice event as the service lists them: `{id, timestamp, invoice, event_type, event_data}`. */
export interface InvoiceEventJson {
  readonly id: number;
  readonly timestamp: string | null;
  readonly invoice: InvoiceJson;
  readonly event_type: InvoiceEventRecord['eventType'];
  readonly event_data: Record<string, unknown>;
}

/** The body of `GET /invoices/events.json`: the events, with the page they are and how many pages there are. */
export interface InvoiceEventListJson {
  readonly events: InvoiceEventJson[];
  readonly page: number;
  readonly per_page: number;
  readonly total_pages: number;
}

const STATUS_NAMES: ReadonlySet<string> = new Set(['draft', 'open', 'paid', 'pending', 'voided', 'canceled']);

function textOf(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : fallback;
}

function statusOf(value: unknown, fallback: string): string {
  return typeof value === 'string' && STATUS_NAMES.has(value) ? value : fallback;
}

function centsText(value: unknown, currency: string): string | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) ? wireAmount(value, currency) : undefined;
}

/**
 * An event's data in the shape the SDK requires for its type. The engine records what happened in
 * its own words (`data`, amounts in cents); each type's required fields are filled from it, or from
 * the invoice when the engine did not record them, so that the SDK's union of event shapes matches.
 */
function eventDataJson(
  event: InvoiceEventRecord,
  invoice: InvoiceRecord,
  context: WireContext,
): Record<string, unknown> {
  const data = event.data;
  const currency = invoice.currency;
  const time = wireTimestamp(event.createdAt, context);
  const amount = (key: string, fallback: number) => centsText(data[key], currency) ?? wireAmount(fallback, currency);
  switch (event.eventType) {
    case 'issue_invoice':
      return {
        consolidation_level: 'none',
        from_status: statusOf(data.fromStatus, 'draft'),
        to_status: statusOf(data.toStatus, 'open'),
        due_amount: amount('dueInCents', invoice.dueInCents),
        total_amount: amount('totalInCents', invoice.totalInCents),
      };
    case 'apply_payment': {
      const external = data.method !== 'payment';
      return {
        consolidation_level: 'none',
        memo: textOf(data.memo, ''),
        original_amount: amount('amountInCents', invoice.paidInCents),
        applied_amount: amount('amountInCents', invoice.paidInCents),
        transaction_time: time,
        payment_method: external
          ? { type: 'external', kind: 'external', details: null, memo: textOf(data.memo, '') }
          : {
              type: 'credit_card',
              card_brand: textOf(data.cardBrand, 'card'),
              // The event keeps no card digits; the service's fully masked form when it has none.
              masked_card_number: textOf(data.maskedCardNumber, 'XXXX-XXXX-XXXX-XXXX'),
            },
        ...(typeof data.transactionId === 'number' ? { transaction_id: data.transactionId } : {}),
        prepayment: false,
        external,
      };
    }
    case 'apply_credit_note':
      return {
        uid: textOf(data.creditNoteUid, ''),
        credit_note_number: textOf(data.creditNoteNumber, ''),
        credit_note_uid: textOf(data.creditNoteUid, ''),
        original_amount: amount('amountInCents', 0),
        applied_amount: amount('amountInCents', 0),
        transaction_time: time,
        memo: textOf(data.memo, ''),
      };
    case 'refund_invoice':
      return {
        apply_credit: false,
        consolidation_level: 'none',
        credit_note_attributes: { uid: textOf(data.creditNoteUid, ''), number: textOf(data.creditNoteNumber, '') },
        memo: textOf(data.memo, ''),
        original_amount: amount('amountInCents', invoice.refundInCents),
        payment_id: typeof data.paymentTransactionId === 'number' ? data.paymentTransactionId : 0,
        refund_amount: amount('amountInCents', invoice.refundInCents),
        refund_id: typeof data.refundTransactionId === 'number' ? data.refundTransactionId : 0,
        transaction_time: time,
      };
    case 'void_invoice':
      return {
        credit_note_attributes: null,
        memo: typeof data.memo === 'string' ? data.memo : null,
        applied_amount: centsText(data.amountInCents, currency) ?? null,
        transaction_time: time,
        is_advance_invoice: false,
        reason: textOf(data.reason, ''),
      };
    case 'change_invoice_status':
      return {
        from_status: statusOf(data.fromStatus, invoice.status),
        to_status: statusOf(data.toStatus, invoice.status),
        consolidation_level: 'none',
        ...(centsText(data.amountInCents, currency) === undefined
          ? {}
          : { amount: centsText(data.amountInCents, currency) }),
      };
  }
}

/** One event, with the invoice it is about (as it is now, as the service shows it). */
export function invoiceEventJson(
  event: InvoiceEventRecord,
  invoice: InvoiceRecord,
  context: WireContext,
): InvoiceEventJson {
  return {
    id: event.id,
    timestamp: wireTimestamp(event.createdAt, context),
    invoice: invoiceJson(invoice, context),
    event_type: event.eventType,
    event_data: eventDataJson(event, invoice, context),
  };
}

/** The body of `GET /invoices/events.json` for one page of events. */
export function serializeInvoiceEvents(
  events: readonly InvoiceEventRecord[],
  invoice: InvoiceRecord,
  page: { readonly page: number; readonly perPage: number; readonly total: number },
  context: WireContext,
): InvoiceEventListJson {
  return {
    events: events.map((event) => invoiceEventJson(event, invoice, context)),
    page: page.page,
    per_page: page.perPage,
    total_pages: Math.ceil(page.total / page.perPage),
  };
}

/**
 * `{"payment":{transaction_id, total_amount, currency_code, applications:[...]}}`: the answer to
 * `POST /invoices/payments.json`. `transaction_id` is the first application's ledger line; each
 * application's `application_uid` names its own line (`pmt_<ledger id>`).
 */
export function serializeMultiInvoicePayment(result: MultiInvoicePaymentResult) {
  return {
    payment: {
      transaction_id: result.applications[0]?.transactionId ?? null,
      total_amount: wireAmount(result.totalInCents, result.currency),
      currency_code: result.currency,
      applications: result.applications.map((a) => ({
        invoice_uid: a.invoiceUid,
        application_uid: `pmt_${a.transactionId}`,
        applied_amount: wireAmount(a.amountInCents, result.currency),
      })),
    },
  };
}

/**
 * `{"changes":{payer, billing_address, shipping_address, custom_fields}}`: the preview of an
 * invoice's customer information refresh; an unchanged part is null. The engine keeps no
 * shipping address or custom fields on invoices, so those are always null.
 */
export function serializeCustomerChanges(changes: InvoiceCustomerChanges) {
  const payer = (p: InvoiceCustomerSnapshot) => ({
    first_name: p.firstName,
    last_name: p.lastName,
    organization: p.organization,
    email: p.email,
  });
  return {
    changes: {
      payer: changes.payer && { before: payer(changes.payer.before), after: payer(changes.payer.after) },
      billing_address: changes.billingAddress && {
        before: invoiceAddressJson(changes.billingAddress.before),
        after: invoiceAddressJson(changes.billingAddress.after),
      },
      shipping_address: null,
      custom_fields: null,
    },
  };
}
