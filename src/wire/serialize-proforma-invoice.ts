import { localDateString } from '../domain/time/index.js';
import type {
  ProformaDiscount,
  ProformaInvoiceContent,
  ProformaInvoiceRecord,
  ProformaLineItem,
  SignupProformaPreview,
} from '../invoices/proforma-model.js';
import {
  type InvoiceAddressJson,
  type InvoiceSellerJson,
  invoiceAddressJson,
  invoiceSellerJson,
  wireAmount,
} from './serialize-invoice.js';
import { type WireContext, wireTimestamp } from './wire-context.js';

/**
 * Proforma invoices as the hosted service writes them (the official SDK's `ProformaInvoice` and
 * its parts): amounts as decimal strings of the document's currency, `delivery_date` as
 * `YYYY-MM-DD` in the site zone, timestamps with the site zone's offset. Fields the SDK types as
 * plain (not nullable) strings are left out when there is no value. A preview, which is not kept,
 * has no `uid` and a null `number`.
 */

/** Which breakdowns a proforma invoice is written with (lists write totals only unless asked). */
export interface ProformaBreakdowns {
  readonly lineItems: boolean;
  readonly discounts: boolean;
  readonly taxes: boolean;
  readonly credits: boolean;
  readonly payments: boolean;
  readonly customFields: boolean;
}

/** Every breakdown: what reads, creates and previews answer. */
export const ALL_BREAKDOWNS: ProformaBreakdowns = {
  lineItems: true,
  discounts: true,
  taxes: true,
  credits: true,
  payments: true,
  customFields: true,
};

export interface ProformaCustomerJson {
  readonly chargify_id: number | null;
  readonly first_name: string;
  readonly last_name: string;
  readonly organization: string | null;
  readonly email: string;
  readonly vat_number: null;
  readonly reference: string | null;
}

export interface ProformaLineItemJson {
  readonly uid?: string;
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
  readonly product_id: number | null;
  readonly component_id: number | null;
  readonly price_point_id: null;
  readonly hide: boolean;
  readonly custom_item: boolean;
  readonly kind?: string;
}

export interface ProformaDiscountJson {
  readonly uid?: string;
  readonly title: string;
  readonly code?: string;
  readonly source_type: 'Coupon';
  readonly discount_type: 'flat_amount';
  readonly eligible_amount: string;
  readonly discount_amount: string;
}

export interface ProformaInvoiceJson {
  readonly uid?: string;
  readonly site_id: number;
  readonly customer_id: number | null;
  readonly subscription_id: number | null;
  readonly number: number | null;
  readonly sequence_number: number | null;
  readonly created_at?: string;
  readonly delivery_date: string;
  readonly status: 'draft' | 'voided';
  readonly collection_method: 'automatic' | 'remittance' | 'prepaid';
  readonly payment_instructions: string;
  readonly currency: string;
  readonly consolidation_level: 'none';
  readonly product_name?: string;
  readonly product_family_name?: string;
  readonly role: ProformaInvoiceContent['role'];
  readonly seller: InvoiceSellerJson;
  readonly customer: ProformaCustomerJson;
  readonly memo: string;
  readonly billing_address: InvoiceAddressJson;
  readonly subtotal_amount: string;
  readonly discount_amount: string;
  readonly tax_amount: string;
  readonly total_amount: string;
  readonly credit_amount: string;
  readonly paid_amount: string;
  readonly refund_amount: string;
  readonly due_amount: string;
  readonly line_items?: ProformaLineItemJson[];
  readonly discounts?: ProformaDiscountJson[];
  readonly taxes?: never[];
  readonly credits?: never[];
  readonly payments?: never[];
  readonly custom_fields?: never[];
  readonly public_url: null;
}

function isStored(content: ProformaInvoiceContent): content is ProformaInvoiceRecord {
  return typeof (content as Partial<ProformaInvoiceRecord>).uid === 'string';
}

function periodDate(key: string, instant: Date | null, context: WireContext): Record<string, string> {
  return instant === null ? {} : { [key]: localDateString(instant, context.timeZone) };
}

function lineItemJson(
  content: ProformaInvoiceContent,
  item: ProformaLineItem,
  index: number,
  context: WireContext,
): ProformaLineItemJson {
  const money = (cents: number) => wireAmount(cents, content.currency);
  return {
    ...(isStored(content) ? { uid: `${content.uid}_li_${index + 1}` } : {}),
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
    product_id: item.productId,
    component_id: item.componentId,
    price_point_id: null,
    hide: false,
    custom_item: false,
    ...(item.kind === null ? {} : { kind: item.kind }),
  };
}

function discountJson(
  content: ProformaInvoiceContent,
  discount: ProformaDiscount,
  index: number,
): ProformaDiscountJson {
  return {
    ...(isStored(content) ? { uid: `${content.uid}_dli_${index + 1}` } : {}),
    title: discount.title,
    ...(discount.couponCode === null ? {} : { code: discount.couponCode }),
    source_type: 'Coupon',
    // The amount taken is kept, not the coupon's rule, so the amount is the discount.
    discount_type: 'flat_amount',
    eligible_amount: wireAmount(content.subtotalInCents, content.currency),
    discount_amount: wireAmount(discount.amountInCents, content.currency),
  };
}

/**
 * A proforma invoice, unwrapped (what `GET /proforma_invoices/{uid}.json` answers), with the
 * breakdowns asked for (default all of them).
 */
export function proformaInvoiceJson(
  content: ProformaInvoiceContent,
  context: WireContext,
  breakdowns: ProformaBreakdowns = ALL_BREAKDOWNS,
): ProformaInvoiceJson {
  const money = (cents: number) => wireAmount(cents, content.currency);
  const stored = isStored(content) ? content : undefined;
  const createdAt = wireTimestamp(content.createdAt, context);
  return {
    ...(stored === undefined ? {} : { uid: stored.uid }),
    site_id: content.siteId,
    customer_id: content.customerId,
    subscription_id: content.subscriptionId,
    number: stored?.number ?? null,
    sequence_number: stored?.number ?? null,
    ...(createdAt === null ? {} : { created_at: createdAt }),
    delivery_date: content.deliveryDate,
    status: stored?.status ?? 'draft',
    collection_method: content.collectionMethod,
    payment_instructions: '',
    currency: content.currency,
    consolidation_level: 'none',
    ...(content.productName === null ? {} : { product_name: content.productName }),
    ...(content.productFamilyName === null ? {} : { product_family_name: content.productFamilyName }),
    role: content.role,
    seller: invoiceSellerJson(content.seller),
    customer: {
      chargify_id: content.customer.customerId,
      first_name: content.customer.firstName,
      last_name: content.customer.lastName,
      organization: content.customer.organization,
      email: content.customer.email,
      vat_number: null,
      reference: content.customer.reference,
    },
    memo: content.memo,
    billing_address: invoiceAddressJson(content.customer.billingAddress),
    subtotal_amount: money(content.subtotalInCents),
    discount_amount: money(content.discountInCents),
    tax_amount: money(content.taxInCents),
    total_amount: money(content.totalInCents),
    credit_amount: money(0),
    paid_amount: money(0),
    refund_amount: money(0),
    due_amount: money(content.dueInCents),
    ...(breakdowns.lineItems
      ? { line_items: content.lineItems.map((item, i) => lineItemJson(content, item, i, context)) }
      : {}),
    ...(breakdowns.discounts ? { discounts: content.discounts.map((d, i) => discountJson(content, d, i)) } : {}),
    ...(breakdowns.taxes ? { taxes: [] } : {}),
    ...(breakdowns.credits ? { credits: [] } : {}),
    ...(breakdowns.payments ? { payments: [] } : {}),
    ...(breakdowns.customFields ? { custom_fields: [] } : {}),
    public_url: null,
  };
}

/**
 * `{"proforma_invoices":[...], "meta":{...}}`: the body of `GET /subscriptions/{id}/proforma_invoices.json`
 * (the SDK's `ListProformaInvoicesResponse`).
 */
export function serializeProformaInvoiceList(
  page: {
    readonly proformaInvoices: readonly ProformaInvoiceRecord[];
    readonly total: number;
    readonly page: number;
    readonly perPage: number;
  },
  context: WireContext,
  breakdowns: ProformaBreakdowns,
) {
  return {
    proforma_invoices: page.proformaInvoices.map((p) => proformaInvoiceJson(p, context, breakdowns)),
    meta: {
      total_count: page.total,
      current_page: page.page,
      total_pages: Math.ceil(page.total / page.perPage),
      status_code: 200,
    },
  };
}

/** `{"proforma_invoice_preview":{current_proforma_invoice, next_proforma_invoice}}` (the SDK's `SignupProformaPreviewResponse`). */
export function serializeSignupProformaPreview(preview: SignupProformaPreview, context: WireContext) {
  return {
    proforma_invoice_preview: {
      current_proforma_invoice: proformaInvoiceJson(preview.current, context),
      ...(preview.next === null ? {} : { next_proforma_invoice: proformaInvoiceJson(preview.next, context) }),
    },
  };
}
