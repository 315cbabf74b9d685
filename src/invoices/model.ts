/**
 * Invoices, credit notes and statements: the documents built from the ledger. Every amount billed
 * (a charge or credit line posted through `services/posting.ts`) is on exactly one invoice; a
 * payment is applied to the invoice it pays; a refund issues a credit note linked to the invoice
 * whose payment it returns. Amounts are integer minor units, like the ledger; the wire layer
 * formats them as decimal strings.
 *
 * This file holds the records and the engine API's types only; storage lives in the adapters
 * (`invoices` repository) and the commands in `src/invoices/`.
 */
import type { AddressFields } from '../ports/billing-records.js';

/**
 * As the hosted service names them. `draft` is never produced by automatic billing: only an ad-hoc
 * invoice created as a draft is one, until it is issued (or voided or deleted).
 */
export type InvoiceStatus = 'draft' | 'open' | 'paid' | 'voided' | 'canceled';

/** Where an invoice came from. */
export type InvoiceRole = 'signup' | 'renewal' | 'migration' | 'allocation' | 'one_time' | 'adhoc' | 'reactivation';

/** What the site sold from, frozen when the invoice is issued. */
export interface InvoiceSeller {
  readonly name: string;
  readonly address: AddressFields;
  readonly phone: string | null;
}

/** Who is billed, frozen when the invoice is issued. */
export interface InvoiceCustomerSnapshot {
  readonly customerId: number;
  readonly firstName: string;
  readonly lastName: string;
  readonly organization: string | null;
  readonly email: string;
  readonly reference: string | null;
  /** The billing address: the card's billing address when there is one, else the customer's. */
  readonly billingAddress: AddressFields;
}

/** One billed line: a charge (positive) or a credit from proration (negative total). */
export interface InvoiceLineItem {
  /**
   * The ledger line this item shows; every charge/credit line is on exactly one invoice. Null on a
   * draft, whose lines are posted when it is issued.
   */
  readonly transactionId: number | null;
  readonly title: string;
  readonly description: string;
  /** Decimal string, as the service shows quantities ("1", "2.5"). */
  readonly quantity: string;
  readonly unitPriceInCents: number;
  /** Before discounts. */
  readonly subtotalInCents: number;
  /** Positive: how much coupon discount applies to this line. */
  readonly discountInCents: number;
  readonly taxInCents: number;
  /** subtotal - discount + tax. */
  readonly totalInCents: number;
  readonly periodStart: Date | null;
  readonly periodEnd: Date | null;
  readonly productId: number | null;
  readonly componentId: number | null;
  /** The ledger `kind` (e.g. `baseline`, `component`, `prorated`), for titles and reports. */
  readonly kind: string | null;
}

/** A coupon discount on the invoice (its ledger coupon lines, summed per coupon code). */
export interface InvoiceDiscount {
  readonly transactionId: number;
  readonly title: string;
  readonly couponCode: string | null;
  readonly amountInCents: number;
}

export interface InvoiceTax {
  readonly title: string;
  /** Percentage as a decimal string ("8.25"), or null for a fixed amount. */
  readonly percentage: string | null;
  readonly amountInCents: number;
}

/** A payment applied to an invoice (one ledger payment line may pay several invoices). */
export interface InvoicePaymentApplication {
  readonly transactionId: number;
  readonly amountInCents: number;
  readonly memo: string;
  readonly appliedAt: Date;
  /** e.g. `payment`, `external`, `credit` (applied from a credit balance). */
  readonly method: string;
  readonly gatewayTransactionId: string | null;
}

/** Credits applied to the invoice: a prior credit balance, or a credit note. */
export interface InvoiceCreditApplication {
  readonly uid: string;
  readonly memo: string;
  readonly amountInCents: number;
  readonly appliedAt: Date;
}

export interface InvoiceRecord {
  readonly id: number;
  readonly uid: string;
  readonly siteId: number;
  readonly subscriptionId: number;
  readonly customerId: number;
  /**
   * The site's prefix (may be empty) and its gap-free sequence number, e.g. `INV-42`. Null while
   * the invoice is a draft (and for a draft voided before it was issued): the number is taken when
   * it is issued, and never changes after.
   */
  readonly number: string | null;
  readonly sequenceNumber: number | null;
  readonly status: InvoiceStatus;
  readonly role: InvoiceRole;
  readonly collectionMethod: 'automatic' | 'remittance' | 'prepaid';
  /** `YYYY-MM-DD` in the site zone; a draft's is the day it was made, set again when it is issued. */
  readonly issueDate: string;
  readonly dueDate: string;
  readonly paidDate: string | null;
  readonly currency: string;
  readonly memo: string;
  readonly seller: InvoiceSeller;
  readonly customer: InvoiceCustomerSnapshot;
  readonly productName: string | null;
  readonly productFamilyName: string | null;
  /** The billing period the invoice is for (the ledger `periodIndex`), when there is one. */
  readonly periodIndex: number | null;
  readonly periodStart: Date | null;
  readonly periodEnd: Date | null;
  readonly lineItems: readonly InvoiceLineItem[];
  readonly discounts: readonly InvoiceDiscount[];
  readonly taxes: readonly InvoiceTax[];
  readonly credits: readonly InvoiceCreditApplication[];
  readonly payments: readonly InvoicePaymentApplication[];
  /** Sum of line subtotals (credits from proration are negative lines). */
  readonly subtotalInCents: number;
  readonly discountInCents: number;
  readonly taxInCents: number;
  /** subtotal - discount + tax. */
  readonly totalInCents: number;
  readonly creditInCents: number;
  readonly paidInCents: number;
  readonly refundInCents: number;
  /** total - credits - paid, never below zero. */
  readonly dueInCents: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type CreditNoteStatus = 'open' | 'applied';

export interface CreditNoteLineItem {
  readonly title: string;
  readonly description: string;
  readonly quantity: string;
  readonly unitPriceInCents: number;
  readonly subtotalInCents: number;
  readonly taxInCents: number;
  readonly totalInCents: number;
  readonly transactionId: number | null;
}

/** Issued by a refund (or a void of a paid invoice); never exceeds its invoice's paid amount. */
export interface CreditNoteRecord {
  readonly id: number;
  readonly uid: string;
  readonly siteId: number;
  readonly subscriptionId: number;
  readonly customerId: number;
  readonly invoiceUid: string;
  readonly number: string;
  readonly sequenceNumber: number;
  readonly status: CreditNoteStatus;
  readonly issueDate: string;
  readonly currency: string;
  readonly memo: string;
  readonly seller: InvoiceSeller;
  readonly customer: InvoiceCustomerSnapshot;
  readonly lineItems: readonly CreditNoteLineItem[];
  readonly totalInCents: number;
  /** The refund ledger lines this note records. */
  readonly refundTransactionIds: readonly number[];
  readonly createdAt: Date;
}

/** What happened to an invoice, for `GET /invoices/{uid}/events.json`. */
export type InvoiceEventType =
  | 'issue_invoice'
  | 'apply_payment'
  | 'apply_credit_note'
  | 'refund_invoice'
  | 'void_invoice'
  | 'change_invoice_status';

export interface InvoiceEventRecord {
  readonly id: number;
  readonly invoiceUid: string;
  readonly eventType: InvoiceEventType;
  readonly data: Readonly<Record<string, unknown>>;
  readonly createdAt: Date;
}

/** The classic per-period summary of a subscription: one per billing period. */
export interface StatementRecord {
  readonly id: number;
  readonly subscriptionId: number;
  readonly customerId: number;
  readonly periodIndex: number;
  readonly openedAt: Date;
  /** Null while the period is current. */
  readonly closedAt: Date | null;
  readonly openingBalanceInCents: number;
  readonly closingBalanceInCents: number;
  readonly invoiceUids: readonly string[];
  /** Ledger lines of the period, in order. */
  readonly transactionIds: readonly number[];
  readonly totalChargesInCents: number;
  readonly totalPaymentsInCents: number;
  readonly totalCreditsInCents: number;
}

export interface InvoiceListQuery {
  readonly status?: InvoiceStatus;
  readonly subscriptionId?: number;
  readonly customerId?: number;
  readonly number?: string;
  /** `YYYY-MM-DD`, inclusive, against `dateField`. */
  readonly startDate?: string;
  readonly endDate?: string;
  readonly dateField?: 'issue_date' | 'due_date' | 'paid_date' | 'created_at' | 'updated_at';
  readonly page?: number;
  readonly perPage?: number;
  readonly direction?: 'asc' | 'desc';
}

/** An ad-hoc invoice: lines the merchant bills now, outside the subscription's period. */
export interface AdhocInvoiceInput {
  readonly lineItems: readonly {
    readonly title: string;
    readonly description?: string;
    readonly quantity?: string;
    readonly unitPriceInCents: number;
  }[];
  readonly memo?: string;
  /** Days until due; default the site's net terms (0). A draft keeps its terms until it is issued. */
  readonly netTerms?: number;
  /**
   * `open` (the default) issues the invoice at once; `draft` keeps it off the ledger, without a
   * number, until `issue(uid)`.
   */
  readonly status?: 'draft' | 'open';
}

export interface InvoicePaymentInput {
  readonly amountInCents: number;
  readonly memo?: string;
  /** `external` records money taken outside the gateway; `payment` charges the subscription's card. */
  readonly method?: 'external' | 'payment';
}

/** One invoice's share of a {@link MultiInvoicePaymentInput}. */
export interface InvoicePaymentApplicationInput {
  readonly invoiceUid: string;
  readonly amountInCents: number;
}

/** One external payment spread across several open invoices of one customer. */
export interface MultiInvoicePaymentInput {
  /** The whole payment: must equal the sum of the applications. */
  readonly amountInCents: number;
  readonly memo?: string;
  readonly applications: readonly InvoicePaymentApplicationInput[];
}

/** What {@link InvoicesApi.recordMultiplePayment} recorded: one ledger payment line per application. */
export interface MultiInvoicePaymentResult {
  readonly totalInCents: number;
  readonly currency: string;
  readonly applications: readonly {
    readonly invoiceUid: string;
    readonly amountInCents: number;
    /** The ledger payment line that pays this invoice. */
    readonly transactionId: number;
  }[];
}

/** What refreshing an invoice's customer snapshot changes: each part before and after, or null when it is the same. */
export interface InvoiceCustomerChanges {
  readonly payer: {
    readonly before: InvoiceCustomerSnapshot;
    readonly after: InvoiceCustomerSnapshot;
  } | null;
  readonly billingAddress: { readonly before: AddressFields; readonly after: AddressFields } | null;
}

export interface InvoiceRefundInput {
  readonly amountInCents: number;
  readonly memo: string;
  /** The payment to refund; default the invoice's latest payment. */
  readonly paymentTransactionId?: number;
}

/** `site.invoices` on the engine. */
export interface InvoicesApi {
  list(query?: InvoiceListQuery): Promise<{ readonly invoices: InvoiceRecord[]; readonly total: number }>;
  get(uid: string): Promise<InvoiceRecord>;
  events(uid: string): Promise<InvoiceEventRecord[]>;
  /**
   * Voids an open invoice: its lines are reversed on the ledger. A paid invoice cannot be voided. A
   * draft is voided without touching the ledger and keeps no number.
   */
  void(uid: string, reason: string): Promise<InvoiceRecord>;
  recordPayment(uid: string, input: InvoicePaymentInput): Promise<InvoiceRecord>;
  /**
   * Records one payment received outside the gateway for several open invoices of one customer,
   * all or nothing: each application pays its invoice (never more than it owes) with a `manual`
   * payment line of the invoice's subscription, in one transaction.
   */
  recordMultiplePayment(input: MultiInvoicePaymentInput): Promise<MultiInvoicePaymentResult>;
  /** What {@link updateCustomerInformation} would change on an open invoice; nothing is written. */
  previewCustomerInformation(uid: string): Promise<InvoiceCustomerChanges>;
  /**
   * Refreshes an open invoice's customer snapshot (name, organization, email, reference, billing
   * address) from the customer record as it is now, the way a new invoice would take it.
   */
  updateCustomerInformation(uid: string): Promise<InvoiceRecord>;
  refund(uid: string, input: InvoiceRefundInput): Promise<{ invoice: InvoiceRecord; creditNote: CreditNoteRecord }>;
  reopen(uid: string): Promise<InvoiceRecord>;
  /**
   * Issues a draft invoice (ad-hoc invoices may be created as drafts): its lines are posted to the
   * ledger, it takes the site's next number and is open (or paid, when credit covers it).
   */
  issue(uid: string): Promise<InvoiceRecord>;
  /** Deletes a draft invoice; nothing was posted for it, so the ledger is untouched. Only drafts can be deleted. */
  deleteDraft(uid: string): Promise<void>;
  createAdhoc(subscriptionId: number, input: AdhocInvoiceInput): Promise<InvoiceRecord>;
  listCreditNotes(query?: {
    readonly subscriptionId?: number;
    readonly page?: number;
    readonly perPage?: number;
    readonly direction?: 'asc' | 'desc';
  }): Promise<{ readonly creditNotes: CreditNoteRecord[]; readonly total: number }>;
  getCreditNote(uid: string): Promise<CreditNoteRecord>;
  statements(subscriptionId: number): Promise<StatementRecord[]>;
  statement(id: number): Promise<StatementRecord>;
  /** The invoice as a PDF (bytes) or an HTML page, with the metafields whose `invoices` scope is on. */
  render(uid: string, format: 'pdf'): Promise<Uint8Array>;
  render(uid: string, format: 'html'): Promise<string>;
  renderCreditNote(uid: string, format: 'pdf'): Promise<Uint8Array>;
}

/**
 * What a rendered document shows beside the record. The renderers live in
 * `src/invoices/render-pdf.ts` (`renderInvoicePdf`, `renderCreditNotePdf`) and
 * `src/invoices/render-html.ts` (`renderInvoiceHtml`), pure functions of a record and these extras.
 */
export interface DocumentRenderExtras {
  /** Metafields of the subscription/customer whose `invoices` scope is on, in display order. */
  readonly metafields: readonly { readonly name: string; readonly value: string }[];
  /** The site zone, for dates. */
  readonly timeZone: string;
}
