import { afterAll, beforeAll, expect, it } from 'vitest';
import { useHostedFixture } from '../http/support/hosted-fixture.js';
import { type BrowserSession, describeBrowser, openBrowser, screenshot, submitForm } from './support/browser.js';

describeBrowser('demo merchant direct-post signup in Chromium', () => {
  const fixture = useHostedFixture({ demo: true });
  let browser: BrowserSession;
  beforeAll(async () => {
    browser = await openBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('posts the signed form to the direct endpoint and lands on a return page that verified the result', async () => {
    const f = fixture();
    const { page } = browser;
    const response = await page.goto(`${f.demoOrigin}/demo/signup`);
    expect(response?.status()).toBe(200);
    await screenshot(page, 'demo-signup-form');

    await page.getByLabel('First name').fill('Dee');
    await page.getByLabel('Last name').fill('Merchant');
    await page.getByLabel('Email').fill('dee@example.com');
    await page.getByLabel('Card number').fill('4111111111111111');
    await page.getByLabel('Expiration month (MM)').fill('12');
    await page.getByLabel('Expiration year (YYYY)').fill('2030');
    await submitForm(page, 'Subscribe', 'redirect');
    expect(page.url().startsWith(`${f.demoOrigin}/demo/return?`)).toBe(true);

    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Thank you for subscribing');
    await expect(page.getByTestId('verified').textContent()).resolves.toBe('verified');
    await expect(page.getByTestId('outcome').textContent()).resolves.toBe('success');
    await expect(page.getByTestId('result-code').textContent()).resolves.toBe('2000 (Success)');
    const callId = new URL(page.url()).searchParams.get('call_id');
    expect(callId).toMatch(/^[0-9a-f]{40}$/);
    await expect(page.getByTestId('call-id').textContent()).resolves.toBe(callId);
    await screenshot(page, 'demo-return-verified');

    const [view] = await f.engine.site('acme').subscriptions.list();
    expect(view?.customer).toMatchObject({ firstName: 'Dee', email: 'dee@example.com' });
    expect(view?.product.product.handle).toBe('pro');
  });
});
