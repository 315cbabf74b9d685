import type { Storage } from 'billing-engine';
import { accountCases } from './accounts.js';
import { billingConcurrencyCases } from './billing-concurrency.js';
import { catalogCases } from './catalog.js';
import { componentCases } from './components.js';
import { concurrencyCases } from './concurrency.js';
import { couponCases } from './coupons.js';
import { credentialCases } from './credentials.js';
import { customerCases } from './customers.js';
import { dueWorkCases } from './due-work.js';
import type { ConformanceTestApi, SectionContext, StorageHarness } from './harness.js';
import { idempotencyCases } from './idempotency.js';
import { invoiceCases } from './invoices.js';
import { ledgerCases } from './ledger.js';
import { ledgerOpsCases, referralCodeCases } from './ledger-ops.js';
import { metafieldCases } from './metafields.js';
import { mrrMovementCases } from './mrr-movements.js';
import { noteCases } from './notes.js';
import { outboxCases } from './outbox.js';
import { paymentCases } from './payments.js';
import { pricePointCases } from './price-points.js';
import { purgeCases } from './purge.js';
import { reportCases } from './reports.js';
import { siteDataCases } from './site-data.js';
import { siteExtraCases } from './site-extras.js';
import { siteCases } from './sites.js';
import { subscriptionComponentCases } from './subscription-components.js';
import { subscriptionCases } from './subscriptions.js';
import { transactionCases } from './transactions.js';
import { webhookCases } from './webhooks.js';

export type { ConformanceTestApi, StorageHarness, TestFunction } from './harness.js';

/** Every section of the suite; a repository added to the port adds its section here. */
const SECTIONS = [
  transactionCases,
  siteCases,
  credentialCases,
  idempotencyCases,
  dueWorkCases,
  outboxCases,
  catalogCases,
  customerCases,
  subscriptionCases,
  ledgerCases,
  paymentCases,
  siteDataCases,
  ledgerOpsCases,
  referralCodeCases,
  noteCases,
  componentCases,
  subscriptionComponentCases,
  couponCases,
  metafieldCases,
  webhookCases,
  invoiceCases,
  pricePointCases,
  siteExtraCases,
  accountCases,
  reportCases,
  mrrMovementCases,
  purgeCases,
  concurrencyCases,
  billingConcurrencyCases,
] as const;

/**
 * The storage conformance suite: every adapter runs it, through a test file of a few lines.
 * Each test gets a fresh storage from `harness.create()` and disposes of it afterwards.
 */
export function runStorageConformance(api: ConformanceTestApi, harness: StorageHarness): void {
  let current: Storage | undefined;
  const context: SectionContext = {
    api,
    harness,
    storage() {
      if (current === undefined)
        throw new Error('No storage: the conformance suite runs tests only inside its describe.');
      return current;
    },
    itWith(capability, reason, name, fn) {
      if (harness.capabilities?.[capability] === false) {
        console.info(`[conformance:${harness.name}] skipping "${name}": ${reason}`);
        if (api.it.skip) api.it.skip(`${name} (skipped: ${reason})`, fn);
        return;
      }
      api.it(name, fn);
    },
  };
  api.describe(`storage conformance: ${harness.name}`, () => {
    api.beforeEach(async () => {
      current = await harness.create();
    });
    api.afterEach(async () => {
      const storage = current;
      current = undefined;
      if (storage !== undefined) await (harness.destroy ? harness.destroy(storage) : storage.close());
    });
    for (const section of SECTIONS) section(context);
  });
}
