import assert from 'node:assert/strict';
import type { AccountEntryRecord, Storage, SubscriptionRecord } from 'billing-engine';
import { type BillingSeed, seedBillingSite, subscriptionFixture } from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

async function subscription(storage: Storage, seed: BillingSeed): Promise<SubscriptionRecord> {
  return storage.transaction((tx) => tx.subscriptions.insert(subscriptionFixture(seed.customer, seed.product)));
}

function entryFixture(
  sub: SubscriptionRecord,
  overrides: Partial<Omit<AccountEntryRecord, 'id'>> = {},
): Omit<AccountEntryRecord, 'id'> {
  return {
    siteId: sub.siteId,
    subscriptionId: sub.id,
    account: 'prepayment',
    entryType: 'prepayment',
    amountInCents: 12_345,
    memo: 'Check 1001',
    details: 'Deposited Monday',
    method: 'check',
    external: true,
    prepaymentId: null,
    transactionId: 77,
    createdAt: at(T0, 1),
    ...overrides,
  };
}

/** Cases for the accounts and exports repositories. */
export function accountCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('accounts', () => {
    it('inserts entries with exact fields, lists a subscription’s entries by id, filters and pages', async () => {
      const seed = await seedBillingSite(storage(), 'acct-ins');
      const s1 = await subscription(storage(), seed);
      const s2 = await subscription(storage(), seed);
      const [p1, other, refund, credit] = await storage().transaction(async (tx) => [
        await tx.accounts.insert(entryFixture(s1)),
        await tx.accounts.insert(entryFixture(s2, { memo: 'other' })),
        await tx.accounts.insert(entryFixture(s1, { entryType: 'prepayment_refund', details: null, method: null })),
        await tx.accounts.insert(
          entryFixture(s1, {
            account: 'service_credit',
            entryType: 'credit',
            amountInCents: 9_007_199_254_740,
            details: null,
            method: null,
            createdAt: at(T0, 86_400_000),
          }),
        ),
      ]);
      assert.ok(p1 && other && refund && credit);
      const { id: _id, ...fields } = p1;
      assert.deepEqual(fields, entryFixture(s1), 'fields are stored as given');
      await storage().transaction(async (tx) => {
        const fixedRefund = await tx.accounts.insert(
          entryFixture(s1, { entryType: 'prepayment_refund', prepaymentId: p1.id, createdAt: at(T0, 2) }),
        );
        assert.equal(fixedRefund.prepaymentId, p1.id);
        assert.deepEqual(await tx.accounts.findById(seed.site.id, credit.id), credit);
        assert.equal(await tx.accounts.findById(seed.site.id, 987_654), undefined);
        assert.deepEqual(await tx.accounts.listForSubscription(seed.site.id, s1.id), [p1, refund, credit, fixedRefund]);
        assert.deepEqual(await tx.accounts.listForSubscription(seed.site.id, s2.id), [other]);
        const page = { page: 1, perPage: 200 };
        assert.deepEqual(
          await tx.accounts.list(seed.site.id, { subscriptionId: s1.id, entryTypes: ['prepayment'] }, page),
          [p1],
        );
        assert.deepEqual(
          await tx.accounts.list(seed.site.id, { subscriptionId: s1.id, since: at(T0, 2), until: at(T0, 2) }, page),
          [fixedRefund],
          'date bounds are inclusive',
        );
        assert.deepEqual(await tx.accounts.list(seed.site.id, { subscriptionId: s1.id }, { page: 2, perPage: 2 }), [
          credit,
          fixedRefund,
        ]);
        assert.deepEqual(await tx.accounts.list(seed.site.id, { subscriptionId: s1.id, entryTypes: [] }, page), []);
      });
    });

    it('keeps entries in their site and rolls back with the transaction', async () => {
      const a = await seedBillingSite(storage(), 'acct-a');
      const b = await seedBillingSite(storage(), 'acct-b');
      const sub = await subscription(storage(), a);
      const entry = await storage().transaction((tx) => tx.accounts.insert(entryFixture(sub)));
      await storage().transaction(async (tx) => {
        assert.equal(await tx.accounts.findById(b.site.id, entry.id), undefined);
        assert.deepEqual(await tx.accounts.listForSubscription(b.site.id, sub.id), []);
      });
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.accounts.insert(entryFixture(sub, { memo: 'rolled back' }));
          throw new Abort();
        }),
        Abort,
      );
      const all = await storage().transaction((tx) => tx.accounts.listForSubscription(a.site.id, sub.id));
      assert.deepEqual(all, [entry]);
    });
  });

  describe('exports', () => {
    it('creates a pending job, completes it once with its rows, and pages the rows in order', async () => {
      const seed = await seedBillingSite(storage(), 'exp-rows');
      const other = await seedBillingSite(storage(), 'exp-other');
      const job = await storage().transaction((tx) =>
        tx.exports.insert({ siteId: seed.site.id, kind: 'subscriptions', createdAt: at(T0, 1) }),
      );
      assert.deepEqual(
        { ...job, id: 0 },
        {
          id: 0,
          siteId: seed.site.id,
          kind: 'subscriptions',
          status: 'pending',
          rowCount: null,
          createdAt: at(T0, 1),
          finishedAt: null,
        },
      );
      const rows = Array.from({ length: 205 }, (_, i) => ({ id: i + 1, name: `ünï ${i}`, nested: { ok: true } }));
      const done = await storage().transaction((tx) => tx.exports.complete(seed.site.id, job.id, rows, at(T0, 9)));
      assert.deepEqual(done, { ...job, status: 'completed', rowCount: 205, finishedAt: at(T0, 9) });
      await storage().transaction(async (tx) => {
        assert.equal(await tx.exports.complete(seed.site.id, job.id, [{ id: 1 }], at(T0, 10)), undefined);
        assert.deepEqual(await tx.exports.findById(seed.site.id, job.id), done);
        assert.equal(await tx.exports.findById(other.site.id, job.id), undefined);
        assert.deepEqual(await tx.exports.rows(seed.site.id, job.id, { page: 1, perPage: 200 }), rows.slice(0, 200));
        assert.deepEqual(await tx.exports.rows(seed.site.id, job.id, { page: 2, perPage: 200 }), rows.slice(200));
        assert.deepEqual(await tx.exports.rows(seed.site.id, job.id, { page: 3, perPage: 200 }), []);
        assert.deepEqual(await tx.exports.rows(other.site.id, job.id, { page: 1, perPage: 200 }), []);
      });
    });
  });
}
