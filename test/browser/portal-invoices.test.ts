import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useHostedFixture } from '../http/support/hosted-fixture.js';
import { readPdf, squash } from '../invoices/support/pdf-text.js';
import { type BrowserSession, describeBrowser, openBrowser, screenshot } from './support/browser.js';

describeBrowser('billing portal invoices in Chromium', () => {
  const fixture = useHostedFixture();
  let browser: BrowserSession;
  beforeAll(async () => {
    browser = await openBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('lists the subscription invoices and downloads one as a PDF with no API key', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const { invoices } = await f.engine.site('acme').invoices.list({ subscriptionId: view.subscription.id });
    expect(invoices).toHaveLength(1);
    const invoice = invoices[0]!;
    const reply = await f.api('acme', `/portal/customers/${view.customer.id}/management_link.json`);
    expect(reply.status, reply.text).toBe(200);
    const { url } = reply.json<{ url: string }>();
    const { page } = browser;

    expect((await page.goto(url))?.status()).toBe(200);
    const table = page.getByRole('table', { name: 'Invoices' });
    const row = table.getByRole('row').filter({ hasText: invoice.number! });
    await expect(row.getByRole('cell').allTextContents()).resolves.toEqual([
      invoice.number,
      'January 15, 2026',
      'USD 10.00',
      'paid',
      `Download PDF (invoice ${invoice.number})`,
    ]);
    await screenshot(page, 'portal-invoices');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.getByRole('link', { name: /Download PDF/ }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`invoice-${invoice.number}.pdf`);
    const bytes = await readFile(await download.path());
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = squash((await readPdf(new Uint8Array(bytes))).text);
    expect(text).toContain(invoice.number);
    expect(text).toContain('Total USD 10.00');

    // The link's signature is the only credential: another customer's invoice through it is a 404 page,
    // and the download path without a valid signature is one too.
    const other = await f.subscribe('acme', 'basic', 'grace@example.com');
    const theirs = (await f.engine.site('acme').invoices.list({ subscriptionId: other.subscription.id })).invoices[0]!;
    const base = new URL(url).pathname;
    const stranger = await f.page('acme', `${base}/invoices/${theirs.uid}.pdf`);
    expect(stranger.status).toBe(404);
    expect(stranger.headers['content-type']).toContain('text/html');
    const own = await f.page('acme', `${base}/invoices/${invoice.uid}.pdf`);
    expect(own.status).toBe(200);
    expect(own.headers['content-type']).toBe('application/pdf');
    const forged = await f.page('acme', `${base.replace(/[^/]+$/, 'forged')}/invoices/${invoice.uid}.pdf`);
    expect(forged.status).toBe(404);
  });
});
