import { describe, expect, it } from 'vitest';
import { renderCreditNotePdf, renderInvoicePdf } from '../../src/invoices/render-pdf.js';
import { EXTRAS, sampleCreditNote, sampleInvoice } from './support/document-samples.js';
import { readPdf, squash } from './support/pdf-text.js';

function startsWithPdfMagic(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.subarray(0, 5)).toString('latin1') === '%PDF-';
}

describe('renderInvoicePdf', () => {
  it('writes a PDF whose text a reader finds: number, dates, seller, customer, lines, totals, payments, metafields', async () => {
    const bytes = await renderInvoicePdf(sampleInvoice(), EXTRAS);
    expect(startsWithPdfMagic(bytes)).toBe(true);
    const pdf = await readPdf(bytes);
    const text = squash(pdf.text);
    expect(pdf.pages).toBe(1);
    expect(pdf.title).toBe('Invoice INV-1042');
    for (const expected of [
      'INV-1042',
      'Acme Projects Inc.',
      '1 Market Street',
      'San Francisco, CA, 94105',
      '+1 415 555 0100',
      'Ada Lovelace',
      'Analytical Engines',
      'ada@example.com',
      '12 St James Square',
      'London, SW1Y 4JH',
      '2026-02-15',
      'Pro plan, monthly',
      'Seats',
      'USD 29.00',
      'USD 5.00',
      'USD 10.00',
      'Spring sale (SPRING10)',
      '-USD 3.90',
      'USD 35.10',
      'Amount due',
      'USD 15.10',
      'Check 1001',
      'PO number: PO-4471',
      'Thank you for your business.',
    ]) {
      expect(text, expected).toContain(expected);
    }
    // Periods are calendar dates in the site zone: 16:00Z on March 15 is noon in New York (EDT).
    expect(text).toContain('2026-02-15 to 2026-03-15');
    // The payment's date is the New York day of 15:00Z on February 16.
    expect(text).toContain('2026-02-16');
  });

  it('is a pure function of the record: the same invoice renders to the same bytes', async () => {
    const invoice = sampleInvoice();
    const first = await renderInvoicePdf(invoice, EXTRAS);
    const second = await renderInvoicePdf(invoice, EXTRAS);
    expect(Buffer.from(first).equals(Buffer.from(second))).toBe(true);
    const changed = await renderInvoicePdf(sampleInvoice({ number: 'INV-1043' }), EXTRAS);
    expect(Buffer.from(first).equals(Buffer.from(changed))).toBe(false);
  });

  it('shows a paid invoice with its paid date and nothing due', async () => {
    const invoice = sampleInvoice({
      status: 'paid',
      paidDate: '2026-02-17',
      paidInCents: 3510,
      dueInCents: 0,
    });
    const text = squash((await readPdf(await renderInvoicePdf(invoice, EXTRAS))).text);
    expect(text).toContain('Paid on');
    expect(text).toContain('2026-02-17');
    expect(text).toMatch(/Amount due USD 0\.00/);
  });

  it('flows a long invoice onto more pages and keeps every line and the totals', async () => {
    const base = sampleInvoice();
    const template = base.lineItems[1]!;
    const lineItems = Array.from({ length: 90 }, (_, i) => ({
      ...template,
      transactionId: 1000 + i,
      title: `Usage line ${i + 1}`,
    }));
    const invoice = sampleInvoice({ lineItems });
    const pdf = await readPdf(await renderInvoicePdf(invoice, EXTRAS));
    const text = squash(pdf.text);
    expect(pdf.pages).toBeGreaterThan(1);
    expect(text).toContain('Usage line 1 ');
    expect(text).toContain('Usage line 90');
    expect(text).toContain('USD 35.10');
  });

  it('writes amounts with the currency own digits and draws text outside the standard fonts as "?"', async () => {
    const invoice = sampleInvoice({
      currency: 'JPY',
      totalInCents: 3510,
      dueInCents: 1510,
      customer: { ...sampleInvoice().customer, firstName: 'Zoë', lastName: '山田' },
    });
    const text = squash((await readPdf(await renderInvoicePdf(invoice, EXTRAS))).text);
    expect(text).toContain('JPY 3510');
    expect(text).toContain('JPY 1510');
    expect(text).toContain('Zoë ??');
  });

  it('leaves out the metafield section when no metafield is shown on invoices', async () => {
    const text = squash((await readPdf(await renderInvoicePdf(sampleInvoice(), { ...EXTRAS, metafields: [] }))).text);
    expect(text).not.toContain('PO-4471');
    expect(text).toContain('INV-1042');
  });
});

describe('renderCreditNotePdf', () => {
  it('writes the note number, the invoice it credits, its lines and its total', async () => {
    const bytes = await renderCreditNotePdf(sampleCreditNote(), EXTRAS);
    expect(startsWithPdfMagic(bytes)).toBe(true);
    const pdf = await readPdf(bytes);
    const text = squash(pdf.text);
    expect(pdf.title).toBe('Credit note CN-17');
    for (const expected of [
      'Credit note',
      'CN-17',
      'inv_8gk5bwkct3gqt',
      '2026-02-20',
      'Refund: Seats',
      'Total credited',
      'USD 7.50',
      'Refund for the unused seats',
      'Ada Lovelace',
      'PO number: PO-4471',
    ]) {
      expect(text, expected).toContain(expected);
    }
  });
});
