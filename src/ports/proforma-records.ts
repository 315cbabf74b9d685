/**
 * The storage port of proforma invoices. The records are those of `src/invoices/proforma-model.ts`;
 * adapters store each one as a document beside the columns that lists filter and sort on.
 */
import type { NewProformaInvoice, ProformaInvoiceRecord, ProformaStatus } from '../invoices/proforma-model.js';

export type * from '../invoices/proforma-model.js';

/** What a proforma invoice list filters on. */
export interface ProformaListFilter {
  /** One subscription's; undefined lists the whole site's (exports). */
  readonly subscriptionId?: number;
  readonly status?: ProformaStatus;
  /** A `YYYY-MM-DD` range, inclusive, on the delivery date. */
  readonly deliveryFrom?: string;
  readonly deliveryTo?: string;
  /** By number. */
  readonly direction: 'asc' | 'desc';
  readonly offset: number;
  readonly limit: number;
}

/** Proforma invoices of a site. */
export interface ProformaInvoicesRepository {
  /**
   * Takes the next number of the site's proforma series (1, 2, 3, ...) in the caller's
   * transaction. Numbers are unique; a rolled-back transaction may give its number back.
   */
  nextNumber(siteId: number): Promise<number>;
  /** Inserts a proforma invoice; a taken `uid` or `number` of the site gives `conflict`. */
  insert(proforma: NewProformaInvoice): Promise<ProformaInvoiceRecord>;
  findByUid(siteId: number, uid: string): Promise<ProformaInvoiceRecord | undefined>;
  /**
   * Voids a `draft` proforma invoice: status `voided`, with the instant and the reason. Returns the
   * voided record, or undefined when there is no such proforma invoice or it is not a draft (so a
   * second void changes nothing).
   */
  void(siteId: number, id: number, voidedAt: Date, reason: string): Promise<ProformaInvoiceRecord | undefined>;
  /** One page of the site's proforma invoices and how many match in all. */
  list(
    siteId: number,
    filter: ProformaListFilter,
  ): Promise<{ proformaInvoices: ProformaInvoiceRecord[]; total: number }>;
}
