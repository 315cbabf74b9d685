/**
 * The storage port of invoices, credit notes and their events (issue #17). The records are the
 * ones of `src/invoices/model.ts`; adapters store each invoice and credit note as a document beside
 * the columns that lists filter and sort on.
 */
import type { CreditNoteRecord, InvoiceEventRecord, InvoiceRecord, InvoiceStatus } from '../invoices/model.js';

export type * from '../invoices/model.js';

/** A new invoice; the adapter assigns `id`. */
export type NewInvoice = Omit<InvoiceRecord, 'id'>;

/** A new credit note; the adapter assigns `id`. */
export type NewCreditNote = Omit<CreditNoteRecord, 'id'>;

/** A new invoice event; the adapter assigns `id`. */
export type NewInvoiceEvent = Omit<InvoiceEventRecord, 'id'>;

/** The numbering series of a site: invoices and credit notes are numbered separately. */
export type DocumentSeries = 'invoice' | 'credit_note';

/** What an invoice list filters on; the service turns the wire query into this. */
export interface InvoiceListFilter {
  readonly status?: InvoiceStatus;
  readonly subscriptionId?: number;
  readonly customerId?: number;
  /** The whole number, prefix included (`INV-42`). */
  readonly number?: string;
  /** A `YYYY-MM-DD` range, inclusive, on one of the document's local dates. */
  readonly localDates?: {
    readonly field: 'issue_date' | 'due_date' | 'paid_date';
    readonly from?: string;
    readonly to?: string;
  };
  /** An instant range, `[from, until)`, on one of the record's instants. */
  readonly instants?: { readonly field: 'created_at' | 'updated_at'; readonly from?: Date; readonly until?: Date };
  /** Order by number (which is issue order); drafts, without one, come after every issued invoice, by id. */
  readonly direction: 'asc' | 'desc';
  readonly offset: number;
  readonly limit: number;
}

/** What a credit-note list filters on. */
export interface CreditNoteListFilter {
  readonly subscriptionId?: number;
  readonly invoiceUid?: string;
  readonly direction: 'asc' | 'desc';
  readonly offset: number;
  readonly limit: number;
}

/** Invoices, credit notes and invoice events of a site. */
export interface InvoicesRepository {
  /**
   * Takes the next number of the site's series (1, 2, 3, ...) in the caller's transaction: a
   * rolled-back transaction gives its number back, and concurrent takers wait on one another, so
   * the numbers that commit have no gaps and no repeats. With `count` (default 1) it takes that
   * many consecutive numbers at once and answers the last of them (the first is `last - count + 1`).
   */
  nextSequence(siteId: number, series: DocumentSeries, count?: number): Promise<number>;
  /**
   * Inserts an invoice. A taken `uid` or `sequenceNumber` of the site gives `conflict`; drafts have
   * no number (null), and any number of them may exist.
   */
  insert(invoice: NewInvoice): Promise<InvoiceRecord>;
  /**
   * Stores `invoice` over the one with its id (status, amounts, applications and `updatedAt`
   * change; `uid` and `createdAt` never do, and `number`/`sequenceNumber` are set once: a stored
   * number is kept, a draft's null takes the given one when it is issued). Undefined when there is
   * no such invoice.
   */
  update(invoice: InvoiceRecord): Promise<InvoiceRecord | undefined>;
  /** Deletes a draft invoice; false (nothing deleted) when there is no such invoice or it is not a draft. */
  deleteDraft(siteId: number, id: number): Promise<boolean>;
  findById(siteId: number, id: number): Promise<InvoiceRecord | undefined>;
  findByUid(siteId: number, uid: string): Promise<InvoiceRecord | undefined>;
  /** A subscription's invoices by number, of one status when given. */
  listForSubscription(siteId: number, subscriptionId: number, status?: InvoiceStatus): Promise<InvoiceRecord[]>;
  /** One page of the site's invoices and how many match in all. */
  list(siteId: number, filter: InvoiceListFilter): Promise<{ invoices: InvoiceRecord[]; total: number }>;
  /** Inserts a credit note. A taken `uid` or `sequenceNumber` gives `conflict`. */
  insertCreditNote(note: NewCreditNote): Promise<CreditNoteRecord>;
  findCreditNoteByUid(siteId: number, uid: string): Promise<CreditNoteRecord | undefined>;
  listCreditNotes(
    siteId: number,
    filter: CreditNoteListFilter,
  ): Promise<{ creditNotes: CreditNoteRecord[]; total: number }>;
  /** Appends an event to an invoice's history. */
  appendEvent(siteId: number, event: NewInvoiceEvent): Promise<InvoiceEventRecord>;
  /** Appends events, in order (one statement on SQL: a post saves several at once, issue 18). */
  appendEvents(siteId: number, events: readonly NewInvoiceEvent[]): Promise<InvoiceEventRecord[]>;
  /** An invoice's events, oldest first. */
  listEvents(siteId: number, invoiceUid: string): Promise<InvoiceEventRecord[]>;
}
