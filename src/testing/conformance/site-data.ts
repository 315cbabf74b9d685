import assert from 'node:assert/strict';
import type {
  ApiKeyRecord,
  CustomerRecord,
  DirectCredentialRecord,
  DueWorkRecord,
  NewDueWork,
  OutboxEventRecord,
  PaymentAttemptRecord,
  PaymentProfileRecord,
  Storage,
  StorageTransaction,
  SubscriptionRecord,
  TransactionRecord,
} from 'billing-engine';
import {
  type BillingSeed,
  customerFixture,
  DAY,
  ledgerLineFixture,
  paymentAttemptFixture,
  paymentProfileFixture,
  seedBillingSite,
  subscriptionFixture,
} from './billing-fixtures.js';
import { at, type SectionContext, T0 } from './harness.js';

class Abort extends Error {}

/** Far enough ahead that every fixture attempt was created before it. */
const FAR_FUTURE = at(T0, 10 * 365 * DAY);

/** Everything {@link populate} created for one site. */
interface Populated {
  readonly seed: BillingSeed;
  readonly customers: readonly CustomerRecord[];
  readonly profile: PaymentProfileRecord;
  readonly subscriptions: readonly SubscriptionRecord[];
  readonly lines: readonly TransactionRecord[];
  readonly attempt: PaymentAttemptRecord;
  readonly event: OutboxEventRecord;
  /** Due work about subscriptions and payments, which a clear removes. */
  readonly work: readonly DueWorkRecord[];
  readonly apiKey: ApiKeyRecord;
  readonly direct: DirectCredentialRecord;
}

/**
 * Commits a site holding one record of every kind a clear touches or keeps: 2 customers (one with
 * a reference), a payment profile, 3 subscriptions, 4 ledger lines, a payment attempt, an outbox
 * event, due work, an API key and a direct credential.
 */
async function populate(storage: Storage, subdomain: string): Promise<Populated> {
  const seed = await seedBillingSite(storage, subdomain);
  return storage.transaction(async (tx) => {
    const site = seed.site;
    const c1 = await tx.customers.updateAtVersion(site.id, seed.customer.id, 1, { reference: 'ref-1' });
    assert.ok(c1);
    const c2 = await tx.customers.insert(customerFixture(site.id, { firstName: 'Grace' }));
    const profile = await tx.customers.insertPaymentProfile(paymentProfileFixture(c1));
    const subs = [
      await tx.subscriptions.insert(subscriptionFixture(c1, seed.product, { paymentProfileId: profile.id })),
      await tx.subscriptions.insert(subscriptionFixture(c2, seed.product)),
      await tx.subscriptions.insert(subscriptionFixture(c1, seed.product, { state: 'cancelled' })),
    ] as const;
    const lines = await tx.ledger.append([
      ledgerLineFixture(subs[0], 1000),
      ledgerLineFixture(subs[0], -200),
      ledgerLineFixture(subs[1], 500),
      ledgerLineFixture(subs[2], 70),
    ]);
    const attempt = await tx.payments.insert(
      paymentAttemptFixture(site.id, `renewal:${subs[0].id}:1`, { subscriptionId: subs[0].id, customerId: c1.id }),
    );
    const [event] = await tx.outbox.append([
      {
        siteId: site.id,
        key: 'signup_success',
        subjectType: 'subscription',
        subjectId: subs[0].id,
        payload: {},
        occurredAt: T0,
      },
    ]);
    const work = await scheduleAll(tx, [
      {
        siteId: site.id,
        kind: 'renewal',
        subjectId: subs[0].id,
        dueAt: at(T0, 1),
        uniqueKey: `renewal:${subs[0].id}:1`,
      },
      {
        siteId: site.id,
        kind: 'expiration',
        subjectId: subs[1].id,
        dueAt: at(T0, 2),
        uniqueKey: `expiration:${subs[1].id}`,
      },
      {
        siteId: site.id,
        kind: 'reconcile_payment',
        subjectId: attempt.id,
        dueAt: at(T0, 3),
        uniqueKey: `reconcile:${attempt.id}`,
      },
    ]);
    const apiKey = await tx.credentials.insertApiKey({
      siteId: site.id,
      name: 'default',
      prefix: `bk_${subdomain}`,
      secretHash: 'e'.repeat(64),
      createdAt: T0,
      revokedAt: null,
    });
    const direct = await tx.credentials.insertDirect({
      siteId: site.id,
      apiId: `api-${subdomain}`,
      apiSecret: 'secret',
      apiPasswordHash: 'd'.repeat(64),
      defaultRedirectUri: null,
      createdAt: T0,
      revokedAt: null,
    });
    assert.ok(event);
    return { seed, customers: [c1, c2], profile, subscriptions: subs, lines, attempt, event, work, apiKey, direct };
  });
}

/** Schedules each row, insisting it is new. */
async function scheduleAll(tx: StorageTransaction, rows: readonly NewDueWork[]): Promise<DueWorkRecord[]> {
  const out: DueWorkRecord[] = [];
  for (const row of rows) {
    const scheduled = await tx.dueWork.schedule(row);
    assert.ok(scheduled, `scheduled ${row.uniqueKey}`);
    out.push(scheduled);
  }
  return out;
}

/** Asserts that every customer record of `data` is gone, through each repository's own finder. */
async function assertCustomerDataGone(tx: StorageTransaction, data: Populated): Promise<void> {
  const siteId = data.seed.site.id;
  assert.deepEqual(await tx.siteData.counts(siteId), { customers: 0, subscriptions: 0, transactions: 0 });
  for (const customer of data.customers) {
    assert.equal(await tx.customers.findById(siteId, customer.id), undefined);
    assert.equal(await tx.subscriptions.countForCustomer(siteId, customer.id), 0);
  }
  assert.equal(await tx.customers.findByReference(siteId, 'ref-1'), undefined);
  assert.deepEqual(await tx.customers.list(siteId, { page: 1, perPage: 10 }), []);
  assert.equal(await tx.customers.findPaymentProfile(siteId, data.profile.id), undefined);
  for (const sub of data.subscriptions) {
    assert.equal(await tx.subscriptions.findById(siteId, sub.id), undefined);
    assert.deepEqual(await tx.ledger.listForSubscription(siteId, sub.id), []);
    assert.equal(await tx.ledger.balance(siteId, sub.id), 0, 'a cleared subscription has no balance left');
  }
  assert.deepEqual(await tx.subscriptions.list(siteId, {}, { page: 1, perPage: 10 }), []);
  for (const line of data.lines) assert.equal(await tx.ledger.findById(siteId, line.id), undefined);
  assert.equal(await tx.payments.findByKey(siteId, data.attempt.idempotencyKey), undefined);
  const unresolved = await tx.payments.listUnresolved(FAR_FUTURE, 100);
  assert.equal(
    unresolved.some((p) => p.siteId === siteId),
    false,
  );
  assert.deepEqual(await tx.outbox.listAfter(siteId, 0, 10), []);
  assert.equal(await tx.outbox.findById(siteId, data.event.id), undefined);
  for (const row of data.work) {
    assert.equal(await tx.dueWork.findByKey(siteId, row.uniqueKey), undefined, `${row.kind} work is removed`);
  }
}

/** Asserts that the site itself, its credentials and its catalog are as `data` left them. */
async function assertSiteKept(tx: StorageTransaction, data: Populated): Promise<void> {
  const { site, family, product } = data.seed;
  assert.deepEqual(await tx.sites.findById(site.id), site);
  assert.deepEqual(await tx.credentials.activeApiKeys(site.id), [data.apiKey]);
  assert.deepEqual(await tx.credentials.activeDirect(site.id), [data.direct]);
  assert.deepEqual(await tx.catalog.findFamily(site.id, family.id), family);
  assert.deepEqual(await tx.catalog.findProduct(site.id, product.id), product);
  assert.notEqual(await tx.catalog.findProductVersion(site.id, product.id, 1), undefined);
}

/** Asserts that every record of `data` is still stored unchanged. */
async function assertAllKept(tx: StorageTransaction, data: Populated): Promise<void> {
  const siteId = data.seed.site.id;
  await assertSiteKept(tx, data);
  assert.deepEqual(await tx.siteData.counts(siteId), { customers: 2, subscriptions: 3, transactions: 4 });
  for (const customer of data.customers) assert.deepEqual(await tx.customers.findById(siteId, customer.id), customer);
  assert.deepEqual(await tx.customers.findPaymentProfile(siteId, data.profile.id), data.profile);
  for (const sub of data.subscriptions) assert.deepEqual(await tx.subscriptions.findById(siteId, sub.id), sub);
  for (const line of data.lines) assert.deepEqual(await tx.ledger.findById(siteId, line.id), line);
  assert.equal(await tx.ledger.balance(siteId, data.subscriptions[0]!.id), 800);
  assert.deepEqual(await tx.payments.findByKey(siteId, data.attempt.idempotencyKey), data.attempt);
  assert.deepEqual(await tx.outbox.listAfter(siteId, 0, 10), [data.event]);
  for (const row of data.work) assert.deepEqual(await tx.dueWork.findByKey(siteId, row.uniqueKey), row);
}

/** Cases for whole-site data operations: counts and clears. */
export function siteDataCases({ api, storage }: SectionContext): void {
  const { describe, it } = api;
  describe('site data', () => {
    it('counts customers, subscriptions and ledger lines per site', async () => {
      const a = await seedBillingSite(storage(), 'sd-count-a');
      const b = await seedBillingSite(storage(), 'sd-count-b');
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.siteData.counts(a.site.id), { customers: 1, subscriptions: 0, transactions: 0 });
        const c2 = await tx.customers.insert(customerFixture(a.site.id));
        const s1 = await tx.subscriptions.insert(subscriptionFixture(a.customer, a.product));
        const s2 = await tx.subscriptions.insert(subscriptionFixture(c2, a.product));
        const s3 = await tx.subscriptions.insert(subscriptionFixture(c2, a.product));
        await tx.ledger.append([ledgerLineFixture(s1, 1), ledgerLineFixture(s2, 2), ledgerLineFixture(s2, 3)]);
        await tx.ledger.append([ledgerLineFixture(s3, 4)]);
        const sb = await tx.subscriptions.insert(subscriptionFixture(b.customer, b.product));
        await tx.ledger.append([ledgerLineFixture(sb, 5)]);
      });
      await storage().transaction(async (tx) => {
        assert.deepEqual(await tx.siteData.counts(a.site.id), { customers: 2, subscriptions: 3, transactions: 4 });
        assert.deepEqual(await tx.siteData.counts(b.site.id), { customers: 1, subscriptions: 1, transactions: 1 });
      });
    });

    it("clears all of a site's customer data but keeps the site, its credentials and its catalog, and other sites", async () => {
      const a = await populate(storage(), 'sd-clear-a');
      const b = await populate(storage(), 'sd-clear-b');
      await storage().transaction((tx) => tx.siteData.clear(a.seed.site.id, 'all'));
      await storage().transaction(async (tx) => {
        await assertCustomerDataGone(tx, a);
        await assertSiteKept(tx, a);
        await assertAllKept(tx, b);
      });
    });

    it('starts fresh after a clear: balances at 0, references and payment keys free again', async () => {
      const a = await populate(storage(), 'sd-fresh');
      const siteId = a.seed.site.id;
      await storage().transaction((tx) => tx.siteData.clear(siteId, 'all'));
      const { customer, sub, line, attempt } = await storage().transaction(async (tx) => {
        const created = await tx.customers.insert(customerFixture(siteId, { reference: 'ref-1' }));
        const subscription = await tx.subscriptions.insert(subscriptionFixture(created, a.seed.product));
        const [appended] = await tx.ledger.append([ledgerLineFixture(subscription, 700)]);
        const payment = await tx.payments.insert(paymentAttemptFixture(siteId, a.attempt.idempotencyKey));
        return { customer: created, sub: subscription, line: appended, attempt: payment };
      });
      assert.equal(customer.reference, 'ref-1');
      assert.equal(line?.startingBalanceInCents, 0, 'the first line after a clear starts at 0');
      assert.equal(line?.endingBalanceInCents, 700);
      assert.equal(attempt.idempotencyKey, a.attempt.idempotencyKey);
      await storage().transaction(async (tx) => {
        assert.equal(await tx.ledger.balance(siteId, sub.id), 700);
        assert.deepEqual(await tx.siteData.counts(siteId), { customers: 1, subscriptions: 1, transactions: 1 });
      });
    });

    it('clears customer data with scope customers too, keeping the catalog', async () => {
      const a = await populate(storage(), 'sd-scope');
      await storage().transaction((tx) => tx.siteData.clear(a.seed.site.id, 'customers'));
      await storage().transaction(async (tx) => {
        await assertCustomerDataGone(tx, a);
        await assertSiteKept(tx, a);
      });
    });

    it('leaves everything, balances included, when the clearing transaction rolls back', async () => {
      const a = await populate(storage(), 'sd-roll');
      const siteId = a.seed.site.id;
      const abort = new Abort('abort');
      await assert.rejects(
        storage().transaction(async (tx) => {
          await tx.siteData.clear(siteId, 'all');
          assert.deepEqual(await tx.siteData.counts(siteId), { customers: 0, subscriptions: 0, transactions: 0 });
          throw abort;
        }),
        (error: unknown) => error === abort,
      );
      await storage().transaction((tx) => assertAllKept(tx, a));
      const [next] = await storage().transaction((tx) => tx.ledger.append([ledgerLineFixture(a.subscriptions[0]!, 5)]));
      assert.equal(next?.startingBalanceInCents, 800, 'the next line chains from the balance the clear did not remove');
    });
  });
}
