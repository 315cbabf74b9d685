import type { CustomerRecord, SiteHandle } from 'billing-engine';
import type { InvoiceRecord } from '../../../src/invoices/model.js';
import { formatMoney } from './display-format.js';
import { html, type SafeHtml } from './html.js';

/**
 * The billing portal's invoices: the list shown under each subscription, and the PDF download
 * behind its links. The download is authenticated by the portal link itself (the route checks the
 * link's signature and expiry before this runs), never by an API key, and only ever serves an
 * invoice of the link's own customer.
 */

/** The path, under the portal link, of an invoice's PDF. */
export function portalInvoicePath(basePath: string, invoice: InvoiceRecord): string {
  return `${basePath}/invoices/${encodeURIComponent(invoice.uid)}.pdf`;
}

// An issue date (`YYYY-MM-DD`, already the site's calendar day) as words; read at noon UTC so no zone shifts the day.
function issueDateWords(date: string): string {
  const noon = new Date(`${date}T12:00:00Z`);
  return Number.isNaN(noon.getTime())
    ? date
    : new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone: 'UTC' }).format(noon);
}

/** An invoice that was issued: it has a number (a draft, even a voided one, has none). */
type IssuedInvoice = InvoiceRecord & { readonly number: string; readonly sequenceNumber: number };

function isIssued(invoice: InvoiceRecord): invoice is IssuedInvoice {
  return invoice.status !== 'draft' && invoice.number !== null && invoice.sequenceNumber !== null;
}

/** The invoices a customer sees: issued ones (a draft is still the merchant's), newest first. */
export function customerVisibleInvoices(invoices: readonly InvoiceRecord[]): IssuedInvoice[] {
  return invoices.filter(isIssued).sort((a, b) => b.sequenceNumber - a.sequenceNumber);
}

// The portal's stylesheet has no table rules; the page's CSP allows inline styles, and no script.
const CELL = 'padding:.35rem .5rem;border-top:1px solid #d5d9e0';
const HEAD = 'padding:.35rem .5rem;text-align:left';

/** The "Invoices" part of a subscription's portal section: number, date, total, status and a PDF link. */
export function invoiceList(subscriptionId: number, basePath: string, invoices: readonly InvoiceRecord[]): SafeHtml {
  const headingId = `invoices-${subscriptionId}`;
  if (invoices.length === 0) {
    return html`<h3 id="${headingId}">Invoices</h3><p class="muted">No invoices yet.</p>`;
  }
  const rows = invoices.map(
    (invoice) => html`<tr data-testid="invoice-${invoice.uid}">
<td style="${CELL}">${invoice.number}</td>
<td style="${CELL}">${issueDateWords(invoice.issueDate)}</td>
<td style="${CELL};text-align:right">${formatMoney(invoice.totalInCents, invoice.currency)}</td>
<td style="${CELL}">${invoice.status}</td>
<td style="${CELL}"><a href="${portalInvoicePath(basePath, invoice)}" download="${pdfFileName(invoice)}">Download PDF<span class="muted"> (invoice ${invoice.number})</span></a></td>
</tr>`,
  );
  return html`<h3 id="${headingId}">Invoices</h3>
<table aria-labelledby="${headingId}" style="width:100%;border-collapse:collapse">
<thead><tr><th scope="col" style="${HEAD}">Number</th><th scope="col" style="${HEAD}">Date</th><th scope="col" style="${HEAD};text-align:right">Total</th><th scope="col" style="${HEAD}">Status</th><th scope="col" style="${HEAD}">PDF</th></tr></thead>
<tbody>${rows}</tbody>
</table>`;
}

/** A file name for the download: the invoice number, with anything but letters, digits, `-` and `_` dropped. */
function pdfFileName(invoice: InvoiceRecord): string {
  return `invoice-${(invoice.number ?? '').replace(/[^A-Za-z0-9_-]/g, '') || invoice.uid}.pdf`;
}

// An invoice uid as the engine makes them (`inv_` and letters or digits), with the `.pdf` the link adds.
const PDF_FILE = /^([A-Za-z0-9_-]{1,64})\.pdf$/;

/**
 * The PDF of one invoice for the portal's customer, or undefined (a 404 page) when the file is not
 * an invoice's PDF, the invoice is another customer's, or it is a draft. An unknown uid throws the
 * engine's not-found error, which the page wrapper answers with the same 404 page.
 */
export async function portalInvoicePdf(
  site: SiteHandle,
  customer: CustomerRecord,
  file: string,
): Promise<Response | undefined> {
  const uid = PDF_FILE.exec(file)?.[1];
  if (uid === undefined) return undefined;
  const invoice = await site.invoices.get(uid);
  if (invoice.customerId !== customer.id || !isIssued(invoice)) return undefined;
  const bytes = await site.invoices.render(uid, 'pdf');
  return new Response(bytes, {
    status: 200,
    headers: {
      'content-type': 'application/pdf',
      'content-disposition': `attachment; filename="${pdfFileName(invoice)}"`,
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    },
  });
}
