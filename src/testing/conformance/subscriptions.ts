import assert from 'node:assert/strict';
import type { SubscriptionFilter, SubscriptionRecord } from 'billing-engine';
import {
  customerFixture,
  DAY,
  isConflict,
  ledgerLineFixture,
  paymentProfileFixture,
  productFixture,
  seedBillingSite,
  subscriptionFixture,
  termsFixture,
} from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

/** Every instant field of a subscription, nullable or not, to check each keeps its milliseconds. */
const DATE_FIELDS = [
  'periodAnchorAt',
  'currentPeriodStartedAt',
  'currentPeriodEndsAt',
  'nextAssessmentAt',
  'trialStartedAt',
  'trialEndedAt',
  'activatedAt',
  'canceledAt',
  'expiresAt',
  'delayedCancelAt',
  'createdAt',
  'updatedAt',
] as const satisfies readonly (keyof SubscriptionRecord)[];

/** A nested extension document with every JSON kind, so a codec that drops or coerces any shows. */
const DATA = {
  dunning: { attempt: 2, lastError: null, notified: true, skipped: false },
  pendingChange: { productId: 7, at: '2026-04-01T00:00:00.000Z' },
  tags: ['a', 1, null, false],
  ratio: 0.25,
};

/** Cases for subscriptions. */
export function subscriptionCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('subscriptions', () => {
    it('inserts and finds a subscription with every instant to the millisecond and JSON fields exact', async () => {
      const { site, product, customer } = await seedBillingSite(storage(), 'sub-find');
      const profile = await storage().transaction((tx) =>
        tx.customers.insertPaymentProfile(paymentProfileFixture(customer)),
      );
      // Every instant set, each with its own millisecond, so any one truncated or swapped shows.
      const input = subscriptionFixture(customer, product, {
        paymentProfileId: profile.id,
        // The non-default method, so an adapter that drops the column shows.
        paymentCollectionMethod: 'remittance',
        state: 'trialing',
        periodAnchorAt: at(T0, 11),
        periodIndex: 3,
        currentPeriodStartedAt: at(T0, 12),
        currentPeriodEndsAt: at(T0, 14 * DAY + 13),
        nextAssessmentAt: at(T0, 14 * DAY + 14),
        trialStartedAt: at(T0, 15),
        trialEndedAt: at(T0, 14 * DAY + 16),
        activatedAt: at(T0, 17),
        canceledAt: at(T0, 18),
        expiresAt: at(T0, 365 * DAY + 19),
        delayedCancelAt: at(T0, 20 * DAY + 20),
        cancelAtEndOfPeriod: true,
        cancellationMessage: 'Too pricey',
        cancellationMethod: 'merchant_ui',
        signupRevenueInCents: 0,
        couponCodes: ['SPRING', 'VIP'],
        referralCode: 'ref-abc',
        data: DATA,
        createdAt: at(T0, 21),
        updatedAt: at(T0, 22),
      });
      const created = await storage().transaction((tx) => tx.subscriptions.insert(input));
      assert.equal(created.version, 1);
      assert.ok(Number.isSafeInteger(created.id) && created.id > 0);
      const { id: _id, version: _version, ...fields } = created;
      // A subscription inserted without a reference has none (null), whatever else it has.
      assert.deepEqual(fields, { ...input, reference: input.reference ?? null });
      const found = await storage().transaction((tx) => tx.subscriptions.findById(site.id, created.id));
      assert.deepEqual(found, created);
      assert.ok(found);
      for (const field of DATE_FIELDS) {
        const value: Date | null = found[field];
        assert.ok(value instanceof Date, `${field} is a Date`);
        assert.equal(value.getTime(), input[field]?.getTime(), `${field} keeps millisecond precision`);
      }
      assert.deepEqual(found.couponCodes, ['SPRING', 'VIP'], 'coupon order is kept');
      assert.deepEqual(found.data, DATA);
      assert.equal(await storage().transaction((tx) => tx.subscriptions.findById(site.id, 987_654)), undefined);
    });

    it('round-trips a subscription whose nullable fields are null and whose lists are empty', async () => {
      const { site, product, customer } = await seedBillingSite(storage(), 'sub-nulls');
      const input = subscriptionFixture(customer, product, { nextAssessmentAt: null, activatedAt: null });
      const created = await storage().transaction((tx) => tx.subscriptions.insert(input));
      const found = await storage().transaction((tx) => tx.subscriptions.findById(site.id, created.id));
      assert.deepEqual(found, created);
      for (const field of DATE_FIELDS) {
        assert.equal(found?.[field]?.getTime() ?? null, input[field]?.getTime() ?? null, field);
      }
      assert.equal(found?.nextAssessmentAt, null);
      assert.equal(found?.paymentProfileId, null);
      assert.equal(found?.cancelAtEndOfPeriod, false);
      assert.deepEqual(found?.couponCodes, []);
      assert.deepEqual(found?.data, {});
    });

    it('defaults the payment collection method to automatic and changes it in both directions', async () => {
      const { site, product, customer } = await seedBillingSite(storage(), 'sub-collect');
      const { paymentCollectionMethod: _left, ...fixture } = subscriptionFixture(customer, product) as ReturnType<
        typeof subscriptionFixture
      > & { paymentCollectionMethod?: string };
      const sub = await storage().transaction((tx) => tx.subscriptions.insert(fixture));
      assert.equal(sub.paymentCollectionMethod, 'automatic', 'left out, the method is automatic');
      const remittance = await storage().transaction((tx) =>
        tx.subscriptions.updateAtVersion(site.id, sub.id, sub.version, { paymentCollectionMethod: 'remittance' }),
      );
      assert.equal(remittance?.paymentCollectionMethod, 'remittance');
      assert.equal(
        (await storage().transaction((tx) => tx.subscriptions.findById(site.id, sub.id)))?.paymentCollectionMethod,
        'remittance',
        'the change is stored',
      );
      const untouched = await storage().transaction((tx) =>
        tx.subscriptions.updateAtVersion(site.id, sub.id, remittance!.version, { state: 'past_due' }),
      );
      assert.equal(untouched?.paymentCollectionMethod, 'remittance', 'a patch without it keeps it');
      const back = await storage().transaction((tx) =>
        tx.subscriptions.updateAtVersion(site.id, sub.id, untouched!.version, { paymentCollectionMethod: 'automatic' }),
      );
      assert.equal(back?.paymentCollectionMethod, 'automatic');
    });

    it('updates only at the expected version, bumps it and applies the patch exactly', async () => {
      const { site, product, customer } = await seedBillingSite(storage(), 'sub-ver');
      const other = await seedBillingSite(storage(), 'sub-ver-other');
      const sub = await storage().transaction((tx) => tx.subscriptions.insert(subscriptionFixture(customer, product)));
      const canceledAt = at(T0, 2 * DAY + 123);
      const updated = await storage().transaction((tx) =>
        tx.subscriptions.updateAtVersion(site.id, sub.id, 1, {
          state: 'cancelled',
          canceledAt,
          nextAssessmentAt: null,
          couponCodes: ['BYE'],
          data: { reason: { code: 'x', final: true } },
          updatedAt: canceledAt,
        }),
      );
      assert.equal(updated?.version, 2);
      assert.equal(updated?.state, 'cancelled');
      assert.equal(updated?.canceledAt?.getTime(), canceledAt.getTime());
      assert.equal(updated?.nextAssessmentAt, null, 'a date can be cleared');
      assert.deepEqual(updated?.couponCodes, ['BYE']);
      assert.deepEqual(updated?.data, { reason: { code: 'x', final: true } });
      assert.equal(
        updated?.currentPeriodEndsAt.getTime(),
        sub.currentPeriodEndsAt.getTime(),
        'fields outside the patch stay',
      );
      assert.equal(updated?.createdAt.getTime(), T0.getTime());

      const stale = await storage().transaction((tx) =>
        tx.subscriptions.updateAtVersion(site.id, sub.id, 1, { state: 'active' }),
      );
      assert.equal(stale, undefined);
      assert.equal(
        await storage().transaction((tx) => tx.subscriptions.updateAtVersion(site.id, 987_654, 1, { state: 'active' })),
        undefined,
      );
      assert.equal(
        await storage().transaction((tx) =>
          tx.subscriptions.updateAtVersion(other.site.id, sub.id, 2, { state: 'active' }),
        ),
        undefined,
        'another site cannot update it',
      );
      assert.deepEqual(await storage().transaction((tx) => tx.subscriptions.findById(site.id, sub.id)), updated);
    });

    it('within one transaction: answers are copies, an update is the next read, a stale one changes nothing', async () => {
      const { site, product, customer } = await seedBillingSite(storage(), 'sub-in-tx');
      const sub = await storage().transaction((tx) =>
        tx.subscriptions.insert(subscriptionFixture(customer, product, { data: { n: 1 } })),
      );
      await storage().transaction(async (tx) => {
        const first = await tx.subscriptions.findById(site.id, sub.id);
        assert.ok(first);
        (first as { state: string }).state = 'mutated';
        (first.data as { n: number }).n = 99;
        assert.deepEqual(await tx.subscriptions.findById(site.id, sub.id), sub, 'a copy each time');
        const updated = await tx.subscriptions.updateAtVersion(site.id, sub.id, 1, { state: 'past_due' });
        assert.equal(updated?.version, 2);
        (updated as { state: string }).state = 'mutated';
        const read = await tx.subscriptions.findById(site.id, sub.id);
        assert.equal(read?.state, 'past_due', 'the update, not what its caller did with its answer');
        assert.equal(read?.version, 2);
        assert.equal(await tx.subscriptions.updateAtVersion(site.id, sub.id, 1, { state: 'active' }), undefined);
        assert.equal((await tx.subscriptions.findById(site.id, sub.id))?.state, 'past_due');
        assert.equal(await tx.subscriptions.findById(site.id, sub.id + 1_000), undefined);
        const second = await tx.subscriptions.insert(subscriptionFixture(customer, product));
        assert.deepEqual(await tx.subscriptions.findById(site.id, second.id), second);
        await tx.ledger.append([ledgerLineFixture(sub, 500)]);
        assert.equal(
          (await tx.subscriptions.findById(site.id, sub.id))?.version,
          2,
          "the ledger's balance is not its record",
        );
        await tx.siteData.clear(site.id, 'all');
        assert.equal(await tx.subscriptions.findById(site.id, sub.id), undefined, 'cleared with the site data');
      });
    });

    it('lists newest first, filtered by states, product and customer, one page at a time', async () => {
      const { site, family, product, customer } = await seedBillingSite(storage(), 'sub-list');
      const other = await seedBillingSite(storage(), 'sub-list-other');
      const { product2, customer2 } = await storage().transaction(async (tx) => ({
        product2: (await tx.catalog.insertProduct(productFixture(family, 'second'), termsFixture())).product,
        customer2: await tx.customers.insert(customerFixture(site.id)),
      }));
      const ids = await storage().transaction(async (tx) => {
        const add = async (c: typeof customer, p: typeof product, state: SubscriptionRecord['state']) =>
          (await tx.subscriptions.insert(subscriptionFixture(c, p, { state }))).id;
        const s1 = await add(customer, product, 'active');
        await tx.subscriptions.insert(subscriptionFixture(other.customer, other.product));
        const s2 = await add(customer2, product, 'past_due');
        const s3 = await add(customer, product2, 'cancelled');
        const s4 = await add(customer2, product2, 'active');
        const s5 = await add(customer, product, 'trialing');
        return { s1, s2, s3, s4, s5 };
      });
      const list = async (filter: SubscriptionFilter, page = 1, perPage = 50) =>
        (await storage().transaction((tx) => tx.subscriptions.list(site.id, filter, { page, perPage }))).map(
          (s) => s.id,
        );
      const { s1, s2, s3, s4, s5 } = ids;
      assert.deepEqual(await list({}), [s5, s4, s3, s2, s1], "newest first, only the site's own");
      assert.deepEqual(await list({ states: ['active', 'past_due'] }), [s4, s2, s1]);
      assert.deepEqual(await list({ states: ['expired'] }), []);
      assert.deepEqual(await list({ productId: product2.id }), [s4, s3]);
      assert.deepEqual(await list({ customerId: customer.id }), [s5, s3, s1]);
      assert.deepEqual(await list({ customerId: customer2.id, productId: product.id }), [s2]);
      assert.deepEqual(await list({ customerId: customer.id, states: ['active', 'trialing'] }), [s5, s1]);
      assert.deepEqual(await list({}, 1, 2), [s5, s4]);
      assert.deepEqual(await list({}, 2, 2), [s3, s2]);
      assert.deepEqual(await list({}, 3, 2), [s1]);
      assert.deepEqual(await list({}, 4, 2), []);
      assert.deepEqual(await list({ customerId: customer.id }, 2, 2), [s1], 'pages count filtered rows');
    });

    it("counts a customer's subscriptions", async () => {
      const { site, product, customer } = await seedBillingSite(storage(), 'sub-count');
      const other = await seedBillingSite(storage(), 'sub-count-other');
      const customer2 = await storage().transaction((tx) => tx.customers.insert(customerFixture(site.id)));
      await storage().transaction(async (tx) => {
        await tx.subscriptions.insert(subscriptionFixture(customer, product));
        await tx.subscriptions.insert(subscriptionFixture(customer, product, { state: 'cancelled' }));
        await tx.subscriptions.insert(subscriptionFixture(other.customer, other.product));
      });
      await storage().transaction(async (tx) => {
        assert.equal(await tx.subscriptions.countForCustomer(site.id, customer.id), 2, 'every state counts');
        assert.equal(await tx.subscriptions.countForCustomer(site.id, customer2.id), 0);
        assert.equal(await tx.subscriptions.countForCustomer(other.site.id, customer.id), 0);
        assert.equal(await tx.subscriptions.countForCustomer(other.site.id, other.customer.id), 1);
      });
    });

    it('stores a reference, finds by it exactly, and keeps it unique per site (null never collides)', async () => {
      const { site, product, customer } = await seedBillingSite(storage(), 'sub-ref');
      const other = await seedBillingSite(storage(), 'sub-ref-other');
      const first = await storage().transaction((tx) =>
        tx.subscriptions.insert(subscriptionFixture(customer, product, { reference: 'acct-1' })),
      );
      assert.equal(first.reference, 'acct-1');
      // Many without a reference: the partial index must not treat their nulls as equal.
      const plain = await storage().transaction(async (tx) => [
        await tx.subscriptions.insert(subscriptionFixture(customer, product)),
        await tx.subscriptions.insert(subscriptionFixture(customer, product, { reference: null })),
      ]);
      assert.deepEqual(
        plain.map((p) => p.reference),
        [null, null],
      );
      await assert.rejects(
        storage().transaction((tx) =>
          tx.subscriptions.insert(subscriptionFixture(customer, product, { reference: 'acct-1' })),
        ),
        isConflict,
      );
      // Another site may use the same reference.
      const elsewhere = await storage().transaction((tx) =>
        tx.subscriptions.insert(subscriptionFixture(other.customer, other.product, { reference: 'acct-1' })),
      );
      await storage().transaction(async (tx) => {
        assert.equal((await tx.subscriptions.findByReference(site.id, 'acct-1'))?.id, first.id);
        assert.equal((await tx.subscriptions.findByReference(other.site.id, 'acct-1'))?.id, elsewhere.id);
        assert.equal(await tx.subscriptions.findByReference(site.id, 'ACCT-1'), undefined, 'exact match');
        assert.equal(await tx.subscriptions.findByReference(site.id, 'acct-2'), undefined);
      });
      // An update to a taken reference is a conflict and leaves the transaction usable (Postgres).
      await storage().transaction(async (tx) => {
        await assert.rejects(
          tx.subscriptions.updateAtVersion(site.id, plain[0]!.id, plain[0]!.version, { reference: 'acct-1' }),
          isConflict,
        );
        const moved = await tx.subscriptions.updateAtVersion(site.id, plain[0]!.id, plain[0]!.version, {
          reference: 'acct-2',
        });
        assert.equal(moved?.reference, 'acct-2');
      });
      // Clearing a reference frees it.
      const cleared = await storage().transaction((tx) =>
        tx.subscriptions.updateAtVersion(site.id, first.id, first.version, { reference: null }),
      );
      assert.equal(cleared?.reference, null);
      const reused = await storage().transaction((tx) =>
        tx.subscriptions.updateAtVersion(site.id, plain[1]!.id, plain[1]!.version, { reference: 'acct-1' }),
      );
      assert.equal(reused?.reference, 'acct-1');
      assert.equal(
        (await storage().transaction((tx) => tx.subscriptions.findByReference(site.id, 'acct-1')))?.id,
        plain[1]!.id,
      );
    });

    it('keeps subscriptions to their site and hands out copies', async () => {
      const { site, product, customer } = await seedBillingSite(storage(), 'sub-ten');
      const other = await seedBillingSite(storage(), 'sub-ten-other');
      const sub = await storage().transaction((tx) =>
        tx.subscriptions.insert(subscriptionFixture(customer, product, { couponCodes: ['A'], data: { n: { v: 1 } } })),
      );
      await storage().transaction(async (tx) => {
        assert.equal(await tx.subscriptions.findById(other.site.id, sub.id), undefined);
        assert.deepEqual(await tx.subscriptions.list(other.site.id, {}, { page: 1, perPage: 10 }), []);
        assert.deepEqual(
          await tx.subscriptions.list(other.site.id, { customerId: customer.id }, { page: 1, perPage: 10 }),
          [],
        );
      });
      (sub.couponCodes as string[]).push('B');
      const read = await storage().transaction((tx) => tx.subscriptions.findById(site.id, sub.id));
      assert.ok(read);
      (read.data as { n: { v: number } }).n.v = 2;
      read.currentPeriodEndsAt.setTime(0);
      const again = await storage().transaction((tx) => tx.subscriptions.findById(site.id, sub.id));
      assert.deepEqual(again?.couponCodes, ['A']);
      assert.deepEqual(again?.data, { n: { v: 1 } });
      assert.equal(again?.currentPeriodEndsAt.getTime(), at(T0, 30 * DAY + 2).getTime());
    });
  });
}
