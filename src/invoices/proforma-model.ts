/**
 * Proforma invoices: documents that show what a subscription's next renewal, or a signup, would
 * bill, without billing anything. A proforma invoice is never on the ledger, takes no number of
 * the site's invoice series, takes no payment and sends no event; it is a snapshot, kept (or, for
 * a preview, only shown) as it was when it was made. Amounts are integer minor units.
 *
 * This file holds the records and the engine API's types; storage is the `proformaInvoices`
 * repository (`src/ports/proforma-records.ts`) and the commands are in `proforma-service.ts`.
 */
import type { InvoiceCustomerSnapshot, InvoiceSeller } from './model.js';

/** `draft` when made; `voided` once voided (a proforma invoice is voided at most once). */
export type ProformaStatus = 'draft' | 'voided';

/**
 * The service's proforma roles: `proforma_adhoc` for one made on request (every proforma invoice
 * of this engine), `proforma_automatic` for one the service makes on its own schedule.
 */
export type ProformaRole = 'proforma_adhoc' | 'proforma_automatic';

/** One line a proforma invoice shows: what the renewal or signup would charge. */
export interface ProformaLineItem {
  readonly title: string;
  /** The line's kind in words (`baseline`, `initial`, `quantity_based_component`, ...). */
  readonly description: string;
  /** Decimal string, as the service shows quantities. */
  readonly quantity: string;
  readonly unitPriceInCents: number;
  /** Before discounts. */
  readonly subtotalInCents: number;
  /** Positive: the coupon discount that applies to this line. */
  readonly discountInCents: number;
  readonly taxInCents: number;
  /** subtotal - discount + tax. */
  readonly totalInCents: number;
  readonly periodStart: Date | null;
  readonly periodEnd: Date | null;
  readonly productId: number | null;
  readonly componentId: number | null;
  /** The ledger kind the line would be written with. */
  readonly kind: string | null;
}

/**
 * Who the proforma invoice is for, as an invoice's customer snapshot; `customerId` is null for a
 * signup's proforma invoice that names a new customer (none exists yet).
 */
export interface ProformaCustomerSnapshot extends Omit<InvoiceCustomerSnapshot, 'customerId'> {
  readonly customerId: number | null;
}

/** A coupon discount the proforma invoice shows. */
export interface ProformaDiscount {
  readonly title: string;
  readonly couponCode: string | null;
  readonly amountInCents: number;
}

/**
 * What a proforma invoice shows, stored or not: a preview answers one of these and keeps nothing.
 * `subscriptionId` is null for a signup's proforma invoice (there is no subscription yet), and
 * `customerId` when the signup names a new customer rather than an existing one.
 */
export interface ProformaInvoiceContent {
  readonly siteId: number;
  readonly subscriptionId: number | null;
  readonly customerId: number | null;
  readonly role: ProformaRole;
  readonly collectionMethod: 'automatic' | 'remittance' | 'prepaid';
  /** `YYYY-MM-DD` in the site zone: the day the billing it shows would happen. */
  readonly deliveryDate: string;
  readonly currency: string;
  readonly memo: string;
  readonly seller: InvoiceSeller;
  readonly customer: ProformaCustomerSnapshot;
  readonly productName: string | null;
  readonly productFamilyName: string | null;
  readonly periodStart: Date | null;
  readonly periodEnd: Date | null;
  readonly lineItems: readonly ProformaLineItem[];
  readonly discounts: readonly ProformaDiscount[];
  /** Sum of the line subtotals. */
  readonly subtotalInCents: number;
  readonly discountInCents: number;
  readonly taxInCents: number;
  /** subtotal - discount + tax. */
  readonly totalInCents: number;
  /** What would be due: the total (a proforma invoice takes no payment or credit). */
  readonly dueInCents: number;
  /** When it was made (stored) or shown (preview): the engine clock's instant. */
  readonly createdAt: Date;
}

/** A stored proforma invoice. */
export interface ProformaInvoiceRecord extends ProformaInvoiceContent {
  readonly id: number;
  /** `pro_` and 14 lower-case base-32 characters; unique per site. */
  readonly uid: string;
  /** The site's proforma series (1, 2, 3, ...), separate from invoice numbers; unique per site. */
  readonly number: number;
  readonly status: ProformaStatus;
  readonly voidedAt: Date | null;
  readonly voidReason: string | null;
}

/** A proforma invoice to store; the adapter assigns `id`. */
export type NewProformaInvoice = Omit<ProformaInvoiceRecord, 'id'>;

/** Query of a subscription's proforma invoices (`GET /subscriptions/{id}/proforma_invoices.json`). */
export interface ProformaListQuery {
  readonly status?: ProformaStatus;
  /** `YYYY-MM-DD`, inclusive, against the delivery date. */
  readonly startDate?: string;
  readonly endDate?: string;
  readonly page?: number;
  readonly perPage?: number;
  /** By number; default `desc` (newest first). */
  readonly direction?: 'asc' | 'desc';
}

/** What a signup's proforma preview shows: the signup's own bill, and its first renewal when asked. */
export interface SignupProformaPreview {
  readonly current: ProformaInvoiceContent;
  readonly next: ProformaInvoiceContent | null;
}
