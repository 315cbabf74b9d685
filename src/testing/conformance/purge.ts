import assert from 'node:assert/strict';
import type {
  CustomerRecord,
  MetafieldRecord,
  PaymentProfileRecord,
  Storage,
  StorageTransaction,
  SubscriptionRecord,
} from 'billing-engine';
import {
  type BillingSeed,
  customerFixture,
  ledgerLineFixture,
  paymentAttemptFixture,
  paymentProfileFixture,
  seedBillingSite,
  subscriptionFixture,
  termsFixture,
} from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

function fieldFixture(siteId: number, resourceType: 'customer' | 'subscription'): Omit<MetafieldRecord, 'id'> {
  return {
    siteId,
    resourceType,
    name: `${resourceType}-color`,
    inputType: 'text',
    enumValues: null,
    scope: { hosted: [], csv: false, invoices: false, statements: false, portal: false },
    createdAt: T0,
    updatedAt: T0,
  };
}

/** The records of one subscription that a purge removes, and how many of each were written. */
interface Owned {
  readonly subscription: SubscriptionRecord;
  readonly customer: CustomerRecord;
  readonly profile: PaymentProfileRecord;
  /** Idempotency keys of its payment attempts. */
  readonly attemptKeys: readonly string[];
  /** Unique keys of its due work. */
  readonly workKeys: readonly string[];
  readonly eventIds: readonly number[];
  readonly lineIds: readonly number[];
}

/**
 * Writes, for `customer`, a subscription with a payment profile and a row in most tables a purge
 * clears: 2 ledger lines, 2 payment attempts (one made for it, one a signup's attempt that names
 * only the line it paid), a note, a component row, a custom field value, 2 events (about the
 * subscription and about its attempt) and 2 due-work rows (its renewal and its attempt's
 * reconciliation).
 */
async function writeOwned(
  tx: StorageTransaction,
  seed: BillingSeed,
  customer: CustomerRecord,
  fields: { subscription: MetafieldRecord },
  tag: string,
): Promise<Owned> {
  const siteId = seed.site.id;
  const profile = await tx.customers.insertPaymentProfile(paymentProfileFixture(customer));
  const subscription = await tx.subscriptions.insert(
    subscriptionFixture(customer, seed.product, { paymentProfileId: profile.id }),
  );
  const lines = await tx.ledger.append([ledgerLineFixture(subscription, 1000), ledgerLineFixture(subscription, -1000)]);
  const made = await tx.payments.insert(
    paymentAttemptFixture(siteId, `renewal:${tag}`, {
      subscriptionId: subscription.id,
      customerId: customer.id,
      status: 'succeeded',
    }),
  );
  const signup = await tx.payments.insert(
    paymentAttemptFixture(siteId, `signup:${tag}`, { status: 'succeeded', transactionId: lines[1]!.id }),
  );
  await tx.notes.insert({
    siteId,
    subscriptionId: subscription.id,
    body: `note ${tag}`,
    sticky: false,
    createdAt: T0,
    updatedAt: T0,
  });
  await tx.metafields.setValue({
    siteId,
    resourceType: 'subscription',
    resourceId: subscription.id,
    metafieldId: fields.subscription.id,
    name: fields.subscription.name,
    value: tag,
    updatedAt: T0,
    now: T0,
  });
  const events = await tx.outbox.append([
    {
      siteId,
      key: 'signup_success',
      subjectType: 'subscription',
      subjectId: subscription.id,
      payload: {},
      occurredAt: T0,
    },
    {
      siteId,
      key: 'payment_success',
      subjectType: 'payment_attempt',
      subjectId: made.id,
      payload: {},
      occurredAt: T0,
    },
  ]);
  const work = [
    { kind: 'renewal' as const, subjectId: subscription.id, uniqueKey: `renewal:${tag}` },
    { kind: 'reconcile_payment' as const, subjectId: signup.id, uniqueKey: `reconcile:${tag}` },
  ];
  for (const row of work) {
    const scheduled = await tx.dueWork.schedule({ siteId, dueAt: at(T0, 1000), ...row });
    assert.ok(scheduled, `scheduled ${row.uniqueKey}`);
  }
  return {
    subscription,
    customer,
    profile,
    attemptKeys: [made.idempotencyKey, signup.idempotencyKey],
    workKeys: work.map((w) => w.uniqueKey),
    eventIds: events.map((e) => e.id),
    lineIds: lines.map((l) => l.id),
  };
}

/** A seeded site with two subscriptions of its customer (`a`, `b`) and one of a second customer (`c`). */
async function populate(storage: Storage, subdomain: string) {
  const seed = await seedBillingSite(storage, subdomain);
  return storage.transaction(async (tx) => {
    const fields = { subscription: await tx.metafields.insertField(fieldFixture(seed.site.id, 'subscription')) };
    const customerField = await tx.metafields.insertField(fieldFixture(seed.site.id, 'customer'));
    const second = await tx.customers.insert(customerFixture(seed.site.id, { firstName: 'Grace' }));
    await tx.metafields.setValue({
      siteId: seed.site.id,
      resourceType: 'customer',
      resourceId: second.id,
      metafieldId: customerField.id,
      name: customerField.name,
      value: 'gold',
      updatedAt: T0,
      now: T0,
    });
    // A subscription-less attempt of the second customer (a signup that failed).
    await tx.payments.insert(
      paymentAttemptFixture(seed.site.id, `${subdomain}:failed-signup`, { customerId: second.id, status: 'declined' }),
    );
    return {
      seed,
      a: await writeOwned(tx, seed, seed.customer, fields, `${subdomain}-a`),
      b: await writeOwned(tx, seed, seed.customer, fields, `${subdomain}-b`),
      c: await writeOwned(tx, seed, second, fields, `${subdomain}-c`),
    };
  });
}

/** Asserts that every record of `owned` is gone. */
async function assertGone(tx: StorageTransaction, siteId: number, owned: Owned): Promise<void> {
  const id = owned.subscription.id;
  assert.equal(await tx.subscriptions.findById(siteId, id), undefined);
  assert.deepEqual(await tx.ledger.listForSubscription(siteId, id), []);
  assert.equal(await tx.ledger.balance(siteId, id), 0, 'a purged subscription has no balance left');
  for (const lineId of owned.lineIds) assert.equal(await tx.ledger.findById(siteId, lineId), undefined);
  for (const key of owned.attemptKeys) assert.equal(await tx.payments.findByKey(siteId, key), undefined, key);
  for (const key of owned.workKeys) assert.equal(await tx.dueWork.findByKey(siteId, key), undefined, key);
  for (const eventId of owned.eventIds) assert.equal(await tx.outbox.findById(siteId, eventId), undefined);
  assert.deepEqual(await tx.notes.listForSubscription(siteId, id), []);
  assert.deepEqual(await tx.metafields.listValues(siteId, 'subscription', id), []);
}

/** Asserts that every record of `owned` is still there. */
async function assertKept(tx: StorageTransaction, siteId: number, owned: Owned): Promise<void> {
  const id = owned.subscription.id;
  assert.deepEqual(await tx.subscriptions.findById(siteId, id), owned.subscription);
  assert.deepEqual(
    (await tx.ledger.listForSubscription(siteId, id)).map((l) => l.id),
    owned.lineIds,
  );
  for (const key of owned.attemptKeys) assert.notEqual(await tx.payments.findByKey(siteId, key), undefined, key);
  for (const key of owned.workKeys) assert.notEqual(await tx.dueWork.findByKey(siteId, key), undefined, key);
  for (const eventId of owned.eventIds) assert.notEqual(await tx.outbox.findById(siteId, eventId), undefined);
  assert.equal((await tx.notes.listForSubscription(siteId, id)).length, 1);
  assert.equal((await tx.metafields.listValues(siteId, 'subscription', id)).length, 1);
  assert.deepEqual(await tx.customers.findPaymentProfile(siteId, owned.profile.id), owned.profile);
}

const NOTHING_ELSE = {
  subscriptionComponents: 0,
  allocations: 0,
  usages: 0,
  invoices: 0,
  creditNotes: 0,
  invoiceEvents: 0,
  accountEntries: 0,
  webhooks: 0,
  customPricePoints: 0,
};

/** Cases for the purge repository. */
export function purgeCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('purge', () => {
    it("removes one subscription's rows from every table, and no other subscription's or site's", async () => {
      const one = await populate(storage(), 'pg-one');
      const other = await populate(storage(), 'pg-other');
      const siteId = one.seed.site.id;
      const summary = await storage().transaction((tx) =>
        tx.purge.purgeSubscription(siteId, one.a.subscription.id, { customer: false, paymentProfiles: false }),
      );
      assert.deepEqual(summary, {
        ...NOTHING_ELSE,
        subscriptions: 1,
        ledgerLines: 2,
        paymentAttempts: 2,
        notes: 1,
        metadata: 1,
        dueWork: 2,
        events: 2,
        paymentProfiles: 0,
        customerRemoved: false,
      });
      await storage().transaction(async (tx) => {
        await assertGone(tx, siteId, one.a);
        await assertKept(tx, siteId, one.b);
        await assertKept(tx, siteId, one.c);
        // The customer and the profile the purged subscription paid with stay without a cascade.
        assert.notEqual(await tx.customers.findById(siteId, one.seed.customer.id), undefined);
        assert.deepEqual(await tx.customers.findPaymentProfile(siteId, one.a.profile.id), one.a.profile);
        for (const owned of [other.a, other.b, other.c]) await assertKept(tx, other.seed.site.id, owned);
      });
    });

    it('with the customer option removes a customer of no other subscription, its profiles, values and attempts', async () => {
      const data = await populate(storage(), 'pg-customer');
      const siteId = data.seed.site.id;
      const customerId = data.c.customer.id;
      const summary = await storage().transaction((tx) =>
        tx.purge.purgeSubscription(siteId, data.c.subscription.id, { customer: true, paymentProfiles: false }),
      );
      assert.equal(summary?.customerRemoved, true);
      assert.equal(summary?.paymentProfiles, 1);
      // The subscription's value and the customer's.
      assert.equal(summary?.metadata, 2);
      // Its 2, and the customer's failed signup attempt.
      assert.equal(summary?.paymentAttempts, 3);
      await storage().transaction(async (tx) => {
        await assertGone(tx, siteId, data.c);
        assert.equal(await tx.customers.findById(siteId, customerId), undefined);
        assert.equal(await tx.customers.findPaymentProfile(siteId, data.c.profile.id), undefined);
        assert.deepEqual(await tx.metafields.listValues(siteId, 'customer', customerId), []);
        assert.equal(await tx.payments.findByKey(siteId, 'pg-customer:failed-signup'), undefined);
        await assertKept(tx, siteId, data.a);
        await assertKept(tx, siteId, data.b);
      });
    });

    it('keeps a customer that has another subscription, and a profile another subscription pays with', async () => {
      const data = await populate(storage(), 'pg-shared');
      const siteId = data.seed.site.id;
      // b pays with a's profile too, so that profile is in use after a is purged.
      const b = await storage().transaction((tx) =>
        tx.subscriptions.updateAtVersion(siteId, data.b.subscription.id, data.b.subscription.version, {
          paymentProfileId: data.a.profile.id,
        }),
      );
      assert.ok(b);
      const summary = await storage().transaction((tx) =>
        tx.purge.purgeSubscription(siteId, data.a.subscription.id, { customer: true, paymentProfiles: true }),
      );
      assert.equal(summary?.customerRemoved, false);
      // b's own profile is no longer used by any subscription, so it goes; a's is b's now and stays.
      assert.equal(summary?.paymentProfiles, 1);
      await storage().transaction(async (tx) => {
        await assertGone(tx, siteId, data.a);
        assert.notEqual(await tx.customers.findById(siteId, data.seed.customer.id), undefined);
        assert.deepEqual(await tx.customers.findPaymentProfile(siteId, data.a.profile.id), data.a.profile);
        assert.equal(await tx.customers.findPaymentProfile(siteId, data.b.profile.id), undefined);
        assert.deepEqual(await tx.subscriptions.findById(siteId, b.id), b);
      });
    });

    it('removes its custom price points with their terms, its replenishment checks and mail jobs, and only those', async () => {
      const data = await populate(storage(), 'pg-private');
      const siteId = data.seed.site.id;
      const [a, b] = [data.a.subscription, data.b.subscription];
      const written = await storage().transaction(async (tx) => {
        /** A custom price point of `owner` (its terms a new product version). */
        const custom = (owner: SubscriptionRecord, handle: string) =>
          tx.pricePoints.insertCustomProductPricePoint(
            {
              siteId,
              productId: data.seed.product.id,
              name: 'Custom',
              handle,
              archivedAt: null,
              createdAt: T0,
              updatedAt: T0,
              subscriptionId: owner.id,
            },
            termsFixture({ priceInCents: 777 }),
          );
        const ofA = await custom(a, 'custom-a');
        const movedOff = await custom(a, 'custom-a-old');
        const ofB = await custom(b, 'custom-b');
        // a is on its custom price point, as a signup with `custom_price` leaves it.
        const onCustom = await tx.subscriptions.updateAtVersion(siteId, a.id, a.version, {
          productVersion: ofA.version.version,
        });
        assert.ok(onCustom);
        const work = [
          // Prepaid replenishment checks (subject 0, the subscription in the key).
          { kind: 'reconcile_payment' as const, subjectId: 0, uniqueKey: `prepaid_replenishment:${a.id}:line:1` },
          { kind: 'reconcile_payment' as const, subjectId: 0, uniqueKey: `prepaid_replenishment:${b.id}:line:1` },
          // Mail jobs: a's payment update request; an invoice mail and a portal invitation whose
          // subject ids equal a's id but are an invoice's and a customer's (kept).
          { kind: 'mail_delivery' as const, subjectId: a.id, uniqueKey: `mail:payment_update_request:${a.id}:1` },
          { kind: 'mail_delivery' as const, subjectId: b.id, uniqueKey: `mail:payment_update_request:${b.id}:1` },
          { kind: 'mail_delivery' as const, subjectId: a.id, uniqueKey: `mail:invoice:${a.id}:1` },
          { kind: 'mail_delivery' as const, subjectId: a.id, uniqueKey: `mail:portal_invitation:${a.id}:1` },
        ];
        for (const row of work) {
          const scheduled = await tx.dueWork.schedule({ siteId, dueAt: at(T0, 1000), payload: {}, ...row });
          assert.ok(scheduled, row.uniqueKey);
        }
        return { ofA, movedOff, ofB, keys: work.map((w) => w.uniqueKey) };
      });
      const summary = await storage().transaction((tx) =>
        tx.purge.purgeSubscription(siteId, a.id, { customer: false, paymentProfiles: false }),
      );
      assert.equal(summary?.customPricePoints, 2);
      // Its renewal and its attempt's reconciliation (as in every case), its replenishment check and its mail.
      assert.equal(summary?.dueWork, 4);
      await storage().transaction(async (tx) => {
        for (const gone of [written.ofA, written.movedOff]) {
          assert.equal(await tx.pricePoints.findProductPricePoint(siteId, gone.pricePoint.id), undefined);
          assert.equal(
            await tx.catalog.findProductVersion(siteId, data.seed.product.id, gone.version.version),
            undefined,
          );
        }
        assert.deepEqual(await tx.pricePoints.findProductPricePoint(siteId, written.ofB.pricePoint.id), {
          ...written.ofB.pricePoint,
        });
        assert.notEqual(
          await tx.catalog.findProductVersion(siteId, data.seed.product.id, written.ofB.version.version),
          undefined,
        );
        const [ownCheck, otherCheck, ownMail, otherMail, invoiceMail, invitation] = written.keys;
        for (const key of [ownCheck!, ownMail!]) assert.equal(await tx.dueWork.findByKey(siteId, key), undefined, key);
        for (const key of [otherCheck!, otherMail!, invoiceMail!, invitation!])
          assert.notEqual(await tx.dueWork.findByKey(siteId, key), undefined, key);
        await assertKept(tx, siteId, data.b);
      });
    });

    it('a purge within a transaction is seen by the reads after it', async () => {
      const data = await populate(storage(), 'pg-in-tx');
      const siteId = data.seed.site.id;
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.customers.findPaymentProfile(siteId, data.a.profile.id), data.a.profile);
        await tx.purge.purgeSubscription(siteId, data.a.subscription.id, { customer: false, paymentProfiles: true });
        assert.equal(await tx.customers.findPaymentProfile(siteId, data.a.profile.id), undefined);
      });
    });

    it('lists the open payment attempts a purge would remove', async () => {
      const data = await populate(storage(), 'pg-open');
      const siteId = data.seed.site.id;
      const sub = data.a.subscription;
      await storage().transaction(async (tx) => {
        await tx.payments.insert(paymentAttemptFixture(siteId, 'open:pending', { subscriptionId: sub.id }));
        await tx.payments.insert(
          paymentAttemptFixture(siteId, 'open:unknown', { subscriptionId: sub.id, status: 'unknown' }),
        );
        await tx.payments.insert(
          paymentAttemptFixture(siteId, 'open:customer', { customerId: sub.customerId, status: 'pending' }),
        );
        await tx.payments.insert(
          paymentAttemptFixture(siteId, 'open:other', { subscriptionId: data.b.subscription.id }),
        );
      });
      await storage().transaction(async (tx) => {
        const own = await tx.purge.openPaymentAttempts(siteId, sub.id, null);
        assert.deepEqual(own.map((p) => p.idempotencyKey).sort(), ['open:pending', 'open:unknown']);
        const withCustomer = await tx.purge.openPaymentAttempts(siteId, sub.id, sub.customerId);
        assert.deepEqual(withCustomer.map((p) => p.idempotencyKey).sort(), [
          'open:customer',
          'open:pending',
          'open:unknown',
        ]);
        assert.deepEqual(await tx.purge.openPaymentAttempts(data.seed.site.id + 1000, sub.id, null), []);
      });
    });

    it("answers undefined, removing nothing, for a missing or another site's subscription", async () => {
      const one = await populate(storage(), 'pg-miss-a');
      const two = await populate(storage(), 'pg-miss-b');
      await storage().transaction(async (tx) => {
        const options = { customer: true, paymentProfiles: true };
        assert.equal(await tx.purge.purgeSubscription(one.seed.site.id, 999_999, options), undefined);
        assert.equal(await tx.purge.purgeSubscription(one.seed.site.id, two.a.subscription.id, options), undefined);
      });
      await storage().transaction(async (tx) => {
        for (const owned of [two.a, two.b, two.c]) await assertKept(tx, two.seed.site.id, owned);
      });
    });

    it('leaves everything, balances included, when the purging transaction rolls back', async () => {
      const data = await populate(storage(), 'pg-roll');
      const siteId = data.seed.site.id;
      const abort = new Abort('abort');
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.purge.purgeSubscription(siteId, data.c.subscription.id, { customer: true, paymentProfiles: true });
          await assertGone(tx, siteId, data.c);
          throw abort;
        }),
        (error: unknown) => error === abort,
      );
      await storage().transaction(async (tx) => {
        await assertKept(tx, siteId, data.c);
        assert.equal(await tx.ledger.balance(siteId, data.c.subscription.id), 0);
        assert.notEqual(await tx.customers.findById(siteId, data.c.customer.id), undefined);
      });
      const [next] = await storage().transaction((tx) => tx.ledger.append([ledgerLineFixture(data.c.subscription, 5)]));
      assert.equal(next?.startingBalanceInCents, 0, 'the next line chains from the balance the purge did not remove');
      assert.equal(next?.endingBalanceInCents, 5);
    });
  });
}
