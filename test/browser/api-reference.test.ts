import { afterAll, beforeAll, expect, it } from 'vitest';
import { findReferenceBundle } from '../../examples/http/openapi/openapi-routes.js';
import { useHttpFixture } from '../http/support/http-fixture.js';
import { type BrowserSession, describeBrowser, openBrowser, screenshot } from './support/browser.js';

describeBrowser('the API reference page in Chromium', () => {
  const http = useHttpFixture();
  let browser: BrowserSession;
  beforeAll(async () => {
    browser = await openBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('renders the operations of /openapi.json from this server alone', async () => {
    const { page, context } = browser;
    const origin = `http://127.0.0.1:${http().port}`;
    // Every request of the page is seen here; one to another host is refused and recorded.
    const elsewhere: string[] = [];
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1') return route.continue();
      elsewhere.push(url.href);
      return route.abort();
    });
    const bundle = findReferenceBundle();
    console.info(
      bundle === undefined
        ? '[api reference] @scalar/api-reference is not installed: testing the plain operation list that /docs serves without it.'
        : `[api reference] testing the Scalar page with its bundle served from ${bundle}.`,
    );
    // The Scalar page reads the document in the browser; the plain page is made from it on the server.
    const documentLoaded =
      bundle === undefined
        ? undefined
        : page.waitForResponse((response) => response.url() === `${origin}/openapi.json`);

    const response = await page.goto(`${origin}/docs`);
    expect(response?.status()).toBe(200);
    if (documentLoaded !== undefined) expect((await documentLoaded).status()).toBe(200);
    await expect(page.getByText('Create a subscription').first().isVisible()).resolves.toBe(true);
    await expect(page.getByText('Record an external payment').first().isVisible()).resolves.toBe(true);
    await screenshot(page, 'api-reference');
    expect(elsewhere).toEqual([]);
  });
});
