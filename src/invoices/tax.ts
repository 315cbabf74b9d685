/**
 * The tax hook of invoices: what taxes an invoice's lines carry. The engine ships only the no-tax
 * default; a tax service (Avalara, a VAT table) would implement this port. A non-zero tax also
 * needs a ledger line so that invoice totals keep equalling the ledger, which is why the engine
 * does not accept another calculator yet.
 */
import type { InvoiceLineItem, InvoiceTax } from './model.js';

/** What a tax calculator sees of an invoice being issued. */
export interface TaxableInvoice {
  readonly siteId: number;
  readonly subscriptionId: number;
  readonly lineItems: readonly InvoiceLineItem[];
}

/** The tax port. */
export interface TaxCalculator {
  taxesFor(invoice: TaxableInvoice): InvoiceTax[];
}

/** The default: no taxes. */
export const NO_TAX: TaxCalculator = { taxesFor: () => [] };
