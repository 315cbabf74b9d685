import { hostedPageToken } from 'billing-engine/chargify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useHostedFixture } from '../http/support/hosted-fixture.js';
import { type BrowserSession, describeBrowser, openBrowser, screenshot, submitForm } from './support/browser.js';

describeBrowser('hosted card update page in Chromium', () => {
  const fixture = useHostedFixture();
  let browser: BrowserSession;
  beforeAll(async () => {
    browser = await openBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('updates the card from the form, without any script, and shows the new card', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const id = view.subscription.id;
    const token = hostedPageToken('update_payment', id, (await f.engine.site('acme').info()).sharedKey);
    const { page } = browser;
    // A pretty id, as the service's URLs may carry one.
    const response = await page.goto(`${f.origin('acme')}/update_payment/${id}-ada-lovelace/${token}`);
    expect(response?.status()).toBe(200);
    await expect(page.title()).resolves.toBe('Update payment details - Acme Software');
    await expect(page.getByTestId('card-on-file').textContent()).resolves.toBe('Visa ending in 1111, expires 12/2030');
    await screenshot(page, 'card-update-form');

    // Fields are found by their visible labels: the form is usable with a screen reader.
    await page.getByLabel('First name on card').fill('Grace');
    await page.getByLabel('Last name on card').fill('Hopper');
    await page.getByLabel('Card number').fill('5555 5555 5555 4444');
    await page.getByLabel('Expiration month (MM)').fill('09');
    await page.getByLabel('Expiration year (YYYY)').fill('2032');
    await page.getByLabel('Security code (CVV)').fill('123');
    await submitForm(page, 'Update card', 'post');

    await expect(page.getByRole('status').textContent()).resolves.toContain('Your card was updated.');
    await expect(page.getByTestId('card-on-file').textContent()).resolves.toBe(
      'Mastercard ending in 4444, expires 09/2032',
    );
    await screenshot(page, 'card-update-done');
    const after = await f.engine.site('acme').subscriptions.get(id);
    expect(after.paymentProfile).toMatchObject({ lastFour: '4444', cardType: 'master', firstName: 'Grace' });
  });

  it('shows a refused card as an announced error and keeps the old card', async () => {
    const f = fixture();
    const view = await f.subscribe('acme', 'pro');
    const id = view.subscription.id;
    const token = hostedPageToken('update_payment', id, (await f.engine.site('acme').info()).sharedKey);
    const { page } = browser;
    await page.goto(`${f.origin('acme')}/update_payment/${id}/${token}`);
    await page.getByLabel('Card number').fill('4242424242424241');
    await page.getByLabel('Expiration month (MM)').fill('09');
    await page.getByLabel('Expiration year (YYYY)').fill('2032');
    await submitForm(page, 'Update card', 'post');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Credit card number: is invalid.');
    // The number is never put back into the form.
    await expect(page.getByLabel('Card number').inputValue()).resolves.toBe('');
    await expect(page.getByLabel('Expiration year (YYYY)').inputValue()).resolves.toBe('2032');
    await screenshot(page, 'card-update-error');
    expect((await f.engine.site('acme').subscriptions.get(id)).paymentProfile?.lastFour).toBe('1111');
  });
});
