import assert from 'node:assert/strict';
import { newSiteFixture, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

/** Cases for transaction semantics: all or nothing. */
export function transactionCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('transactions', () => {
    it('rolls back every repository when the work throws, and rethrows the same error', async () => {
      const keep = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('keep')));
      const abort = new Abort('abort');
      const outcome = await storage()
        .transaction(async (tx) => {
          const site = await tx.sites.insert(newSiteFixture('rolled-back'));
          await tx.credentials.insertApiKey({
            siteId: site.id,
            name: 'k',
            prefix: 'p',
            secretHash: 'h',
            createdAt: T0,
            revokedAt: null,
          });
          await tx.dueWork.schedule({
            siteId: keep.id,
            kind: 'renewal',
            subjectId: 1,
            dueAt: T0,
            uniqueKey: 'renewal:1:1',
          });
          await tx.outbox.append([
            { siteId: keep.id, key: 'x', subjectType: 's', subjectId: 1, payload: {}, occurredAt: T0 },
          ]);
          await tx.sites.updateAtVersion(keep.id, keep.version, { name: 'changed' });
          await tx.idempotency.claim(keep.id, 'scope', 'key', T0, null);
          throw abort;
        })
        .then(
          () => 'resolved',
          (error: unknown) => error,
        );
      assert.equal(outcome, abort);
      await storage().transaction(async (tx) => {
        assert.equal(await tx.sites.findBySubdomain('rolled-back'), undefined);
        const kept = await tx.sites.findById(keep.id);
        assert.equal(kept?.name, 'Site keep');
        assert.equal(kept?.version, 1);
        assert.equal(await tx.dueWork.findByKey(keep.id, 'renewal:1:1'), undefined);
        assert.deepEqual(await tx.outbox.listAfter(keep.id, 0, 10), []);
        assert.equal(await tx.idempotency.claim(keep.id, 'scope', 'key', T0, null), true);
        assert.equal((await tx.sites.list()).length, 1);
      });
    });

    it('sees its own writes inside the transaction and commits them for the next one', async () => {
      const id = await storage().transaction(async (tx) => {
        const site = await tx.sites.insert(newSiteFixture('own-writes'));
        assert.equal((await tx.sites.findBySubdomain('own-writes'))?.id, site.id);
        return site.id;
      });
      assert.equal((await storage().transaction((tx) => tx.sites.findById(id)))?.subdomain, 'own-writes');
    });

    it('keeps committed work when a later transaction fails', async () => {
      await storage().transaction((tx) => tx.sites.insert(newSiteFixture('first')));
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.sites.insert(newSiteFixture('second'));
          await tx.sites.insert(newSiteFixture('first'));
        }),
      );
      const subdomains = (await storage().transaction((tx) => tx.sites.list())).map((s) => s.subdomain);
      assert.deepEqual(subdomains, ['first']);
    });
  });
}
