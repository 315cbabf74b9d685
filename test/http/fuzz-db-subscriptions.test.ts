/**
 * Fuzz, part 1 (issue 11, part 5): malformed requests to the subscription-side route families of the
 * main API (signup, update, lifecycle, migrations, customers and payment profiles, allocations and
 * usage, the ledger, calls and clear-data). Each answer is never a 5xx and always the service's
 * error shape, and a dump of the whole SQLite database taken through a connection of the test's own
 * is unchanged after every rejected request (any 4xx) and every GET. See support/fuzz-runner.ts.
 */
import { describe, expect, it } from 'vitest';
import { fuzzApiFamily, noNetworkFetch } from './support/fuzz-runner.js';
import { useHttpFixture } from './support/http-fixture.js';

/** Families of this file, their fixed seeds and runs (each run sends one request to every route of the family). */
const FAMILIES: readonly (readonly [family: string, seed: number, runs: number])[] = [
  ['subscriptions', 5101, 60],
  ['lifecycle', 5102, 60],
  ['migrations', 5103, 80],
  ['customers', 5104, 60],
  ['allocations', 5105, 50],
  ['ledger', 5106, 60],
  ['site', 5107, 80],
  ['paymentProfiles', 5108, 50],
  ['accounts', 5109, 50],
  ['couponRemoval', 5110, 40],
];

describe('fuzz: malformed subscription-side requests never 5xx and change nothing when refused', () => {
  const http = useHttpFixture({ rateLimit: false, storage: 'sqlite-file', webhooks: { fetch: noNetworkFetch } });

  for (const [family, seed, runs] of FAMILIES) {
    it(`${family}: ${runs} runs, every route of the family each run, dump compared after each request`, async () => {
      const stats = await fuzzApiFamily(http(), family, seed, runs);
      // The generators must mostly produce refusals, or the dump comparison would test little.
      expect(stats.rejected, JSON.stringify(stats)).toBeGreaterThan(stats.requests / 4);
    }, 120_000);
  }
});
