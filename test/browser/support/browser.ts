import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { describe } from 'vitest';

/** Debian's Chromium (package `chromium`): the only browser these tests use; none is ever downloaded. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Where the tests' screenshots go (under the git-ignored `test-results/`). */
export const SCREENSHOT_DIR = join(process.cwd(), 'test-results', 'screenshots');

// Headless, and nothing that talks to the network on its own: the tests reach 127.0.0.1 only.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const required = process.env.BILLING_REQUIRE_BROWSER === '1';
const missing = !existsSync(CHROMIUM_PATH);

/**
 * `describe` for browser tests: skipped, with the reason printed, when Chromium is not installed,
 * unless `BILLING_REQUIRE_BROWSER=1`, in which case the tests run and fail on the missing browser
 * (a CI that must run them cannot pass by skipping them).
 */
export function describeBrowser(name: string, body: () => void): void {
  const skip = missing && !required;
  if (skip) {
    console.info(
      `[browser tests] "${name}" skipped: ${CHROMIUM_PATH} does not exist. Install Debian's chromium package, or set BILLING_REQUIRE_BROWSER=1 to make a missing browser a failure.`,
    );
  }
  describe.skipIf(skip)(name, body);
}

/** A running Chromium with a fresh profile, one page, and a way to close both and delete the profile. */
export interface BrowserSession {
  readonly context: BrowserContext;
  readonly page: Page;
  close(): Promise<void>;
}

/**
 * Launches Chromium on a fresh, temporary `--user-data-dir` (Playwright passes it for a persistent
 * context, the only way it accepts one), so no test sees another run's cookies or cache.
 */
export async function openBrowser(): Promise<BrowserSession> {
  if (missing) throw new Error(`BILLING_REQUIRE_BROWSER=1 but ${CHROMIUM_PATH} does not exist`);
  const profile = await mkdtemp(join(tmpdir(), 'billing-browser-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: ARGS,
    viewport: { width: 1000, height: 900 },
  });
  // Well under the test timeout, so that a missing element fails with Playwright's own message.
  context.setDefaultTimeout(10_000);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a full-page screenshot as `test-results/screenshots/{name}.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/**
 * Clicks a form's submit button and waits until the page it leads to has loaded: the response to
 * the POST itself (a page that answers in place) or, after a redirect, the GET it led to. Waiting
 * for that response, not for a URL, matters when the form posts back to the URL it is on.
 */
export async function submitForm(page: Page, buttonName: string, answer: 'post' | 'redirect'): Promise<void> {
  const loaded = page.waitForResponse(
    (response) =>
      response.frame() === page.mainFrame() &&
      response.request().isNavigationRequest() &&
      (answer === 'post' ? response.request().method() === 'POST' : response.status() < 300),
  );
  await page.getByRole('button', { name: buttonName }).click();
  await loaded;
  await page.waitForLoadState('load');
}
