import { afterAll, beforeAll, expect, it } from 'vitest';
import { useHostedFixture } from '../http/support/hosted-fixture.js';
import { type BrowserSession, describeBrowser, openBrowser, screenshot, submitForm } from './support/browser.js';

describeBrowser('billing portal in Chromium', () => {
  const fixture = useHostedFixture();
  let browser: BrowserSession;
  beforeAll(async () => {
    browser = await openBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('changes the plan and then cancels at the end of the period, each with a one-time message', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const id = view.subscription.id;
    const reply = await f.api('acme', `/portal/customers/${view.customer.id}/management_link.json`);
    expect(reply.status, reply.text).toBe(200);
    const { url } = reply.json<{ url: string }>();
    const { page } = browser;

    const response = await page.goto(url);
    expect(response?.status()).toBe(200);
    await expect(page.getByRole('heading', { level: 2 }).first().textContent()).resolves.toBe('Pro');
    await screenshot(page, 'portal-overview');

    await page.getByRole('radio', { name: 'Premium (USD 25.00 every month)' }).check();
    await submitForm(page, 'Change plan', 'redirect');
    expect(page.url()).toBe(url);
    await expect(page.getByRole('status').textContent()).resolves.toContain('Your plan is now Premium.');
    await expect(page.getByRole('heading', { level: 2 }).first().textContent()).resolves.toBe('Premium');
    await screenshot(page, 'portal-plan-changed');
    expect((await f.engine.site('acme').subscriptions.get(id)).product.product.handle).toBe('premium');

    await page.getByLabel('Reason for cancelling (optional)').fill('Moving to another tool');
    await submitForm(page, 'Cancel at end of period', 'redirect');
    await expect(page.getByRole('status').textContent()).resolves.toContain(
      'Your subscription will be cancelled at the end of the current period, on February 15, 2026.',
    );
    await expect(page.getByTestId(`cancels-on-${id}`).textContent()).resolves.toBe('February 15, 2026');
    await expect(page.getByRole('button', { name: 'Keep my subscription' }).count()).resolves.toBe(1);
    await screenshot(page, 'portal-cancelled');
    const after = await f.engine.site('acme').subscriptions.get(id);
    expect(after.subscription).toMatchObject({
      cancelAtEndOfPeriod: true,
      cancellationMessage: 'Moving to another tool',
    });

    // The message was for one view: a reload shows the page without it.
    await page.reload();
    await expect(page.getByRole('status').count()).resolves.toBe(0);
  });
});
