import { describe, expect, it } from 'vitest';
import { renderInvoiceHtml } from '../../src/invoices/render-html.js';
import { EXTRAS, sampleInvoice } from './support/document-samples.js';

describe('renderInvoiceHtml', () => {
  it('is a complete page with the number, dates, seller, customer, lines, totals, payments and metafields', () => {
    const page = renderInvoiceHtml(sampleInvoice(), EXTRAS);
    expect(page.startsWith('<!doctype html>')).toBe(true);
    expect(page.trimEnd().endsWith('</html>')).toBe(true);
    for (const expected of [
      '<title>Invoice INV-1042 - Acme Projects Inc.</title>',
      '<dd data-field="invoice-number">INV-1042</dd>',
      '<dd data-field="issue-date">2026-02-15</dd>',
      'Ada Lovelace',
      'London, SW1Y 4JH',
      'Pro plan, monthly',
      '2026-02-15 to 2026-03-15',
      'Spring sale (SPRING10)',
      '<td>Total</td><td class="num">USD 35.10</td>',
      '<td>Amount due</td><td class="num">USD 15.10</td>',
      '2026-02-16: USD 20.00 (Check 1001)',
      '<dt>PO number</dt><dd>PO-4471</dd>',
    ]) {
      expect(page, expected).toContain(expected);
    }
  });

  it('escapes every value from the record and the extras, so none can add markup or script', () => {
    const hostile = '<script>alert("x")</script>';
    const invoice = sampleInvoice({
      memo: hostile,
      customer: { ...sampleInvoice().customer, firstName: '<img src=x onerror=alert(1)>', organization: 'A & B "Ltd"' },
      lineItems: [{ ...sampleInvoice().lineItems[0]!, title: "Pro' onmouseover='x" }],
    });
    const page = renderInvoiceHtml(invoice, { ...EXTRAS, metafields: [{ name: '</dt><script>', value: hostile }] });
    expect(page).not.toContain('<script');
    expect(page).not.toContain('<img');
    expect(page).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page).toContain('A &amp; B &quot;Ltd&quot;');
    expect(page).toContain('Pro&#39; onmouseover=&#39;x');
    expect(page).toContain('<dt>&lt;/dt&gt;&lt;script&gt;</dt>');
  });

  it('shows the discount and amount due of the record, not sums of its own', () => {
    const page = renderInvoiceHtml(sampleInvoice({ dueInCents: 0, paidInCents: 3510, status: 'paid' }), EXTRAS);
    expect(page).toContain('<td>Amount due</td><td class="num">USD 0.00</td>');
    expect(page).toContain('<td>Paid</td><td class="num">-USD 35.10</td>');
  });
});
