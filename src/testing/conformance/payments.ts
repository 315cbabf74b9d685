import assert from 'node:assert/strict';
import {
  isConflict,
  ledgerLineFixture,
  paymentAttemptFixture,
  seedBillingSite,
  subscriptionFixture,
} from './billing-fixtures.js';
import { at, newSiteFixture, type SectionContext, T0 } from './harness.js';

/** Cases for payment attempts. */
export function paymentCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('payment attempts', () => {
    it('inserts attempts and finds them by idempotency key, fields exact, within the site', async () => {
      const seed = await seedBillingSite(storage(), 'pay-find');
      const other = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('pay-find-other')));
      const sub = await storage().transaction((tx) =>
        tx.subscriptions.insert(subscriptionFixture(seed.customer, seed.product)),
      );
      const signup = paymentAttemptFixture(seed.site.id, 'signup:abc', { createdAt: at(T0, 1), updatedAt: at(T0, 2) });
      const renewal = paymentAttemptFixture(seed.site.id, `renewal:${sub.id}:2`, {
        subscriptionId: sub.id,
        customerId: seed.customer.id,
        amountInCents: 0,
        purpose: 'renewal',
        status: 'unknown',
        message: 'timeout',
      });
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.payments.insert(signup),
        await tx.payments.insert(renewal),
      ]);
      assert.ok(a && b);
      assert.ok(Number.isSafeInteger(a.id) && a.id > 0);
      const { id: _a, ...aFields } = a;
      const { id: _b, ...bFields } = b;
      assert.deepEqual(aFields, signup);
      assert.deepEqual(bFields, renewal);
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.payments.findByKey(seed.site.id, 'signup:abc'), a);
        assert.deepEqual(await tx.payments.findByKey(seed.site.id, renewal.idempotencyKey), b);
        assert.equal(
          (await tx.payments.findByKey(seed.site.id, 'signup:abc'))?.updatedAt.getTime(),
          at(T0, 2).getTime(),
        );
        assert.equal(await tx.payments.findByKey(seed.site.id, 'signup:missing'), undefined);
        assert.equal(await tx.payments.findByKey(other.id, 'signup:abc'), undefined, 'another site sees nothing');
      });
    });

    it('refuses a taken idempotency key within a site but allows it on another site', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('pay-dup-a')),
        await tx.sites.insert(newSiteFixture('pay-dup-b')),
      ]);
      const first = await storage().transaction((tx) => tx.payments.insert(paymentAttemptFixture(a.id, 'k')));
      await assert.rejects(
        storage().transaction((tx) => tx.payments.insert(paymentAttemptFixture(a.id, 'k', { amountInCents: 5 }))),
        isConflict,
      );
      const onB = await storage().transaction((tx) => tx.payments.insert(paymentAttemptFixture(b.id, 'k')));
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.payments.findByKey(a.id, 'k'), first, 'the first attempt is untouched');
        assert.deepEqual(await tx.payments.findByKey(b.id, 'k'), onB);
      });
    });

    it('records an outcome by patch, leaving other fields, and only within the site', async () => {
      const seed = await seedBillingSite(storage(), 'pay-upd');
      const other = await storage().transaction((tx) => tx.sites.insert(newSiteFixture('pay-upd-other')));
      const { attempt, line } = await storage().transaction(async (tx) => {
        const sub = await tx.subscriptions.insert(subscriptionFixture(seed.customer, seed.product));
        const [payment] = await tx.ledger.append([
          ledgerLineFixture(sub, -1999, { type: 'payment', amountInCents: 1999 }),
        ]);
        const inserted = await tx.payments.insert(
          paymentAttemptFixture(seed.site.id, 'renewal:1', { subscriptionId: sub.id, customerId: seed.customer.id }),
        );
        return { attempt: inserted, line: payment! };
      });
      const resolvedAt = at(T0, 4_000 + 44);
      const updated = await storage().transaction((tx) =>
        tx.payments.update(seed.site.id, attempt.id, {
          status: 'succeeded',
          gatewayTransactionId: 'gw-9',
          transactionId: line.id,
          updatedAt: resolvedAt,
        }),
      );
      assert.deepEqual(updated, {
        ...attempt,
        status: 'succeeded',
        gatewayTransactionId: 'gw-9',
        transactionId: line.id,
        updatedAt: resolvedAt,
      });
      assert.deepEqual(await storage().transaction((tx) => tx.payments.findByKey(seed.site.id, 'renewal:1')), updated);
      const noted = await storage().transaction((tx) =>
        tx.payments.update(seed.site.id, attempt.id, { message: 'note' }),
      );
      assert.equal(noted?.message, 'note');
      assert.equal(noted?.status, 'succeeded', 'a later patch keeps the earlier outcome');
      await storage().transaction(async (tx) => {
        assert.equal(await tx.payments.update(other.id, attempt.id, { status: 'failed' }), undefined);
        assert.equal(await tx.payments.update(seed.site.id, 987_654, { status: 'failed' }), undefined);
      });
      assert.equal(
        (await storage().transaction((tx) => tx.payments.findByKey(seed.site.id, 'renewal:1')))?.status,
        'succeeded',
        "another site's update changed nothing",
      );
    });

    it('lists unresolved attempts created before an instant, oldest first, limited, across sites', async () => {
      const [a, b] = await storage().transaction(async (tx) => [
        await tx.sites.insert(newSiteFixture('pay-unres-a')),
        await tx.sites.insert(newSiteFixture('pay-unres-b')),
      ]);
      const before = at(T0, 10_000);
      await storage().transaction(async (tx) => {
        // Inserted out of creation order, so only sorting by creation time gives the expected order.
        await tx.payments.insert(paymentAttemptFixture(a.id, 'p3', { createdAt: at(T0, 3_000) }));
        await tx.payments.insert(paymentAttemptFixture(b.id, 'u1', { createdAt: at(T0, 1_000), status: 'unknown' }));
        await tx.payments.insert(paymentAttemptFixture(a.id, 'ok', { createdAt: at(T0, 500), status: 'succeeded' }));
        await tx.payments.insert(paymentAttemptFixture(a.id, 'no', { createdAt: at(T0, 600), status: 'declined' }));
        await tx.payments.insert(paymentAttemptFixture(b.id, 'bad', { createdAt: at(T0, 700), status: 'failed' }));
        await tx.payments.insert(paymentAttemptFixture(a.id, 'p2', { createdAt: at(T0, 2_000) }));
        await tx.payments.insert(paymentAttemptFixture(a.id, 'edge', { createdAt: before }));
        await tx.payments.insert(paymentAttemptFixture(b.id, 'late', { createdAt: at(before, 1) }));
        await tx.payments.insert(paymentAttemptFixture(b.id, 'u0', { createdAt: at(before, -1) }));
      });
      const keys = async (limit: number) =>
        (await storage().transaction((tx) => tx.payments.listUnresolved(before, limit))).map((p) => p.idempotencyKey);
      assert.deepEqual(await keys(10), ['u1', 'p2', 'p3', 'u0'], 'strictly before, pending or unknown only');
      assert.deepEqual(await keys(2), ['u1', 'p2']);
      const later = await storage().transaction((tx) => tx.payments.listUnresolved(at(before, 2), 10));
      assert.deepEqual(
        later.map((p) => [p.siteId, p.idempotencyKey]),
        [
          [b.id, 'u1'],
          [a.id, 'p2'],
          [a.id, 'p3'],
          [b.id, 'u0'],
          [a.id, 'edge'],
          [b.id, 'late'],
        ],
      );
      assert.deepEqual(await storage().transaction((tx) => tx.payments.listUnresolved(T0, 10)), []);
    });
  });
}
