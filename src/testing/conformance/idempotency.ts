import assert from 'node:assert/strict';
import { at, newSiteFixture, type SectionContext, T0 } from './harness.js';

/** Cases for insert-if-absent claims. */
export function idempotencyCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('idempotency claims', () => {
    it('claims a key once per site and scope', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('idem-a')),
        await tx.sites.insert(newSiteFixture('idem-b')),
      ]);
      const claim = (siteId: number, scope: string, key: string) =>
        storage().transaction((tx) => tx.idempotency.claim(siteId, scope, key, T0, null));
      assert.equal(await claim(a.id, 'uniqueness', 'tok'), true);
      assert.equal(await claim(a.id, 'uniqueness', 'tok'), false);
      assert.equal(await claim(a.id, 'nonce', 'tok'), true);
      assert.equal(await claim(b.id, 'uniqueness', 'tok'), true);
      assert.equal(await claim(a.id, 'uniqueness', 'TOK'), true, 'keys are case-sensitive');
    });

    it('lets an expired claim be taken over, and never a permanent one', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('idem-exp')));
      const hour = 3_600_000;
      const claim = (now: Date, expiresAt: Date | null, key = 'k') =>
        storage().transaction((tx) => tx.idempotency.claim(site.id, 'uniqueness', key, now, expiresAt));
      assert.equal(await claim(T0, at(T0, hour)), true);
      assert.equal(await claim(at(T0, hour - 1), at(T0, 2 * hour)), false, 'still held one ms before expiry');
      assert.equal(await claim(at(T0, hour), at(T0, 2 * hour)), true, 'taken over at expiry');
      assert.equal(await claim(at(T0, hour + 1), at(T0, 3 * hour)), false, 'the new claim holds');
      assert.equal(await claim(T0, null, 'forever'), true);
      assert.equal(await claim(at(T0, 1000 * hour), null, 'forever'), false);
    });

    it('releases a claim so it can be claimed again, and only that claim', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('idem-rel')));
      const claim = (key: string) =>
        storage().transaction((tx) => tx.idempotency.claim(site.id, 'open', key, T0, at(T0, 3_600_000)));
      const release = (key: string) => storage().transaction((tx) => tx.idempotency.release(site.id, 'open', key));
      assert.equal(await claim('a'), true);
      assert.equal(await claim('b'), true);
      assert.equal(await claim('a'), false);
      assert.equal(await release('a'), true);
      assert.equal(await release('a'), false, 'nothing left to release');
      assert.equal(await claim('a'), true, 'claimable again after release');
      assert.equal(await claim('b'), false, 'the other claim still holds');
    });

    it('rolls a claim back with its transaction', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('idem-rb')));
      await assert.rejects(
        storage().transaction(async (tx) => {
          assert.equal(await tx.idempotency.claim(site.id, 's', 'k', T0, null), true);
          throw new Error('abort');
        }),
        /abort/,
      );
      assert.equal(await storage().transaction((tx) => tx.idempotency.claim(site.id, 's', 'k', T0, null)), true);
    });
  });
}
