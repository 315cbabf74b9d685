import { toMajorString } from '../domain/money/conversion.js';
import { localDateString } from '../domain/time/index.js';
import type { AddressFields } from '../ports/billing-records.js';
import type {
  CreditNoteRecord,
  DocumentRenderExtras,
  InvoiceCustomerSnapshot,
  InvoiceRecord,
  InvoiceSeller,
} from './model.js';

/**
 * Invoices and credit notes as PDF documents, drawn with pdfkit (no browser). Pure functions of a
 * record and its {@link DocumentRenderExtras}: the same record renders to the same bytes, because
 * the document's creation date is the record's own (pdfkit would otherwise stamp the wall clock).
 *
 * pdfkit is loaded when the first document is drawn, not when this module is imported, so that an
 * application that never renders a PDF does not need it installed.
 *
 * The documents use the PDF standard fonts (Helvetica), whose encoding (WinAnsi) covers Latin
 * scripts: a character outside it (CJK, Cyrillic) is drawn as `?` rather than as wrong glyphs.
 */

type PdfDocument = PDFKit.PDFDocument;

const PAGE_MARGIN = 50;
const PAGE_WIDTH = 595.28; // A4 in points
const PAGE_HEIGHT = 841.89;
const CONTENT_WIDTH = PAGE_WIDTH - 2 * PAGE_MARGIN;
const RIGHT_EDGE = PAGE_WIDTH - PAGE_MARGIN;
const MUTED = '#5a6474';
const INK = '#1d2430';
const RULE = '#d5d9e0';

// The characters cp1252 (WinAnsi) adds to Latin-1 in 0x80-0x9F; the standard fonts can draw these.
const WIN_ANSI_EXTRAS = new Set('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');

/** Text the standard fonts can draw: characters outside WinAnsi become `?`, controls become spaces. */
export function pdfText(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code === 0x0a) out += '\n';
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0)) out += ' ';
    else if (code <= 0xff || WIN_ANSI_EXTRAS.has(char)) out += char;
    else out += '?';
  }
  return out;
}

function money(amountInCents: number, currency: string): string {
  return `${currency} ${toMajorString(amountInCents, currency)}`;
}

function addressLines(address: AddressFields): string[] {
  const cityLine = [address.city, address.state, address.zip].filter((part) => part !== null && part !== '').join(', ');
  return [address.address, address.address2, cityLine, address.country].filter(
    (line): line is string => line !== null && line !== '',
  );
}

function customerLines(customer: InvoiceCustomerSnapshot): string[] {
  const name = `${customer.firstName} ${customer.lastName}`.trim();
  return [
    name,
    ...(customer.organization ? [customer.organization] : []),
    customer.email,
    ...addressLines(customer.billingAddress),
  ].filter((line) => line !== '');
}

function sellerLines(seller: InvoiceSeller): string[] {
  return [...addressLines(seller.address), ...(seller.phone ? [seller.phone] : [])];
}

/** Draws into a new pdfkit document and collects its bytes. */
async function drawPdf(
  info: { readonly title: string; readonly author: string; readonly createdAt: Date },
  draw: (doc: PdfDocument) => void,
): Promise<Uint8Array> {
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({
    size: 'A4',
    margin: PAGE_MARGIN,
    bufferPages: false,
    info: {
      Title: pdfText(info.title),
      Author: pdfText(info.author),
      Producer: 'billing-engine',
      Creator: 'billing-engine',
      CreationDate: info.createdAt,
      ModDate: info.createdAt,
    },
  });
  const chunks: Uint8Array[] = [];
  const finished = new Promise<Uint8Array>((resolve, reject) => {
    doc.on('data', (chunk: Uint8Array) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  draw(doc);
  doc.end();
  const bytes = await finished;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Starts a new page when fewer than `height` points are left above the bottom margin. */
function ensureRoom(doc: PdfDocument, height: number): void {
  if (doc.y + height > PAGE_HEIGHT - PAGE_MARGIN) doc.addPage();
}

/** The header: the seller on the left, the document's title, number and dates on the right. */
function header(
  doc: PdfDocument,
  seller: InvoiceSeller,
  title: string,
  facts: readonly (readonly [string, string])[],
): void {
  const top = PAGE_MARGIN;
  doc.fillColor(INK).font('Helvetica-Bold').fontSize(16).text(pdfText(seller.name), PAGE_MARGIN, top, { width: 280 });
  doc.font('Helvetica').fontSize(9).fillColor(MUTED);
  for (const line of sellerLines(seller)) doc.text(pdfText(line), { width: 280 });
  const leftBottom = doc.y;

  doc
    .fillColor(INK)
    .font('Helvetica-Bold')
    .fontSize(20)
    .text(title, 340, top, { width: CONTENT_WIDTH - 290, align: 'right' });
  doc.moveDown(0.3);
  for (const [label, value] of facts) {
    const y = doc.y;
    doc.font('Helvetica').fontSize(9).fillColor(MUTED).text(label, 340, y, { width: 90 });
    doc
      .font('Helvetica-Bold')
      .fillColor(INK)
      .text(pdfText(value), 430, y, { width: RIGHT_EDGE - 430, align: 'right' });
  }
  doc.y = Math.max(leftBottom, doc.y) + 18;
  doc.x = PAGE_MARGIN;
}

function billTo(doc: PdfDocument, customer: InvoiceCustomerSnapshot, heading = 'Bill to'): void {
  doc.font('Helvetica-Bold').fontSize(9).fillColor(MUTED).text(heading.toUpperCase(), PAGE_MARGIN, doc.y);
  doc.font('Helvetica').fontSize(10).fillColor(INK);
  for (const line of customerLines(customer)) doc.text(pdfText(line), { width: 300 });
  doc.moveDown(1);
}

const COLUMNS = { description: PAGE_MARGIN, quantity: 300, unitPrice: 350, amount: 445 } as const;

function tableRule(doc: PdfDocument): void {
  doc.moveTo(PAGE_MARGIN, doc.y).lineTo(RIGHT_EDGE, doc.y).lineWidth(0.5).strokeColor(RULE).stroke();
  doc.y += 4;
}

function tableHeader(doc: PdfDocument): void {
  ensureRoom(doc, 40);
  const y = doc.y;
  doc.font('Helvetica-Bold').fontSize(9).fillColor(MUTED);
  doc.text('DESCRIPTION', COLUMNS.description, y, { width: 240 });
  doc.text('QTY', COLUMNS.quantity, y, { width: 45, align: 'right' });
  doc.text('UNIT PRICE', COLUMNS.unitPrice, y, { width: 90, align: 'right' });
  doc.text('AMOUNT', COLUMNS.amount, y, { width: RIGHT_EDGE - COLUMNS.amount, align: 'right' });
  doc.y = y + 14;
  tableRule(doc);
}

interface TableRow {
  readonly title: string;
  readonly detail: readonly string[];
  readonly quantity: string;
  readonly unitPrice: string;
  readonly amount: string;
}

function tableRow(doc: PdfDocument, row: TableRow): void {
  ensureRoom(doc, 24 + row.detail.length * 11);
  const y = doc.y;
  doc.font('Helvetica').fontSize(10).fillColor(INK);
  doc.text(pdfText(row.quantity), COLUMNS.quantity, y, { width: 45, align: 'right' });
  doc.text(pdfText(row.unitPrice), COLUMNS.unitPrice, y, { width: 90, align: 'right' });
  doc.text(pdfText(row.amount), COLUMNS.amount, y, { width: RIGHT_EDGE - COLUMNS.amount, align: 'right' });
  doc.text(pdfText(row.title), COLUMNS.description, y, { width: 240 });
  doc.font('Helvetica').fontSize(8).fillColor(MUTED);
  for (const line of row.detail) doc.text(pdfText(line), COLUMNS.description, doc.y, { width: 240 });
  doc.y += 6;
  doc.x = PAGE_MARGIN;
}

/** One line of the totals block, right-aligned: a label and an amount, the last ones in bold. */
function totalLine(doc: PdfDocument, label: string, amount: string, strong = false): void {
  ensureRoom(doc, 16);
  const y = doc.y;
  doc
    .font(strong ? 'Helvetica-Bold' : 'Helvetica')
    .fontSize(strong ? 11 : 10)
    .fillColor(INK);
  doc.text(pdfText(label), 300, y, { width: 140, align: 'right' });
  doc.text(pdfText(amount), COLUMNS.amount, y, { width: RIGHT_EDGE - COLUMNS.amount, align: 'right' });
  doc.y = y + (strong ? 16 : 14);
}

function section(doc: PdfDocument, heading: string, lines: readonly string[]): void {
  if (lines.length === 0) return;
  ensureRoom(doc, 30);
  doc.x = PAGE_MARGIN;
  doc.moveDown(0.8);
  doc.font('Helvetica-Bold').fontSize(9).fillColor(MUTED).text(heading.toUpperCase(), PAGE_MARGIN, doc.y);
  doc.font('Helvetica').fontSize(9).fillColor(INK);
  for (const line of lines) {
    ensureRoom(doc, 12);
    doc.text(pdfText(line), PAGE_MARGIN, doc.y, { width: CONTENT_WIDTH });
  }
}

function periodText(start: Date | null, end: Date | null, timeZone: string): string | undefined {
  if (start === null || end === null) return undefined;
  return `${localDateString(start, timeZone)} to ${localDateString(end, timeZone)}`;
}

const STATUS_WORDS: Readonly<Record<InvoiceRecord['status'], string>> = {
  draft: 'Draft',
  open: 'Open',
  paid: 'Paid',
  voided: 'Voided',
  canceled: 'Canceled',
};

/**
 * The invoice as a PDF: the seller (site name, address, phone), the invoice number, status and
 * dates, the customer and billing address, the line items with their periods, discounts and taxes,
 * the totals (subtotal, discount, tax, total, credits, paid, amount due), the payments and credits
 * applied, the memo, and the metafields of `extras` (those whose `invoices` scope is on).
 */
export function renderInvoicePdf(invoice: InvoiceRecord, extras: DocumentRenderExtras): Promise<Uint8Array> {
  const currency = invoice.currency;
  const m = (cents: number) => money(cents, currency);
  return drawPdf(
    { title: `Invoice ${invoice.number ?? 'draft'}`, author: invoice.seller.name, createdAt: invoice.createdAt },
    (doc) => {
      header(doc, invoice.seller, invoice.status === 'paid' ? 'Invoice (paid)' : 'Invoice', [
        ['Invoice number', invoice.number ?? 'Draft'],
        ['Status', STATUS_WORDS[invoice.status]],
        ['Issue date', invoice.issueDate],
        ['Due date', invoice.dueDate],
        ...(invoice.paidDate === null ? [] : [['Paid on', invoice.paidDate] as const]),
        ...(invoice.productName === null ? [] : [['Plan', invoice.productName] as const]),
      ]);
      billTo(doc, invoice.customer);
      const period = periodText(invoice.periodStart, invoice.periodEnd, extras.timeZone);
      if (period !== undefined) {
        doc.font('Helvetica').fontSize(9).fillColor(MUTED).text(`Billing period: ${period}`, PAGE_MARGIN, doc.y);
        doc.moveDown(0.6);
      }

      tableHeader(doc);
      for (const item of invoice.lineItems) {
        const itemPeriod = periodText(item.periodStart, item.periodEnd, extras.timeZone);
        tableRow(doc, {
          title: item.title,
          detail: [
            ...(item.description !== '' && item.description !== item.title ? [item.description] : []),
            ...(itemPeriod === undefined ? [] : [itemPeriod]),
            ...(item.discountInCents !== 0 ? [`Discount: -${m(item.discountInCents)}`] : []),
            ...(item.taxInCents !== 0 ? [`Tax: ${m(item.taxInCents)}`] : []),
          ],
          quantity: item.quantity,
          unitPrice: m(item.unitPriceInCents),
          amount: m(item.subtotalInCents),
        });
      }
      tableRule(doc);

      totalLine(doc, 'Subtotal', m(invoice.subtotalInCents));
      for (const discount of invoice.discounts) {
        const label = discount.couponCode === null ? discount.title : `${discount.title} (${discount.couponCode})`;
        totalLine(doc, label, `-${m(discount.amountInCents)}`);
      }
      if (invoice.discounts.length === 0 && invoice.discountInCents !== 0) {
        totalLine(doc, 'Discount', `-${m(invoice.discountInCents)}`);
      }
      for (const tax of invoice.taxes) {
        totalLine(doc, tax.percentage === null ? tax.title : `${tax.title} (${tax.percentage}%)`, m(tax.amountInCents));
      }
      if (invoice.taxes.length === 0) totalLine(doc, 'Tax', m(invoice.taxInCents));
      totalLine(doc, 'Total', m(invoice.totalInCents), true);
      if (invoice.creditInCents !== 0) totalLine(doc, 'Credits applied', `-${m(invoice.creditInCents)}`);
      totalLine(doc, 'Paid', `-${m(invoice.paidInCents)}`);
      if (invoice.refundInCents !== 0) totalLine(doc, 'Refunded', m(invoice.refundInCents));
      totalLine(doc, 'Amount due', m(invoice.dueInCents), true);

      section(
        doc,
        'Payments',
        invoice.payments.map((payment) =>
          `${localDateString(payment.appliedAt, extras.timeZone)}  ${m(payment.amountInCents)}  ${payment.memo}`.trimEnd(),
        ),
      );
      section(
        doc,
        'Credits',
        invoice.credits.map((credit) =>
          `${localDateString(credit.appliedAt, extras.timeZone)}  ${m(credit.amountInCents)}  ${credit.memo}`.trimEnd(),
        ),
      );
      section(doc, 'Memo', invoice.memo === '' ? [] : [invoice.memo]);
      section(
        doc,
        'Details',
        extras.metafields.map((field) => `${field.name}: ${field.value}`),
      );
    },
  );
}

/**
 * The credit note as a PDF: the seller, the note's number and date, the invoice it credits, the
 * customer, its lines and its total, the memo and the metafields of `extras`.
 */
export function renderCreditNotePdf(note: CreditNoteRecord, extras: DocumentRenderExtras): Promise<Uint8Array> {
  const m = (cents: number) => money(cents, note.currency);
  return drawPdf(
    { title: `Credit note ${note.number}`, author: note.seller.name, createdAt: note.createdAt },
    (doc) => {
      header(doc, note.seller, 'Credit note', [
        ['Credit note number', note.number],
        ['Issue date', note.issueDate],
        ['Credits invoice', note.invoiceUid],
        ['Status', note.status === 'applied' ? 'Applied' : 'Open'],
      ]);
      billTo(doc, note.customer, 'Credited to');
      tableHeader(doc);
      for (const item of note.lineItems) {
        tableRow(doc, {
          title: item.title,
          detail: [
            ...(item.description !== '' && item.description !== item.title ? [item.description] : []),
            ...(item.taxInCents !== 0 ? [`Tax: ${m(item.taxInCents)}`] : []),
          ],
          quantity: item.quantity,
          unitPrice: m(item.unitPriceInCents),
          amount: m(item.totalInCents),
        });
      }
      tableRule(doc);
      totalLine(doc, 'Total credited', m(note.totalInCents), true);
      section(doc, 'Memo', note.memo === '' ? [] : [note.memo]);
      section(
        doc,
        'Details',
        extras.metafields.map((field) => `${field.name}: ${field.value}`),
      );
    },
  );
}
