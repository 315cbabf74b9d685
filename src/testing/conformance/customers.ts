import assert from 'node:assert/strict';
import {
  customerFixture,
  isConflict,
  paymentProfileFixture,
  seedBillingSite,
  subscriptionFixture,
} from './billing-fixtures.js';
import { at, newSiteFixture, type SectionContext, T0 } from './harness.js';

/** Cases for customers and their payment profiles. */
export function customerCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('customers', () => {
    it('inserts a customer at version 1 and finds it by id and by reference, fields exact', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('cus-find')));
      const input = customerFixture(site.id, {
        reference: 'ref-1',
        organization: 'Analytical Engines',
        createdAt: at(T0, 1),
        updatedAt: at(T0, 2),
      });
      const created = await storage().transaction((tx) => tx.customers.insert(input));
      assert.equal(created.version, 1);
      assert.ok(Number.isSafeInteger(created.id) && created.id > 0);
      const { id: _id, version: _version, ...fields } = created;
      assert.deepEqual(fields, input);
      await storage().transaction(async (tx) => {
        const byId = await tx.customers.findById(site.id, created.id);
        assert.deepEqual(byId, created);
        assert.deepEqual(await tx.customers.findByReference(site.id, 'ref-1'), created);
        assert.equal(byId?.updatedAt.getTime(), at(T0, 2).getTime(), 'instants keep millisecond precision');
        assert.deepEqual(byId?.address, input.address, 'address nulls survive');
        assert.equal(await tx.customers.findById(site.id, 987_654), undefined);
        assert.equal(await tx.customers.findByReference(site.id, 'ref-2'), undefined);
      });
    });

    it('refuses a taken reference within a site; null references and other sites never conflict', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cus-dup-a')),
        await tx.sites.insert(newSiteFixture('cus-dup-b')),
      ]);
      const first = await storage().transaction((tx) => tx.customers.insert(customerFixture(a.id, { reference: 'r' })));
      await assert.rejects(
        storage().transaction((tx) => tx.customers.insert(customerFixture(a.id, { reference: 'r', firstName: 'Dup' }))),
        isConflict,
      );
      const nulls = await storage().transaction(async (tx) => [
        await tx.customers.insert(customerFixture(a.id, { reference: null })),
        await tx.customers.insert(customerFixture(a.id, { reference: null })),
      ]);
      assert.equal(nulls.length, 2);
      const onB = await storage().transaction((tx) => tx.customers.insert(customerFixture(b.id, { reference: 'r' })));
      await storage().transaction(async (tx) => {
        assert.equal((await tx.customers.findByReference(a.id, 'r'))?.id, first.id);
        assert.equal((await tx.customers.findByReference(b.id, 'r'))?.id, onB.id);
        const listed = await tx.customers.list(a.id, { page: 1, perPage: 50 });
        assert.deepEqual(
          listed.map((c) => [c.reference, c.firstName]),
          [
            ['r', 'Ada'],
            [null, 'Ada'],
            [null, 'Ada'],
          ],
          'the refused customer left nothing behind',
        );
      });
    });

    it('updates only at the expected version, bumps it, and frees a reference it changes', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cus-ver-a')),
        await tx.sites.insert(newSiteFixture('cus-ver-b')),
      ]);
      const customer = await storage().transaction((tx) =>
        tx.customers.insert(customerFixture(a.id, { reference: 'old' })),
      );
      const later = at(T0, 5_000 + 7);
      const address = { address: null, address2: 'Apt 2', city: null, state: null, zip: null, country: 'GB' };
      const updated = await storage().transaction((tx) =>
        tx.customers.updateAtVersion(a.id, customer.id, 1, {
          email: 'new@example.com',
          reference: 'new',
          phone: null,
          address,
          updatedAt: later,
        }),
      );
      assert.equal(updated?.version, 2);
      assert.equal(updated?.email, 'new@example.com');
      assert.equal(updated?.firstName, 'Ada', 'fields outside the patch stay');
      assert.equal(updated?.phone, null);
      assert.deepEqual(updated?.address, address);
      assert.equal(updated?.createdAt.getTime(), T0.getTime());
      assert.equal(updated?.updatedAt.getTime(), later.getTime());

      assert.equal(
        await storage().transaction((tx) => tx.customers.updateAtVersion(a.id, customer.id, 1, { email: 'stale@x' })),
        undefined,
      );
      assert.equal(
        await storage().transaction((tx) => tx.customers.updateAtVersion(a.id, 987_654, 1, { email: 'x@x' })),
        undefined,
      );
      assert.equal(
        await storage().transaction((tx) => tx.customers.updateAtVersion(b.id, customer.id, 2, { email: 'b@x' })),
        undefined,
        'another site cannot update it',
      );
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.customers.findById(a.id, customer.id), updated);
        assert.equal(await tx.customers.findByReference(a.id, 'old'), undefined);
        assert.equal((await tx.customers.findByReference(a.id, 'new'))?.id, customer.id);
      });
      const reuse = await storage().transaction((tx) =>
        tx.customers.insert(customerFixture(a.id, { reference: 'old' })),
      );
      assert.equal(reuse.reference, 'old', 'a reference given up is free again');
      const same = await storage().transaction((tx) =>
        tx.customers.updateAtVersion(a.id, customer.id, 2, { reference: 'new', lastName: 'Byron' }),
      );
      assert.equal(same?.version, 3, 'keeping its own reference is no conflict');
    });

    it('refuses an update to a taken reference and changes nothing', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('cus-upd-dup')));
      const [holder, mover] = await storage().transaction(async (tx) => [
        await tx.customers.insert(customerFixture(site.id, { reference: 'taken' })),
        await tx.customers.insert(customerFixture(site.id, { reference: 'mine', firstName: 'Mover' })),
      ]);
      assert.ok(holder && mover);
      await assert.rejects(
        storage().transaction((tx) =>
          tx.customers.updateAtVersion(site.id, mover.id, 1, { reference: 'taken', firstName: 'Changed' }),
        ),
        isConflict,
      );
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.customers.findById(site.id, mover.id), mover);
        assert.equal((await tx.customers.findByReference(site.id, 'taken'))?.id, holder.id);
      });
    });

    it("lists a site's customers one page at a time in id order", async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cus-page-a')),
        await tx.sites.insert(newSiteFixture('cus-page-b')),
      ]);
      const ids = await storage().transaction(async (tx) => {
        const out: number[] = [];
        for (let i = 0; i < 5; i++) {
          // Names descend while ids ascend, and another site's customers interleave, so only id order per site fits.
          out.push((await tx.customers.insert(customerFixture(a.id, { lastName: `N${9 - i}` }))).id);
          await tx.customers.insert(customerFixture(b.id));
        }
        return out;
      });
      const page = async (n: number, perPage = 2) =>
        (await storage().transaction((tx) => tx.customers.list(a.id, { page: n, perPage }))).map((c) => c.id);
      assert.deepEqual(await page(1), ids.slice(0, 2));
      assert.deepEqual(await page(2), ids.slice(2, 4));
      assert.deepEqual(await page(3), ids.slice(4));
      assert.deepEqual(await page(4), []);
      assert.deepEqual(await page(1, 10), ids);
      assert.equal((await storage().transaction((tx) => tx.customers.list(b.id, { page: 1, perPage: 10 }))).length, 5);
    });

    it('deletes a customer with its payment profiles, and only that', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cus-del-a')),
        await tx.sites.insert(newSiteFixture('cus-del-b')),
      ]);
      const seeded = await storage().transaction(async (tx) => {
        const gone = await tx.customers.insert(customerFixture(a.id));
        const kept = await tx.customers.insert(customerFixture(a.id));
        return {
          gone,
          kept,
          goneProfiles: [
            await tx.customers.insertPaymentProfile(paymentProfileFixture(gone, { vaultToken: 'g1' })),
            await tx.customers.insertPaymentProfile(paymentProfileFixture(gone, { vaultToken: 'g2' })),
          ],
          keptProfile: await tx.customers.insertPaymentProfile(paymentProfileFixture(kept)),
        };
      });
      assert.equal(await storage().transaction((tx) => tx.customers.delete(b.id, seeded.gone.id)), false);
      assert.deepEqual(
        await storage().transaction((tx) => tx.customers.findById(a.id, seeded.gone.id)),
        seeded.gone,
        'another site cannot delete it',
      );
      assert.equal(await storage().transaction((tx) => tx.customers.delete(a.id, seeded.gone.id)), true);
      assert.equal(await storage().transaction((tx) => tx.customers.delete(a.id, seeded.gone.id)), false);
      assert.equal(await storage().transaction((tx) => tx.customers.delete(a.id, 987_654)), false);
      await storage().transaction(async (tx) => {
        assert.equal(await tx.customers.findById(a.id, seeded.gone.id), undefined);
        for (const profile of seeded.goneProfiles) {
          assert.equal(await tx.customers.findPaymentProfile(a.id, profile.id), undefined);
        }
        assert.deepEqual(await tx.customers.findById(a.id, seeded.kept.id), seeded.kept);
        assert.deepEqual(await tx.customers.findPaymentProfile(a.id, seeded.keptProfile.id), seeded.keptProfile);
      });
    });

    it('inserts, finds and updates payment profiles, addresses exact, within the site', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cus-pp-a')),
        await tx.sites.insert(newSiteFixture('cus-pp-b')),
      ]);
      const customer = await storage().transaction((tx) => tx.customers.insert(customerFixture(a.id)));
      const input = paymentProfileFixture(customer, { customerVaultToken: 'cus_9', updatedAt: at(T0, 3) });
      const profile = await storage().transaction((tx) => tx.customers.insertPaymentProfile(input));
      assert.ok(Number.isSafeInteger(profile.id) && profile.id > 0);
      const { id: _id, ...fields } = profile;
      assert.deepEqual(fields, input);
      assert.deepEqual(await storage().transaction((tx) => tx.customers.findPaymentProfile(a.id, profile.id)), profile);

      const billingAddress = {
        address: '2 High St',
        address2: null,
        city: null,
        state: 'CA',
        zip: null,
        country: null,
      };
      const changed = at(T0, 9_000 + 9);
      const updated = await storage().transaction((tx) =>
        tx.customers.updatePaymentProfile(a.id, profile.id, {
          lastFour: '4242',
          expirationMonth: 1,
          expirationYear: 2031,
          customerVaultToken: null,
          billingAddress,
          updatedAt: changed,
        }),
      );
      assert.equal(updated?.lastFour, '4242');
      assert.equal(updated?.vaultToken, 'tok_1', 'fields outside the patch stay');
      assert.equal(updated?.customerVaultToken, null);
      assert.deepEqual(updated?.billingAddress, billingAddress);
      assert.equal(updated?.updatedAt.getTime(), changed.getTime());
      assert.deepEqual(await storage().transaction((tx) => tx.customers.findPaymentProfile(a.id, profile.id)), updated);

      await storage().transaction(async (tx) => {
        assert.equal(await tx.customers.findPaymentProfile(b.id, profile.id), undefined);
        assert.equal(await tx.customers.updatePaymentProfile(b.id, profile.id, { lastFour: '0000' }), undefined);
        assert.equal(await tx.customers.updatePaymentProfile(a.id, 987_654, { lastFour: '0000' }), undefined);
        assert.equal(await tx.customers.findPaymentProfile(a.id, 987_654), undefined);
      });
      assert.equal(
        (await storage().transaction((tx) => tx.customers.findPaymentProfile(a.id, profile.id)))?.lastFour,
        '4242',
        "another site's update changed nothing",
      );
    });

    it('within one transaction: profile answers are copies and every write, delete and clear is seen by the next read', async () => {
      const site = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('cus-pp-tx')));
      const customer = await storage().transaction((tx) => tx.customers.insert(customerFixture(site.id)));
      const profile = await storage().transaction((tx) =>
        tx.customers.insertPaymentProfile(paymentProfileFixture(customer)),
      );
      await storage().transaction(async (tx) => {
        const first = await tx.customers.findPaymentProfile(site.id, profile.id);
        assert.ok(first);
        (first as { lastFour: string }).lastFour = '9999';
        (first.billingAddress as { city: string | null }).city = 'Mutated';
        assert.deepEqual(await tx.customers.findPaymentProfile(site.id, profile.id), profile, 'a copy each time');
        await tx.customers.updatePaymentProfile(site.id, profile.id, { lastFour: '4321' });
        assert.equal((await tx.customers.findPaymentProfile(site.id, profile.id))?.lastFour, '4321');
        assert.equal(await tx.customers.findPaymentProfile(site.id, profile.id + 1_000), undefined);
        const second = await tx.customers.insertPaymentProfile(paymentProfileFixture(customer));
        assert.deepEqual(await tx.customers.findPaymentProfile(site.id, second.id), second);
        assert.equal(await tx.customers.deletePaymentProfile(site.id, second.id), true);
        assert.equal(await tx.customers.findPaymentProfile(site.id, second.id), undefined);
        assert.equal(await tx.customers.delete(site.id, customer.id), true);
        assert.equal(
          await tx.customers.findPaymentProfile(site.id, profile.id),
          undefined,
          "a customer's delete takes its profiles",
        );
      });
      const other = await storage().transaction((tx) => tx.customers.insert(customerFixture(site.id)));
      const kept = await storage().transaction((tx) => tx.customers.insertPaymentProfile(paymentProfileFixture(other)));
      await storage().transaction(async (tx) => {
        assert.ok(await tx.customers.findPaymentProfile(site.id, kept.id));
        await tx.siteData.clear(site.id, 'all');
        assert.equal(await tx.customers.findPaymentProfile(site.id, kept.id), undefined, 'cleared with the site data');
      });
    });

    it('lists payment profiles by customer in id order, one page at a time, within the site', async () => {
      const { site, customer } = await seedBillingSite(storage(), 'pp-list');
      const other = await seedBillingSite(storage(), 'pp-list-other');
      const ids = await storage().transaction(async (tx) => {
        const second = await tx.customers.insert(customerFixture(site.id, { email: 'b@example.com' }));
        const out: number[] = [];
        for (const owner of [customer, second, customer, customer]) {
          out.push((await tx.customers.insertPaymentProfile(paymentProfileFixture(owner))).id);
        }
        await tx.customers.insertPaymentProfile(paymentProfileFixture(other.customer));
        return { second: second.id, out };
      });
      await storage().transaction(async (tx) => {
        const mine = await tx.customers.listPaymentProfiles(
          site.id,
          { customerId: customer.id },
          { page: 1, perPage: 10 },
        );
        assert.deepEqual(
          mine.map((p) => p.id),
          [ids.out[0], ids.out[2], ids.out[3]],
        );
        assert.ok(mine.every((p) => p.customerId === customer.id && p.siteId === site.id));
        const all = await tx.customers.listPaymentProfiles(site.id, {}, { page: 1, perPage: 10 });
        assert.deepEqual(
          all.map((p) => p.id),
          ids.out,
        );
        const page2 = await tx.customers.listPaymentProfiles(site.id, {}, { page: 2, perPage: 3 });
        assert.deepEqual(
          page2.map((p) => p.id),
          [ids.out[3]],
        );
        assert.deepEqual(await tx.customers.listPaymentProfiles(site.id, {}, { page: 3, perPage: 3 }), []);
        // Another site's customer id finds nothing here.
        assert.deepEqual(
          await tx.customers.listPaymentProfiles(site.id, { customerId: other.customer.id }, { page: 1, perPage: 10 }),
          [],
        );
      });
    });

    it('deletes a payment profile no subscription names; one in use is a conflict and stays', async () => {
      const { site, product, customer } = await seedBillingSite(storage(), 'pp-del');
      const other = await seedBillingSite(storage(), 'pp-del-other');
      const [used, free] = await storage().transaction(async (tx) => [
        await tx.customers.insertPaymentProfile(paymentProfileFixture(customer)),
        await tx.customers.insertPaymentProfile(paymentProfileFixture(customer)),
      ]);
      const sub = await storage().transaction((tx) =>
        tx.subscriptions.insert(subscriptionFixture(customer, product, { paymentProfileId: used!.id })),
      );
      // The refused delete leaves the transaction usable (Postgres aborts on a failed statement).
      await storage().transaction(async (tx) => {
        await assert.rejects(tx.customers.deletePaymentProfile(site.id, used!.id), isConflict);
        assert.ok(await tx.customers.findPaymentProfile(site.id, used!.id));
        assert.equal(await tx.customers.deletePaymentProfile(other.site.id, free!.id), false, 'not across sites');
        assert.equal(await tx.customers.deletePaymentProfile(site.id, free!.id), true);
      });
      await storage().transaction(async (tx) => {
        assert.equal(await tx.customers.findPaymentProfile(site.id, free!.id), undefined);
        assert.equal(await tx.customers.deletePaymentProfile(site.id, free!.id), false);
        const users = await tx.subscriptions.list(site.id, { paymentProfileId: used!.id }, { page: 1, perPage: 10 });
        assert.deepEqual(
          users.map((s) => s.id),
          [sub.id],
        );
        assert.deepEqual(
          await tx.subscriptions.list(site.id, { paymentProfileId: free!.id }, { page: 1, perPage: 10 }),
          [],
        );
        // Detached, the profile can go.
        await tx.subscriptions.updateAtVersion(site.id, sub.id, sub.version, { paymentProfileId: null });
        assert.equal(await tx.customers.deletePaymentProfile(site.id, used!.id), true);
      });
    });

    it('keeps customers to their site and hands out copies', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('cus-ten-a')),
        await tx.sites.insert(newSiteFixture('cus-ten-b')),
      ]);
      const customer = await storage().transaction((tx) =>
        tx.customers.insert(customerFixture(a.id, { reference: 'x' })),
      );
      await storage().transaction(async (tx) => {
        assert.equal(await tx.customers.findById(b.id, customer.id), undefined);
        assert.equal(await tx.customers.findByReference(b.id, 'x'), undefined);
        assert.deepEqual(await tx.customers.list(b.id, { page: 1, perPage: 10 }), []);
      });
      (customer.address as { city: string | null }).city = 'mutated';
      const read = await storage().transaction((tx) => tx.customers.findById(a.id, customer.id));
      assert.ok(read);
      (read as { email: string }).email = 'mutated';
      const again = await storage().transaction((tx) => tx.customers.findById(a.id, customer.id));
      assert.equal(again?.address.city, 'Springfield');
      assert.equal(again?.email, 'ada@example.com');
    });
  });
}
