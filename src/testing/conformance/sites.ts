import assert from 'node:assert/strict';
import { BillingError } from 'billing-engine';
import { FIXTURE_SETTINGS, newSiteFixture, type SectionContext, T0 } from './harness.js';

/** Cases for the sites repository. */
export function siteCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('sites', () => {
    it('inserts and finds a site by id and by subdomain, with version 1 and exact fields', async () => {
      const created = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('acme')));
      assert.equal(created.version, 1);
      assert.ok(Number.isSafeInteger(created.id) && created.id > 0);
      const byId = await storage().transaction((tx) => tx.sites.findById(created.id));
      const bySub = await storage().transaction((tx) => tx.sites.findBySubdomain('acme'));
      assert.deepEqual(byId, created);
      assert.deepEqual(bySub, created);
      assert.equal(byId?.createdAt.getTime(), T0.getTime(), 'instants keep millisecond precision');
      assert.deepEqual(byId?.settings, FIXTURE_SETTINGS);
    });

    it('returns undefined for missing sites', async () => {
      await storage().transaction(async (tx) => {
        assert.equal(await tx.sites.findById(987654), undefined);
        assert.equal(await tx.sites.findBySubdomain('nope'), undefined);
      });
    });

    it('refuses a taken subdomain with a conflict and keeps the first site', async () => {
      await storage().transaction((tx) => tx.sites.insert(newSiteFixture('dup')));
      await assert.rejects(
        storage().transaction((tx) => tx.sites.insert(newSiteFixture('dup', { name: 'Other' }))),
        (error: unknown) => error instanceof BillingError && error.code === 'conflict',
      );
      const sites = await storage().transaction((tx) => tx.sites.list());
      assert.deepEqual(
        sites.map((s) => [s.subdomain, s.name]),
        [['dup', 'Site dup']],
      );
    });

    it('updates only at the expected version and bumps it', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('ver')));
      const later = new Date(T0.getTime() + 5000);
      const updated = await storage().transaction((tx) =>
        tx.sites.updateAtVersion(site.id, 1, { name: 'Renamed', updatedAt: later }),
      );
      assert.equal(updated?.version, 2);
      assert.equal(updated?.name, 'Renamed');
      assert.equal(updated?.updatedAt.getTime(), later.getTime());
      const stale = await storage().transaction((tx) => tx.sites.updateAtVersion(site.id, 1, { name: 'Stale' }));
      assert.equal(stale, undefined);
      const missing = await storage().transaction((tx) => tx.sites.updateAtVersion(999_999, 1, { name: 'X' }));
      assert.equal(missing, undefined);
      const stored = await storage().transaction((tx) => tx.sites.findById(site.id));
      assert.equal(stored?.name, 'Renamed');
      assert.equal(stored?.version, 2);
    });

    it('hands out copies: mutating a returned record changes nothing stored', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('copy')));
      (site as { name: string }).name = 'mutated';
      (site.settings.dunning as { retryCount: number }).retryCount = 99;
      const stored = await storage().transaction((tx) => tx.sites.findById(site.id));
      assert.equal(stored?.name, 'Site copy');
      assert.equal(stored?.settings.dunning.retryCount, 3);
    });

    it('within one transaction: answers are copies, a write is seen by the next read, "not found" is not kept', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('in-tx')));
      await storage().transaction(async (tx) => {
        const first = await tx.sites.findById(site.id);
        assert.ok(first);
        (first as { name: string }).name = 'mutated';
        (first.settings.dunning as { retryCount: number }).retryCount = 99;
        const again = await tx.sites.findBySubdomain('in-tx');
        assert.equal(again?.name, 'Site in-tx');
        assert.equal(again?.settings.dunning.retryCount, 3);
        const updated = await tx.sites.updateAtVersion(site.id, site.version, { name: 'Renamed in tx' });
        assert.equal(updated?.version, 2);
        assert.equal((await tx.sites.findById(site.id))?.name, 'Renamed in tx');
        assert.equal((await tx.sites.findBySubdomain('in-tx'))?.version, 2);
        assert.equal(await tx.sites.findBySubdomain('later'), undefined);
        const later = await tx.sites.insert(newSiteFixture('later'));
        assert.deepEqual(await tx.sites.findBySubdomain('later'), later);
        assert.equal(await tx.sites.delete(later.id), true);
        assert.equal(await tx.sites.findById(later.id), undefined);
      });
    });

    it('lists sites in id order', async () => {
      await storage().transaction(async (tx) => {
        await tx.sites.insert(newSiteFixture('b-site'));
        await tx.sites.insert(newSiteFixture('a-site'));
      });
      const list = await storage().transaction((tx) => tx.sites.list());
      assert.deepEqual(
        list.map((s) => s.subdomain),
        ['b-site', 'a-site'],
      );
    });

    it('deletes a site with everything it owns, and only that', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('gone')),
        await tx.sites.insert(newSiteFixture('kept')),
      ]);
      await storage().transaction(async (tx) => {
        for (const site of [a, b]) {
          await tx.credentials.insertApiKey({
            siteId: site.id,
            name: 'k',
            prefix: `p${site.id}`,
            secretHash: `h${site.id}`,
            createdAt: T0,
            revokedAt: null,
          });
          await tx.dueWork.schedule({ siteId: site.id, kind: 'renewal', subjectId: 1, dueAt: T0, uniqueKey: 'r:1:1' });
          await tx.outbox.append([
            { siteId: site.id, key: 'test', subjectType: 'site', subjectId: site.id, payload: {}, occurredAt: T0 },
          ]);
          await tx.idempotency.claim(site.id, 'token', 'abc', T0, null);
        }
      });
      assert.equal(await storage().transaction((tx) => tx.sites.delete(a.id)), true);
      assert.equal(await storage().transaction((tx) => tx.sites.delete(a.id)), false);
      await storage().transaction(async (tx) => {
        assert.equal(await tx.sites.findById(a.id), undefined);
        assert.deepEqual(await tx.credentials.activeApiKeys(a.id), []);
        assert.equal(await tx.dueWork.findByKey(a.id, 'r:1:1'), undefined);
        assert.deepEqual(await tx.outbox.listAfter(a.id, 0, 10), []);
        assert.equal((await tx.credentials.activeApiKeys(b.id)).length, 1);
        assert.notEqual(await tx.dueWork.findByKey(b.id, 'r:1:1'), undefined);
        assert.equal((await tx.outbox.listAfter(b.id, 0, 10)).length, 1);
        assert.equal(await tx.idempotency.claim(b.id, 'token', 'abc', T0, null), false);
      });
    });
  });
}
