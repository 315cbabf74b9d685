import assert from 'node:assert/strict';
import { newSiteFixture, type SectionContext, T0 } from './harness.js';

/** Cases for API keys and direct credentials. */
export function credentialCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('credentials', () => {
    it('stores API keys per site and hides revoked ones; another site cannot revoke them', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cred-a')),
        await tx.sites.insert(newSiteFixture('cred-b')),
      ]);
      const key = await storage().transaction((tx) =>
        tx.credentials.insertApiKey({
          siteId: a.id,
          name: 'default',
          prefix: 'bk_1234',
          secretHash: 'f'.repeat(64),
          createdAt: T0,
          revokedAt: null,
        }),
      );
      assert.equal(key.siteId, a.id);
      assert.deepEqual(await storage().transaction((tx) => tx.credentials.activeApiKeys(a.id)), [key]);
      assert.deepEqual(await storage().transaction((tx) => tx.credentials.activeApiKeys(b.id)), []);
      assert.equal(await storage().transaction((tx) => tx.credentials.revokeApiKey(b.id, key.id, T0)), false);
      assert.equal(await storage().transaction((tx) => tx.credentials.revokeApiKey(a.id, key.id, T0)), true);
      assert.equal(await storage().transaction((tx) => tx.credentials.revokeApiKey(a.id, key.id, T0)), false);
      assert.deepEqual(await storage().transaction((tx) => tx.credentials.activeApiKeys(a.id)), []);
    });

    it('finds direct credentials by api_id across sites until revoked', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('direct')));
      const cred = await storage().transaction((tx) =>
        tx.credentials.insertDirect({
          siteId: site.id,
          apiId: 'api-id-1',
          apiSecret: 'secret',
          apiPasswordHash: 'a'.repeat(64),
          defaultRedirectUri: null,
          createdAt: T0,
          revokedAt: null,
        }),
      );
      assert.deepEqual(await storage().transaction((tx) => tx.credentials.findDirectByApiId('api-id-1')), cred);
      assert.equal(await storage().transaction((tx) => tx.credentials.findDirectByApiId('other')), undefined);
      assert.deepEqual(await storage().transaction((tx) => tx.credentials.activeDirect(site.id)), [cred]);
      assert.equal(await storage().transaction((tx) => tx.credentials.revokeDirect(site.id, T0)), 1);
      assert.equal(await storage().transaction((tx) => tx.credentials.findDirectByApiId('api-id-1')), undefined);
      assert.deepEqual(await storage().transaction((tx) => tx.credentials.activeDirect(site.id)), []);
    });
  });
}
