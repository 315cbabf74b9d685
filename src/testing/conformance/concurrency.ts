import assert from 'node:assert/strict';
import { at, newSiteFixture, type SectionContext, T0 } from './harness.js';

/**
 * Race cases for the port's race-safe primitives. They run on every adapter: on one with
 * serialised writers they check that interleaved callers still get exactly-once results; on one
 * with concurrent transactions they are real races.
 */
export function concurrencyCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('concurrency', () => {
    it('gives exactly one of 20 concurrent claims of one idempotency key', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('race-idem')));
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          storage().transaction((tx) => tx.idempotency.claim(site.id, 'uniqueness', 'same-token', T0, null)),
        ),
      );
      assert.equal(results.filter(Boolean).length, 1);
    });

    it('lets exactly one of 10 concurrent version-checked updates win', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('race-ver')));
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          storage().transaction((tx) => tx.sites.updateAtVersion(site.id, site.version, { name: `writer-${i}` })),
        ),
      );
      const winners = results.filter((r) => r !== undefined);
      assert.equal(winners.length, 1);
      const stored = await storage().transaction((tx) => tx.sites.findById(site.id));
      assert.equal(stored?.name, winners[0]?.name);
      assert.equal(stored?.version, 2);
    });

    it('claims each of 300 due rows exactly once across 4 concurrent claimers', async () => {
      const site = await storage().transaction(async (tx) => {
        const created = await tx.sites.insert(newSiteFixture('race-claim'));
        for (let i = 0; i < 300; i++) {
          await tx.dueWork.schedule({
            siteId: created.id,
            kind: 'renewal',
            subjectId: i,
            dueAt: at(T0, (i % 17) * 1000),
            uniqueKey: `renewal:${i}:1`,
          });
        }
        return created;
      });
      const seen = new Map<number, string>();
      const worker = async (owner: string) => {
        for (;;) {
          const batch = await storage().transaction((tx) =>
            tx.dueWork.claim({ until: at(T0, 60_000), limit: 13, owner, leaseUntil: at(T0, 3_600_000), now: T0 }),
          );
          if (batch.length === 0) return;
          for (const row of batch) {
            assert.equal(seen.has(row.id), false, `row ${row.id} claimed by ${seen.get(row.id)} and ${owner}`);
            seen.set(row.id, owner);
            assert.equal(await storage().transaction((tx) => tx.dueWork.complete(site.id, row.id, owner, T0)), true);
          }
        }
      };
      await Promise.all(['w1', 'w2', 'w3', 'w4'].map(worker));
      assert.equal(seen.size, 300);
    });
  });
}
