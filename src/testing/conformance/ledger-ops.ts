import assert from 'node:assert/strict';
import type { Storage, SubscriptionRecord, TransactionFilter, TransactionRecord } from 'billing-engine';
import {
  type BillingSeed,
  isConflict,
  ledgerLineFixture,
  seedBillingSite,
  subscriptionFixture,
} from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

async function subscription(storage: Storage, seed: BillingSeed, overrides: Partial<SubscriptionRecord> = {}) {
  return storage.transaction((tx) =>
    tx.subscriptions.insert(subscriptionFixture(seed.customer, seed.product, overrides)),
  );
}

/** Commits one successful payment line of `amount` on a subscription. */
async function paymentLine(
  storage: Storage,
  sub: SubscriptionRecord,
  amount: number,
  createdAt = T0,
): Promise<TransactionRecord> {
  const [line] = await storage.transaction((tx) =>
    tx.ledger.append([
      ledgerLineFixture(sub, -amount, {
        type: 'payment',
        amountInCents: amount,
        success: true,
        gatewayTransactionId: 'gw-pay',
        createdAt,
      }),
    ]),
  );
  assert.ok(line);
  return line;
}

/**
 * Cases for the ledger operations refunds and transaction lists rely on: `addRefunded`, the
 * race-safe reservation of a payment's refundable amount, and `list` with its filters and orders.
 */
export function ledgerOpsCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('ledger operations', () => {
    it('adds refunded amounts up to exactly the payment and refuses more without changing it', async () => {
      const seed = await seedBillingSite(storage(), 'ref-limit');
      const sub = await subscription(storage(), seed);
      const payment = await paymentLine(storage(), sub, 1000);
      const first = await storage().transaction((tx) => tx.ledger.addRefunded(seed.site.id, payment.id, 400));
      assert.deepEqual(first, { ...payment, refundedAmountInCents: 400 }, 'only the refunded amount changes');
      const full = await storage().transaction((tx) => tx.ledger.addRefunded(seed.site.id, payment.id, 600));
      assert.equal(full?.refundedAmountInCents, 1000, 'the total may reach the payment amount exactly');
      const over = await storage().transaction((tx) => tx.ledger.addRefunded(seed.site.id, payment.id, 1));
      assert.equal(over, undefined, 'one cent past the payment is refused');
      const stored = await storage().transaction((tx) => tx.ledger.findById(seed.site.id, payment.id));
      assert.equal(stored?.refundedAmountInCents, 1000);
      assert.equal(stored?.endingBalanceInCents, payment.endingBalanceInCents, 'refunds never move balances');
      assert.equal(await storage().transaction((tx) => tx.ledger.balance(seed.site.id, sub.id)), -1000);
    });

    it('refuses an amount that exceeds the payment in one step and leaves the total unchanged', async () => {
      const seed = await seedBillingSite(storage(), 'ref-exceed');
      const sub = await subscription(storage(), seed);
      const payment = await paymentLine(storage(), sub, 500);
      await storage().transaction((tx) => tx.ledger.addRefunded(seed.site.id, payment.id, 200));
      assert.equal(
        await storage().transaction((tx) => tx.ledger.addRefunded(seed.site.id, payment.id, 301)),
        undefined,
      );
      assert.equal(
        await storage().transaction((tx) => tx.ledger.addRefunded(seed.site.id, payment.id, 10_000)),
        undefined,
      );
      const stored = await storage().transaction((tx) => tx.ledger.findById(seed.site.id, payment.id));
      assert.equal(stored?.refundedAmountInCents, 200);
    });

    it('refuses non-payment lines, missing lines and lines of another site', async () => {
      const seed = await seedBillingSite(storage(), 'ref-kind');
      const other = await seedBillingSite(storage(), 'ref-kind-other');
      const sub = await subscription(storage(), seed);
      const [charge, credit, refund] = await storage().transaction((tx) =>
        tx.ledger.append([
          ledgerLineFixture(sub, 1000),
          ledgerLineFixture(sub, -100),
          ledgerLineFixture(sub, 0, { type: 'refund', amountInCents: 50 }),
        ]),
      );
      assert.ok(charge && credit && refund);
      const payment = await paymentLine(storage(), sub, 1000);
      await storage().transaction(async (tx) => {
        assert.equal(await tx.ledger.addRefunded(seed.site.id, charge.id, 10), undefined, 'a charge is not a payment');
        assert.equal(await tx.ledger.addRefunded(seed.site.id, credit.id, 10), undefined, 'a credit is not a payment');
        assert.equal(await tx.ledger.addRefunded(seed.site.id, refund.id, 10), undefined, 'a refund is not a payment');
        assert.equal(await tx.ledger.addRefunded(seed.site.id, 987_654, 10), undefined, 'a missing line');
        assert.equal(await tx.ledger.addRefunded(other.site.id, payment.id, 10), undefined, "another site's payment");
      });
      await storage().transaction(async (tx) => {
        for (const line of [charge, credit, refund, payment]) {
          assert.equal((await tx.ledger.findById(seed.site.id, line.id))?.refundedAmountInCents, 0);
        }
      });
    });

    it('releases an earlier reservation with a negative amount', async () => {
      const seed = await seedBillingSite(storage(), 'ref-release');
      const sub = await subscription(storage(), seed);
      const payment = await paymentLine(storage(), sub, 1000);
      await storage().transaction((tx) => tx.ledger.addRefunded(seed.site.id, payment.id, 700));
      const released = await storage().transaction((tx) => tx.ledger.addRefunded(seed.site.id, payment.id, -300));
      assert.equal(released?.refundedAmountInCents, 400);
      const again = await storage().transaction((tx) => tx.ledger.addRefunded(seed.site.id, payment.id, 600));
      assert.equal(again?.refundedAmountInCents, 1000, 'the released amount is refundable again');
    });

    it('leaves no trace of a reservation in a rolled-back transaction', async () => {
      const seed = await seedBillingSite(storage(), 'ref-roll');
      const sub = await subscription(storage(), seed);
      const payment = await paymentLine(storage(), sub, 1000);
      const abort = new Abort('abort');
      await assert.rejects(
        storage().transaction(async (tx) => {
          const seen = await tx.ledger.addRefunded(seed.site.id, payment.id, 800);
          assert.equal(seen?.refundedAmountInCents, 800);
          assert.equal((await tx.ledger.findById(seed.site.id, payment.id))?.refundedAmountInCents, 800, 'seen inside');
          assert.equal(await tx.ledger.addRefunded(seed.site.id, payment.id, 201), undefined, 'the limit counts it');
          throw abort;
        }),
        (error: unknown) => error === abort,
      );
      const stored = await storage().transaction((tx) => tx.ledger.findById(seed.site.id, payment.id));
      assert.equal(stored?.refundedAmountInCents, 0);
    });

    it('lets exactly 3 of 10 concurrent reservations of 300 on a payment of 1000 in', async () => {
      const seed = await seedBillingSite(storage(), 'ref-race');
      const sub = await subscription(storage(), seed);
      const payment = await paymentLine(storage(), sub, 1000);
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          storage().transaction((tx) => tx.ledger.addRefunded(seed.site.id, payment.id, 300)),
        ),
      );
      const won = results.filter((r) => r !== undefined);
      assert.equal(won.length, 3, 'a lost update would let more than 3 in');
      assert.deepEqual(
        won.map((r) => r.refundedAmountInCents).sort((a, b) => a - b),
        [300, 600, 900],
        'each winner saw the previous winners',
      );
      const stored = await storage().transaction((tx) => tx.ledger.findById(seed.site.id, payment.id));
      assert.equal(stored?.refundedAmountInCents, 900);
    });

    it('lists lines by id, filtered by subscription, type, kind, id and instant bounds, one page at a time', async () => {
      const seed = await seedBillingSite(storage(), 'led-filter');
      const other = await seedBillingSite(storage(), 'led-filter-other');
      const s1 = await subscription(storage(), seed);
      const s2 = await subscription(storage(), seed);
      const o1 = await subscription(storage(), other);
      const lines = await storage().transaction((tx) =>
        tx.ledger.append([
          ledgerLineFixture(s1, 1000, { kind: 'baseline', createdAt: at(T0, 10) }),
          ledgerLineFixture(s2, 500, { kind: 'one_time', createdAt: at(T0, 20) }),
          ledgerLineFixture(s1, -1000, { type: 'payment', amountInCents: 1000, kind: null, createdAt: at(T0, 30) }),
          ledgerLineFixture(s1, 200, { kind: 'one_time', createdAt: at(T0, 40) }),
          ledgerLineFixture(s2, -50, { type: 'adjustment', createdAt: at(T0, 50) }),
          ledgerLineFixture(o1, 999, { kind: 'one_time', createdAt: at(T0, 30) }),
        ]),
      );
      const [a, b, c, d, e, foreign] = lines;
      assert.ok(a && b && c && d && e && foreign);
      const ids = async (filter: TransactionFilter, page = 1, perPage = 50) =>
        (
          await storage().transaction((tx) =>
            tx.ledger.list(seed.site.id, { direction: 'asc', ...filter }, { page, perPage }),
          )
        ).map((l) => l.id);
      assert.deepEqual(await ids({}), [a.id, b.id, c.id, d.id, e.id], "by id, only the site's own");
      assert.deepEqual(await ids({ orderBy: 'id' }), [a.id, b.id, c.id, d.id, e.id], 'id is the default order');
      assert.deepEqual(await ids({ direction: 'desc' }), [e.id, d.id, c.id, b.id, a.id]);
      assert.deepEqual(await ids({ subscriptionId: s1.id }), [a.id, c.id, d.id]);
      assert.deepEqual(await ids({ subscriptionId: o1.id }), [], "another site's subscription shows nothing");
      assert.deepEqual(await ids({ types: ['payment', 'adjustment'] }), [c.id, e.id]);
      assert.deepEqual(await ids({ types: [] }), [], 'an empty type list matches nothing');
      assert.deepEqual(await ids({ kinds: ['one_time'] }), [b.id, d.id]);
      assert.deepEqual(await ids({ kinds: ['one_time'], subscriptionId: s2.id }), [b.id]);
      assert.deepEqual(await ids({ sinceId: b.id, maxId: d.id }), [b.id, c.id, d.id], 'id bounds are inclusive');
      assert.deepEqual(
        await ids({ since: at(T0, 20), until: at(T0, 40) }),
        [b.id, c.id, d.id],
        'instant bounds are inclusive',
      );
      assert.deepEqual(await ids({ since: at(T0, 21), until: at(T0, 39) }), [c.id], 'millisecond precision');
      assert.deepEqual(await ids({}, 1, 2), [a.id, b.id]);
      assert.deepEqual(await ids({}, 3, 2), [e.id]);
      assert.deepEqual(await ids({}, 4, 2), [], 'a page past the end is empty');
      assert.deepEqual(await ids({ subscriptionId: s1.id }, 2, 2), [d.id], 'pages count filtered rows');
      const listed = await storage().transaction((tx) =>
        tx.ledger.list(seed.site.id, { sinceId: c.id, maxId: c.id }, { page: 1, perPage: 5 }),
      );
      assert.deepEqual(listed, [c], 'listed lines are whole records');
    });

    it('orders by created_at with ties broken by id, in both directions', async () => {
      const seed = await seedBillingSite(storage(), 'led-order');
      const sub = await subscription(storage(), seed);
      const lines = await storage().transaction((tx) =>
        tx.ledger.append([
          ledgerLineFixture(sub, 1, { createdAt: at(T0, 300) }),
          ledgerLineFixture(sub, 2, { createdAt: at(T0, 100) }),
          ledgerLineFixture(sub, 3, { createdAt: at(T0, 200) }),
          ledgerLineFixture(sub, 4, { createdAt: at(T0, 200) }),
        ]),
      );
      const [l1, l2, l3, l4] = lines;
      assert.ok(l1 && l2 && l3 && l4);
      const ids = async (filter: TransactionFilter, page = 1, perPage = 10) =>
        (
          await storage().transaction((tx) =>
            tx.ledger.list(seed.site.id, { direction: 'asc', ...filter }, { page, perPage }),
          )
        ).map((l) => l.id);
      assert.deepEqual(await ids({ orderBy: 'created_at' }), [l2.id, l3.id, l4.id, l1.id]);
      assert.deepEqual(await ids({ orderBy: 'created_at', direction: 'desc' }), [l1.id, l4.id, l3.id, l2.id]);
      assert.deepEqual(await ids({ orderBy: 'created_at' }, 2, 2), [l4.id, l1.id], 'pages follow the order');
      assert.deepEqual(await ids({ orderBy: 'id', direction: 'desc' }), [l4.id, l3.id, l2.id, l1.id]);
    });
  });
}

/** Cases for referral codes on subscriptions: lookup by code, unique per site. */
export function referralCodeCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('referral codes', () => {
    it('finds a subscription by its referral code within its site only', async () => {
      const seed = await seedBillingSite(storage(), 'ref-code');
      const other = await seedBillingSite(storage(), 'ref-code-other');
      const sub = await subscription(storage(), seed, { referralCode: 'ABCD2345' });
      await subscription(storage(), seed);
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.subscriptions.findByReferralCode(seed.site.id, 'ABCD2345'), sub);
        assert.equal(await tx.subscriptions.findByReferralCode(seed.site.id, 'NOPE2345'), undefined);
        assert.equal(await tx.subscriptions.findByReferralCode(other.site.id, 'ABCD2345'), undefined);
      });
    });

    it('refuses a taken referral code on the same site with a conflict, allows it on another site', async () => {
      const seed = await seedBillingSite(storage(), 'ref-dup');
      const other = await seedBillingSite(storage(), 'ref-dup-other');
      const first = await subscription(storage(), seed, { referralCode: 'SAME2345' });
      await assert.rejects(subscription(storage(), seed, { referralCode: 'SAME2345' }), isConflict);
      const elsewhere = await subscription(storage(), other, { referralCode: 'SAME2345' });
      await storage().transaction(async (tx) => {
        assert.equal((await tx.subscriptions.findByReferralCode(seed.site.id, 'SAME2345'))?.id, first.id);
        assert.equal((await tx.subscriptions.findByReferralCode(other.site.id, 'SAME2345'))?.id, elsewhere.id);
        assert.equal(
          await tx.subscriptions.countForCustomer(seed.site.id, seed.customer.id),
          1,
          'the loser left nothing',
        );
      });
    });

    it('refuses an update to a referral code another subscription of the site holds', async () => {
      const seed = await seedBillingSite(storage(), 'ref-upd');
      const holder = await subscription(storage(), seed, { referralCode: 'HELD2345' });
      const sub = await subscription(storage(), seed);
      await assert.rejects(
        storage().transaction((tx) =>
          tx.subscriptions.updateAtVersion(seed.site.id, sub.id, sub.version, { referralCode: 'HELD2345' }),
        ),
        isConflict,
      );
      const own = await storage().transaction((tx) =>
        tx.subscriptions.updateAtVersion(seed.site.id, holder.id, holder.version, { referralCode: 'HELD2345' }),
      );
      assert.equal(own?.referralCode, 'HELD2345', 'keeping its own code is no conflict');
      const fresh = await storage().transaction((tx) =>
        tx.subscriptions.updateAtVersion(seed.site.id, sub.id, sub.version, { referralCode: 'FREE2345' }),
      );
      assert.equal(fresh?.referralCode, 'FREE2345');
      await storage().transaction(async (tx) => {
        assert.equal((await tx.subscriptions.findByReferralCode(seed.site.id, 'HELD2345'))?.id, holder.id);
        assert.equal((await tx.subscriptions.findByReferralCode(seed.site.id, 'FREE2345'))?.id, sub.id);
      });
    });

    it('allows any number of subscriptions without a referral code', async () => {
      const seed = await seedBillingSite(storage(), 'ref-null');
      await subscription(storage(), seed);
      await subscription(storage(), seed);
      await subscription(storage(), seed, { referralCode: null });
      const count = await storage().transaction((tx) =>
        tx.subscriptions.countForCustomer(seed.site.id, seed.customer.id),
      );
      assert.equal(count, 3);
    });
  });
}
