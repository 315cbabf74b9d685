/**
 * Fuzz, part 2 (issue 11, part 5): malformed requests to the catalog-side route families of the main
 * API (families and products, components, coupons, metafields and metadata, notes and referral
 * codes, webhook endpoints, the webhook list and replays). Same checks as part 1: never a 5xx,
 * always the service's error shape, the SQLite dump unchanged after every rejected request and GET.
 */
import { describe, expect, it } from 'vitest';
import { fuzzApiFamily, noNetworkFetch } from './support/fuzz-runner.js';
import { useHttpFixture } from './support/http-fixture.js';

/** Families of this file, their fixed seeds and runs (each run sends one request to every route of the family). */
const FAMILIES: readonly (readonly [family: string, seed: number, runs: number])[] = [
  ['catalog', 5201, 50],
  ['components', 5202, 50],
  ['coupons', 5203, 50],
  ['metafields', 5204, 40],
  ['notes', 5205, 60],
  ['webhooks', 5206, 50],
  ['pricePoints', 5207, 50],
  ['reasonCodes', 5208, 50],
  ['offers', 5209, 50],
];

describe('fuzz: malformed catalog-side requests never 5xx and change nothing when refused', () => {
  const http = useHttpFixture({ rateLimit: false, storage: 'sqlite-file', webhooks: { fetch: noNetworkFetch } });

  for (const [family, seed, runs] of FAMILIES) {
    it(`${family}: ${runs} runs, every route of the family each run, dump compared after each request`, async () => {
      const stats = await fuzzApiFamily(http(), family, seed, runs);
      // The generators must mostly produce refusals, or the dump comparison would test little.
      expect(stats.rejected, JSON.stringify(stats)).toBeGreaterThan(stats.requests / 4);
    }, 120_000);
  }
});
