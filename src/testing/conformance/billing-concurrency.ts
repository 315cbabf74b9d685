import assert from 'node:assert/strict';
import type { PaymentAttemptRecord } from 'billing-engine';
import {
  assertChained,
  isConflict,
  ledgerLineFixture,
  paymentAttemptFixture,
  seedBillingSite,
  subscriptionFixture,
} from './billing-fixtures.js';
import type { SectionContext } from './harness.js';

/**
 * Race cases for the billing slice's race-sensitive operations. Like the core concurrency cases
 * they run on every adapter: with serialised writers they check interleaved callers, with
 * concurrent transactions they are real races (lost updates, unique-key races, version checks).
 */
export function billingConcurrencyCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('billing concurrency', () => {
    it('chains the balance exactly across 20 concurrent ledger appends to one subscription', async () => {
      const seed = await seedBillingSite(storage(), 'race-ledger');
      const sub = await storage().transaction((tx) =>
        tx.subscriptions.insert(subscriptionFixture(seed.customer, seed.product)),
      );
      const appended = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          storage().transaction((tx) => tx.ledger.append([ledgerLineFixture(sub, 100, { memo: `writer-${i}` })])),
        ),
      );
      assert.equal(appended.flat().length, 20);
      const lines = await storage().transaction((tx) => tx.ledger.listForSubscription(seed.site.id, sub.id));
      assert.equal(lines.length, 20);
      // A lost update shows as two lines with the same starting balance, so the chain breaks.
      assertChained(
        lines,
        0,
        Array.from({ length: 20 }, () => 100),
      );
      assert.equal(await storage().transaction((tx) => tx.ledger.balance(seed.site.id, sub.id)), 2000);
      assert.deepEqual(
        lines.map((l) => l.endingBalanceInCents),
        Array.from({ length: 20 }, (_, i) => (i + 1) * 100),
      );
    });

    it('lets exactly one of 10 concurrent payment attempts with one idempotency key in, the rest conflict', async () => {
      const seed = await seedBillingSite(storage(), 'race-pay');
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          storage().transaction((tx) =>
            tx.payments.insert(paymentAttemptFixture(seed.site.id, 'renewal:1:1', { amountInCents: 100 + i })),
          ),
        ),
      );
      const won = results.filter((r): r is PromiseFulfilledResult<PaymentAttemptRecord> => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.equal(won.length, 1);
      assert.equal(lost.length, 9);
      for (const loser of lost)
        assert.ok(isConflict(loser.reason), `a loser rejects with conflict, not ${String(loser.reason)}`);
      const stored = await storage().transaction((tx) => tx.payments.findByKey(seed.site.id, 'renewal:1:1'));
      assert.deepEqual(stored, won[0]?.value);
    });

    it('lets exactly one of 10 concurrent customer updates at one version win', async () => {
      const seed = await seedBillingSite(storage(), 'race-cus');
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          storage().transaction((tx) =>
            tx.customers.updateAtVersion(seed.site.id, seed.customer.id, seed.customer.version, {
              firstName: `writer-${i}`,
            }),
          ),
        ),
      );
      const winners = results.filter((r) => r !== undefined);
      assert.equal(winners.length, 1);
      const stored = await storage().transaction((tx) => tx.customers.findById(seed.site.id, seed.customer.id));
      assert.equal(stored?.version, 2);
      assert.equal(stored?.firstName, winners[0]?.firstName);
    });
  });
}
