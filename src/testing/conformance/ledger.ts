import assert from 'node:assert/strict';
import type { Storage, SubscriptionRecord } from 'billing-engine';
import {
  assertChained,
  type BillingSeed,
  ledgerLineFixture,
  seedBillingSite,
  subscriptionFixture,
} from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

/** Commits `count` subscriptions of the seed's customer. */
async function subscriptions(storage: Storage, seed: BillingSeed, count: number): Promise<SubscriptionRecord[]> {
  return storage.transaction(async (tx) => {
    const out: SubscriptionRecord[] = [];
    for (let i = 0; i < count; i++)
      out.push(await tx.subscriptions.insert(subscriptionFixture(seed.customer, seed.product)));
    return out;
  });
}

/** Cases for the ledger and its chained balances. */
export function ledgerCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('ledger', () => {
    it('chains balances across lines and appends, starting at 0, with refunds starting at 0', async () => {
      const seed = await seedBillingSite(storage(), 'led-chain');
      const [sub] = await subscriptions(storage(), seed, 1);
      assert.ok(sub);
      const charge = ledgerLineFixture(sub, 1000, {
        kind: 'baseline',
        productId: seed.product.id,
        periodIndex: 1,
        memo: 'Basic: 1 month',
        createdAt: at(T0, 1),
      });
      const payment = ledgerLineFixture(sub, -1000, {
        type: 'payment',
        amountInCents: 1000,
        success: true,
        gatewayTransactionId: 'gw-1',
        createdAt: at(T0, 2),
      });
      const info = ledgerLineFixture(sub, 0, { type: 'info', amountInCents: 0, success: false, createdAt: at(T0, 3) });
      const first = await storage().transaction((tx) => tx.ledger.append([charge, payment, info]));
      assert.deepEqual(
        first.map((l) => [l.startingBalanceInCents, l.endingBalanceInCents, l.refundedAmountInCents]),
        [
          [0, 1000, 0],
          [1000, 0, 0],
          [0, 0, 0],
        ],
      );
      for (let i = 1; i < first.length; i++) assert.ok(first[i]!.id > first[i - 1]!.id, 'ids follow append order');
      const { balanceDeltaInCents: _delta, ...paymentFields } = payment;
      const {
        id: _id,
        startingBalanceInCents: _s,
        endingBalanceInCents: _e,
        refundedAmountInCents: _r,
        ...stored
      } = first[1]!;
      assert.deepEqual(stored, paymentFields, 'fields are stored as given');
      assert.equal(first[0]!.createdAt.getTime(), at(T0, 1).getTime(), 'instants keep millisecond precision');

      const second = await storage().transaction((tx) =>
        tx.ledger.append([ledgerLineFixture(sub, 250), ledgerLineFixture(sub, -400, { memo: 'credit' })]),
      );
      assert.deepEqual(
        second.map((l) => [l.startingBalanceInCents, l.endingBalanceInCents]),
        [
          [0, 250],
          [250, -150],
        ],
        'a later append continues from the committed balance, and balances may go negative',
      );
      assert.equal(await storage().transaction((tx) => tx.ledger.balance(seed.site.id, sub.id)), -150);
    });

    it("chains each subscription's balance independently, even within one append", async () => {
      const seed = await seedBillingSite(storage(), 'led-indep');
      const [s1, s2] = await subscriptions(storage(), seed, 2);
      assert.ok(s1 && s2);
      const lines = await storage().transaction((tx) =>
        tx.ledger.append([
          ledgerLineFixture(s1, 100),
          ledgerLineFixture(s2, 7),
          ledgerLineFixture(s1, 20),
          ledgerLineFixture(s2, 3),
        ]),
      );
      assert.deepEqual(
        lines.map((l) => [l.subscriptionId, l.startingBalanceInCents, l.endingBalanceInCents]),
        [
          [s1.id, 0, 100],
          [s2.id, 0, 7],
          [s1.id, 100, 120],
          [s2.id, 7, 10],
        ],
      );
      await storage().transaction(async (tx) => {
        assert.equal(await tx.ledger.balance(seed.site.id, s1.id), 120);
        assert.equal(await tx.ledger.balance(seed.site.id, s2.id), 10);
      });
    });

    it('reports the balance as the last ending balance, 0 without lines or outside the site', async () => {
      const seed = await seedBillingSite(storage(), 'led-bal');
      const other = await seedBillingSite(storage(), 'led-bal-other');
      const [sub, empty] = await subscriptions(storage(), seed, 2);
      assert.ok(sub && empty);
      assert.equal(await storage().transaction((tx) => tx.ledger.balance(seed.site.id, sub.id)), 0);
      await storage().transaction((tx) =>
        tx.ledger.append([ledgerLineFixture(sub, 500), ledgerLineFixture(sub, -120)]),
      );
      await storage().transaction(async (tx) => {
        assert.equal(await tx.ledger.balance(seed.site.id, sub.id), 380);
        assert.equal(await tx.ledger.balance(seed.site.id, empty.id), 0);
        assert.equal(await tx.ledger.balance(other.site.id, sub.id), 0, 'another site sees no lines of it');
      });
    });

    it("lists a subscription's lines in id order and finds a line only within its site", async () => {
      const seed = await seedBillingSite(storage(), 'led-list');
      const other = await seedBillingSite(storage(), 'led-list-other');
      const [s1, s2] = await subscriptions(storage(), seed, 2);
      assert.ok(s1 && s2);
      const appended = await storage().transaction(async (tx) => [
        ...(await tx.ledger.append([ledgerLineFixture(s1, 10), ledgerLineFixture(s2, 1)])),
        ...(await tx.ledger.append([ledgerLineFixture(s1, 20)])),
      ]);
      const [a1, , a2] = appended;
      assert.ok(a1 && a2);
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.ledger.listForSubscription(seed.site.id, s1.id), [a1, a2]);
        assert.deepEqual(await tx.ledger.findById(seed.site.id, a2.id), a2);
        assert.equal(await tx.ledger.findById(other.site.id, a2.id), undefined);
        assert.equal(await tx.ledger.findById(seed.site.id, 987_654), undefined);
        assert.deepEqual(await tx.ledger.listForSubscription(other.site.id, s1.id), []);
      });
    });

    it('leaves no trace of a rolled-back append, and chains the next one from the committed balance', async () => {
      const seed = await seedBillingSite(storage(), 'led-roll');
      const [sub] = await subscriptions(storage(), seed, 1);
      assert.ok(sub);
      await storage().transaction((tx) => tx.ledger.append([ledgerLineFixture(sub, 300)]));
      const abort = new Abort('abort');
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.ledger.append([ledgerLineFixture(sub, 1000)]);
          const [seen] = await tx.ledger.append([ledgerLineFixture(sub, 1)]);
          assert.equal(seen?.startingBalanceInCents, 1300, 'a transaction sees its own appends');
          assert.equal(await tx.ledger.balance(seed.site.id, sub.id), 1301);
          throw abort;
        }),
        (error: unknown) => error === abort,
      );
      await storage().transaction(async (tx) => {
        assert.equal(await tx.ledger.balance(seed.site.id, sub.id), 300);
        assert.equal((await tx.ledger.listForSubscription(seed.site.id, sub.id)).length, 1);
      });
      const [next] = await storage().transaction((tx) => tx.ledger.append([ledgerLineFixture(sub, 50)]));
      assert.equal(next?.startingBalanceInCents, 300);
      assert.equal(next?.endingBalanceInCents, 350);
      assertChained(await storage().transaction((tx) => tx.ledger.listForSubscription(seed.site.id, sub.id)), 0);
    });
  });
}
