/**
 * Adapter-level cases shared by the SQL adapters, beyond the conformance suite: migrations on an
 * up-to-date database, value codecs at their edges, how driver errors are mapped, and what a lost
 * connection leaves behind. Each dialect's test file supplies a {@link SqlFixture}.
 */
import { BillingError, type NewSite, type Storage } from 'billing-engine';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../adapters/sql/migrations/index.js';
import { invoiceFixture, populateInvoices } from '../../src/testing/conformance/invoices.js';

/** A migrated storage on a database the test can also reach directly. */
export interface SqlFixture {
  readonly storage: Storage;
  /** Another storage on the same database (for reads after `storage` was broken). */
  reopen(): Promise<Storage>;
  /** Runs SQL beside the storage, on the storage's tables (unqualified names). */
  raw(sql: string): Promise<Record<string, unknown>[]>;
  /** Cuts the connection the storage's open transaction runs on; call it inside `work`. */
  killConnection(): Promise<void>;
  /** The number of rows in every table of the storage but `billing_migrations`. */
  tableCounts(): Promise<Record<string, number>>;
  dispose(): Promise<void>;
}

/** How the cases get a fixture of one dialect. */
export interface SqlAdapterContext {
  readonly name: string;
  open(): Promise<SqlFixture>;
}

const T0 = new Date('2026-03-01T10:00:00.123Z');

function site(subdomain: string, overrides: Partial<NewSite> = {}): NewSite {
  return {
    subdomain,
    name: `Site ${subdomain}`,
    currency: 'USD',
    timeZone: 'UTC',
    dateFormat: 'YYYY-MM-DD',
    timeFormat: 'HH:mm',
    mode: 'test',
    sharedKey: 'k',
    settings: {
      periodRule: 'anchor',
      referralsEnabled: false,
      dunning: { retryCount: 3, retryIntervalHours: 24, finalAction: 'canceled' },
      webhooksEnabled: true,
      portal: { allowPlanChange: true, allowCancel: true, allowCardUpdate: true, allowComponentChange: true },
    },
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

function attempt(siteId: number, key: string, amountInCents: number) {
  return {
    siteId,
    subscriptionId: null,
    customerId: null,
    idempotencyKey: key,
    amountInCents,
    currency: 'USD',
    purpose: 'signup',
    status: 'pending' as const,
    gatewayTransactionId: null,
    message: null,
    transactionId: null,
    createdAt: T0,
    updatedAt: T0,
  };
}

function isCode(error: unknown, code: string): boolean {
  return error instanceof BillingError && error.code === code;
}

/** Registers the shared SQL adapter cases. */
export function sqlAdapterCases(context: SqlAdapterContext): void {
  describe(`${context.name} adapter`, () => {
    let fixture: SqlFixture | undefined;
    const open = async () => {
      fixture = await context.open();
      return fixture;
    };
    afterEach(async () => {
      await fixture?.dispose();
      fixture = undefined;
    });

    describe('migrations', () => {
      it('records every migration once, and migrating an up-to-date database changes nothing', async () => {
        const f = await open();
        const before = await f.raw('select id, name from billing_migrations order by id');
        expect(before.map((row) => [Number(row.id), row.name])).toEqual(MIGRATIONS.map((m) => [m.id, m.name]));
        const kept = await f.storage.transaction((tx) => tx.sites.insert(site('kept')));
        await f.storage.migrate();
        await f.storage.migrate();
        const second = await f.reopen();
        try {
          await Promise.all([second.migrate(), f.storage.migrate()]);
          expect(await f.raw('select id, name from billing_migrations order by id')).toEqual(before);
          expect(await second.transaction((tx) => tx.sites.findById(kept.id))).toEqual(kept);
        } finally {
          await second.close();
        }
      });

      it('migration 6 moves the direct-post nonce claims out of idempotency_keys, so a spent nonce stays spent', async () => {
        const f = await open();
        const s = await f.storage.transaction((tx) => tx.sites.insert(site('claims')));
        // The database as migration 5 left it, with a nonce claimed the old way.
        await f.raw('drop table direct_post_claims');
        await f.raw('delete from billing_migrations where id = 6');
        await f.storage.transaction((tx) => tx.idempotency.claim(s.id, 'direct_nonce', 'api|1768478400|n-1', T0, null));
        await f.storage.transaction((tx) => tx.idempotency.claim(s.id, 'uniqueness', 'other', T0, null));
        await f.storage.migrate();
        const claim = (inputHash: string, nonceKey: string) =>
          f.storage.transaction((tx) => tx.directCalls.claimPost({ siteId: s.id, inputHash, nonceKey, at: T0 }));
        expect(await claim('a'.repeat(64), 'api|1768478400|n-1')).toBe(false);
        expect(await claim('a'.repeat(64), 'api|1768478400|n-2')).toBe(true);
        expect(await f.raw("select scope, key from idempotency_keys where scope = 'direct_nonce'")).toEqual([]);
        expect(await f.raw("select key from idempotency_keys where scope = 'uniqueness'")).toEqual([{ key: 'other' }]);
      });
    });

    describe('draft invoices (migration 8)', () => {
      it('keeps the invoices stored before it, and then stores drafts without a number', async () => {
        const f = await open();
        const s = await f.storage.transaction((tx) => tx.sites.insert(site('drafts')));
        const issued = await f.storage.transaction((tx) => tx.invoices.insert(invoiceFixture(s.id, 1)));
        // Run migration 8 again over a table holding an invoice (SQLite rebuilds the table).
        await f.raw('delete from billing_migrations where id = 8');
        await f.storage.migrate();
        expect(await f.storage.transaction((tx) => tx.invoices.findByUid(s.id, issued.uid))).toEqual(issued);
        const draft = { number: null, sequenceNumber: null, status: 'draft' as const };
        const drafts = await f.storage.transaction(async (tx) => [
          await tx.invoices.insert(invoiceFixture(s.id, 0, { ...draft, uid: 'inv_d1' })),
          await tx.invoices.insert(invoiceFixture(s.id, 0, { ...draft, uid: 'inv_d2' })),
        ]);
        expect(drafts.map((d) => d.number)).toEqual([null, null]);
        await expect(
          f.storage.transaction((tx) => tx.invoices.insert(invoiceFixture(s.id, 1, { uid: 'inv_again' }))),
        ).rejects.toSatisfy((error) => isCode(error, 'conflict'));
      });
    });

    describe('codecs', () => {
      it('round-trips money at the safe-integer limits and refuses amounts beyond them', async () => {
        const f = await open();
        const s = await f.storage.transaction((tx) => tx.sites.insert(site('money')));
        const [max, min] = await f.storage.transaction(async (tx) => [
          await tx.payments.insert(attempt(s.id, 'max', Number.MAX_SAFE_INTEGER)),
          await tx.payments.insert(attempt(s.id, 'min', -Number.MAX_SAFE_INTEGER)),
        ]);
        expect(max?.amountInCents).toBe(Number.MAX_SAFE_INTEGER);
        const read = await f.storage.transaction(async (tx) => [
          await tx.payments.findByKey(s.id, 'max'),
          await tx.payments.findByKey(s.id, 'min'),
        ]);
        expect(read).toEqual([max, min]);
        for (const unsafe of [2 ** 53, 0.5, Number.NaN]) {
          await expect(
            f.storage.transaction((tx) => tx.payments.insert(attempt(s.id, `bad-${unsafe}`, unsafe))),
          ).rejects.toSatisfy((error) => isCode(error, 'storage'));
        }
        const rows = await f.raw("select count(*) as n from payment_attempts where idempotency_key like 'bad-%'");
        expect(Number(rows[0]?.n)).toBe(0);
      });

      it('refuses to read an integer beyond 2^53 instead of rounding it', async () => {
        const f = await open();
        const s = await f.storage.transaction((tx) => tx.sites.insert(site('big')));
        await f.storage.transaction((tx) => tx.payments.insert(attempt(s.id, 'big', 1)));
        await f.raw("update payment_attempts set amount_in_cents = 9007199254740993 where idempotency_key = 'big'");
        await expect(f.storage.transaction((tx) => tx.payments.findByKey(s.id, 'big'))).rejects.toSatisfy((error) =>
          isCode(error, 'storage'),
        );
      });

      it('keeps instants to the millisecond, far in the past and the future', async () => {
        const f = await open();
        const instants = [
          new Date(0),
          new Date(-1),
          new Date('1901-12-13T20:45:52.001Z'),
          new Date('2038-01-19T03:14:08.999Z'),
          new Date('9999-12-31T23:59:59.999Z'),
        ];
        for (const [i, instant] of instants.entries()) {
          const created = await f.storage.transaction((tx) =>
            tx.sites.insert(site(`t${i}`, { createdAt: instant, updatedAt: new Date(instant.getTime() + 1) })),
          );
          const read = await f.storage.transaction((tx) => tx.sites.findById(created.id));
          expect(read?.createdAt.getTime()).toBe(instant.getTime());
          expect(read?.updatedAt.getTime()).toBe(instant.getTime() + 1);
        }
        await expect(
          f.storage.transaction((tx) => tx.sites.insert(site('invalid', { createdAt: new Date(Number.NaN) }))),
        ).rejects.toSatisfy((error) => isCode(error, 'storage'));
      });

      it('round-trips JSON documents, booleans and exact decimals', async () => {
        const f = await open();
        const data = {
          text: 'quote " backslash \\ newline \n unicode é 😀',
          numbers: [0, -1, 0.1, 1e21, Number.MAX_SAFE_INTEGER],
          nested: { empty: {}, list: [], none: null, yes: true, no: false },
        };
        const s = await f.storage.transaction((tx) => tx.sites.insert(site('json')));
        const family = await f.storage.transaction((tx) =>
          tx.catalog.insertFamily({
            siteId: s.id,
            name: 'F',
            handle: 'f',
            description: null,
            createdAt: T0,
            updatedAt: T0,
          }),
        );
        const percentages = ['12.5', '0.0125', '100', '33.3333', '0'];
        const coupons = await f.storage.transaction(async (tx) => {
          const out = [];
          for (const [i, percentage] of percentages.entries()) {
            out.push(
              await tx.coupons.insert({
                siteId: s.id,
                familyId: family.id,
                name: `C${i}`,
                code: `C${i}`,
                description: null,
                percentage,
                amountInCents: null,
                recurring: i % 2 === 0,
                durationPeriodCount: null,
                endDate: null,
                allowNegativeBalance: i % 2 === 1,
                stackable: false,
                compoundingStrategy: 'compound',
                conversionLimit: null,
                archivedAt: null,
                createdAt: T0,
                updatedAt: T0,
              }),
            );
          }
          return out;
        });
        const read = await f.storage.transaction(async (tx) =>
          Promise.all(coupons.map((c) => tx.coupons.findById(s.id, c.id))),
        );
        expect(read.map((c) => c?.percentage)).toEqual(percentages);
        expect(read.map((c) => [c?.recurring, c?.allowNegativeBalance, c?.stackable])).toEqual(
          percentages.map((_, i) => [i % 2 === 0, i % 2 === 1, false]),
        );
        const updated = await f.storage.transaction((tx) =>
          tx.sites.updateAtVersion(s.id, 1, { settings: data as unknown as NewSite['settings'] }),
        );
        expect(updated?.settings).toEqual(data);
        expect((await f.storage.transaction((tx) => tx.sites.findById(s.id)))?.settings).toEqual(data);
        await expect(
          f.storage.transaction((tx) => tx.coupons.update(s.id, coupons[0]!.id, { percentage: '1e2' })),
        ).rejects.toSatisfy((error) => isCode(error, 'storage'));
      });
    });

    // Until the shipped conformance suite covers subscription components and coupon releases.
    describe('subscription components and coupon releases', () => {
      it('upserts, finds and lists components of a subscription, adds usage, keeps history', async () => {
        const f = await open();
        const { siteId, subscriptionId, componentId, couponId } = await seedComponents(f.storage);
        const repo = (tx: Parameters<Parameters<Storage['transaction']>[0]>[0]) => tx.subscriptionComponents;
        const first = await f.storage.transaction((tx) =>
          repo(tx).upsert({
            siteId,
            subscriptionId,
            componentId,
            componentVersion: 1,
            allocatedQuantity: 5,
            unitBalance: 0,
            createdAt: T0,
            updatedAt: T0,
          }),
        );
        expect(first).toMatchObject({ allocatedQuantity: 5, unitBalance: 0, componentVersion: 1 });
        const later = new Date(T0.getTime() + 1000);
        const replaced = await f.storage.transaction((tx) =>
          repo(tx).upsert({
            siteId,
            subscriptionId,
            componentId,
            componentVersion: 1,
            allocatedQuantity: 7,
            unitBalance: 3,
            createdAt: later,
            updatedAt: later,
          }),
        );
        expect(replaced.id).toBe(first.id);
        expect(replaced.createdAt.getTime()).toBe(T0.getTime());
        expect(replaced).toMatchObject({ allocatedQuantity: 7, unitBalance: 3 });
        expect(replaced.updatedAt.getTime()).toBe(later.getTime());
        const usage = await f.storage.transaction((tx) =>
          repo(tx).addUsage(siteId, subscriptionId, componentId, 4, later),
        );
        expect(usage?.before.unitBalance).toBe(3);
        expect(usage?.after.unitBalance).toBe(7);
        expect(
          await f.storage.transaction((tx) => repo(tx).addUsage(siteId, subscriptionId, 987_654, 1, later)),
        ).toBeUndefined();
        expect(await f.storage.transaction((tx) => repo(tx).find(siteId, subscriptionId, componentId))).toEqual(
          usage?.after,
        );
        expect(
          await f.storage.transaction((tx) => repo(tx).find(siteId + 1, subscriptionId, componentId)),
        ).toBeUndefined();
        expect(await f.storage.transaction((tx) => repo(tx).listForSubscription(siteId, subscriptionId))).toEqual([
          usage?.after,
        ]);
        const [a1, a2] = await f.storage.transaction(async (tx) => [
          await repo(tx).insertAllocation({
            siteId,
            subscriptionId,
            componentId,
            previousQuantity: 5,
            quantity: 7,
            memo: null,
            upgradeCharge: 'prorated',
            downgradeCredit: null,
            accrueCharge: true,
            createdAt: later,
          }),
          await repo(tx).insertAllocation({
            siteId,
            subscriptionId,
            componentId,
            previousQuantity: 7,
            quantity: 2,
            memo: 'down',
            upgradeCharge: null,
            downgradeCredit: 'none',
            accrueCharge: false,
            createdAt: later,
          }),
        ]);
        expect(await f.storage.transaction((tx) => repo(tx).listAllocations(siteId, subscriptionId))).toEqual([a1, a2]);
        expect(await f.storage.transaction((tx) => repo(tx).listAllocations(siteId, subscriptionId, 987_654))).toEqual(
          [],
        );
        const u1 = await f.storage.transaction((tx) =>
          repo(tx).insertUsage({ siteId, subscriptionId, componentId, quantity: 4, memo: 'api', createdAt: later }),
        );
        expect(await f.storage.transaction((tx) => repo(tx).listUsages(siteId, subscriptionId, componentId))).toEqual([
          u1,
        ]);
        await expect(
          f.storage.transaction((tx) =>
            repo(tx).insertUsage({ siteId, subscriptionId, componentId, quantity: 1.5, memo: null, createdAt: later }),
          ),
        ).rejects.toSatisfy((error) => isCode(error, 'storage'));

        const redeemed = await f.storage.transaction((tx) => tx.coupons.redeem(siteId, couponId, later));
        expect(redeemed?.redemptions).toBe(1);
        const released = await f.storage.transaction(async (tx) => [
          await tx.coupons.releaseRedemption(siteId, couponId, later),
          await tx.coupons.releaseRedemption(siteId, couponId, later),
          await tx.coupons.releaseRedemption(siteId + 1, couponId, later),
        ]);
        expect(released.map((c) => c?.redemptions)).toEqual([0, 0, undefined]);
      });
    });

    describe('tenancy', () => {
      it('deletes a site with every row it owns in every table, and nothing of another site', async () => {
        const f = await open();
        const a = await populateSite(f.storage, 'tenant-a');
        await populateSite(f.storage, 'tenant-b');
        const before = await f.tableCounts();
        // Every table is populated, so the check below covers all of them (a new table must be added to populateSite).
        expect(Object.entries(before).filter(([, n]) => n === 0)).toEqual([]);
        expect(await f.storage.transaction((tx) => tx.sites.delete(a))).toBe(true);
        const after = await f.tableCounts();
        expect(after).toEqual(Object.fromEntries(Object.entries(before).map(([table, n]) => [table, n / 2])));
      });
    });

    describe('errors', () => {
      it('answers a taken unique key with conflict and leaves the transaction usable', async () => {
        const f = await open();
        const result = await f.storage.transaction(async (tx) => {
          await tx.sites.insert(site('a'));
          const refused = await tx.sites.insert(site('a')).catch((error: unknown) => error);
          expect(isCode(refused, 'conflict')).toBe(true);
          await tx.sites.insert(site('b'));
          return 'committed';
        });
        expect(result).toBe('committed');
        expect((await f.storage.transaction((tx) => tx.sites.list())).map((s) => s.subdomain)).toEqual(['a', 'b']);
      });

      it('maps a unique violation of the database to conflict, and refuses to commit after it', async () => {
        const f = await open();
        const s = await f.storage.transaction((tx) => tx.sites.insert(site('direct')));
        const credential = {
          siteId: s.id,
          apiId: 'same',
          apiSecret: 'x',
          apiPasswordHash: 'h',
          defaultRedirectUri: null,
          createdAt: T0,
          revokedAt: null,
        };
        await f.storage.transaction((tx) => tx.credentials.insertDirect(credential));
        let caught: unknown;
        const outcome = await f.storage
          .transaction(async (tx) => {
            await tx.sites.insert(site('lost'));
            caught = await tx.credentials.insertDirect(credential).catch((error: unknown) => error);
            return 'returned';
          })
          .catch((error: unknown) => error);
        expect(isCode(caught, 'conflict')).toBe(true);
        expect((caught as BillingError).cause).toBeDefined();
        expect(isCode(outcome, 'storage')).toBe(true);
        expect(await f.storage.transaction((tx) => tx.sites.findBySubdomain('lost'))).toBeUndefined();
      });

      it('maps other driver errors to storage with the driver error as cause', async () => {
        const f = await open();
        const error = await f.storage
          .transaction((tx) =>
            tx.credentials.insertApiKey({
              siteId: 987_654,
              name: 'k',
              prefix: 'p',
              secretHash: 'h',
              createdAt: T0,
              revokedAt: null,
            }),
          )
          .catch((e: unknown) => e);
        expect(isCode(error, 'storage')).toBe(true);
        expect((error as BillingError).cause).toBeInstanceOf(Error);
      });

      it('refuses a repository used after its transaction ended, and a closed storage', async () => {
        const f = await open();
        let leaked: Parameters<Parameters<Storage['transaction']>[0]>[0] | undefined;
        await f.storage.transaction(async (tx) => {
          leaked = tx;
        });
        await expect(leaked!.sites.list()).rejects.toSatisfy((error) => isCode(error, 'storage'));
        const other = await f.reopen();
        await other.close();
        await expect(other.transaction((tx) => tx.sites.list())).rejects.toSatisfy((error) => isCode(error, 'storage'));
      });

      it('fails a command whose connection is lost, with nothing of it written', async () => {
        const f = await open();
        const before = await f.storage.transaction((tx) => tx.sites.insert(site('before')));
        const error = await f.storage
          .transaction(async (tx) => {
            await tx.sites.insert(site('half'));
            await tx.sites.updateAtVersion(before.id, 1, { name: 'changed' });
            await f.killConnection();
            await tx.sites.insert(site('after'));
            return 'committed';
          })
          .catch((e: unknown) => e);
        expect(isCode(error, 'storage')).toBe(true);
        const fresh = await f.reopen();
        try {
          const sites = await fresh.transaction((tx) => tx.sites.list());
          expect(sites.map((s) => [s.subdomain, s.name, s.version])).toEqual([['before', 'Site before', 1]]);
        } finally {
          await fresh.close();
        }
      });
    });
  });
}

/** A site with a product, a customer, a subscription, a component (version 1) and a coupon. */
export async function seedComponents(
  storage: Storage,
  subdomain = 'components',
): Promise<{ siteId: number; subscriptionId: number; componentId: number; couponId: number; customerId: number }> {
  return storage.transaction(async (tx) => {
    const s = await tx.sites.insert(site(subdomain));
    const family = await tx.catalog.insertFamily({
      siteId: s.id,
      name: 'F',
      handle: 'f',
      description: null,
      createdAt: T0,
      updatedAt: T0,
    });
    const { product } = await tx.catalog.insertProduct(
      { siteId: s.id, familyId: family.id, handle: 'p', archivedAt: null, createdAt: T0, updatedAt: T0 },
      {
        name: 'P',
        description: null,
        accountingCode: null,
        priceInCents: 1000,
        interval: 1,
        intervalUnit: 'month',
        trialPriceInCents: null,
        trialInterval: null,
        trialIntervalUnit: null,
        initialChargeInCents: null,
        initialChargeAfterTrial: false,
        expirationInterval: null,
        expirationIntervalUnit: null,
        requestCreditCard: false,
        requireCreditCard: false,
        taxable: false,
      },
    );
    const { component } = await tx.components.insert(
      {
        siteId: s.id,
        familyId: family.id,
        kind: 'metered_component',
        name: 'API calls',
        handle: 'api',
        unitName: 'call',
        description: null,
        taxable: false,
        archivedAt: null,
        createdAt: T0,
        updatedAt: T0,
      },
      { scheme: 'per_unit', brackets: [{ startingQuantity: 1, endingQuantity: null, unitPrice: '0.01' }] },
    );
    const customer = await tx.customers.insert({
      siteId: s.id,
      firstName: 'A',
      lastName: 'B',
      email: 'a@b.c',
      reference: null,
      organization: null,
      phone: null,
      address: { address: null, address2: null, city: null, state: null, zip: null, country: null },
      createdAt: T0,
      updatedAt: T0,
    });
    const subscription = await tx.subscriptions.insert({
      siteId: s.id,
      customerId: customer.id,
      productId: product.id,
      productVersion: 1,
      paymentProfileId: null,
      state: 'active',
      periodAnchorAt: T0,
      periodIndex: 1,
      currentPeriodStartedAt: T0,
      currentPeriodEndsAt: T0,
      nextAssessmentAt: null,
      trialStartedAt: null,
      trialEndedAt: null,
      activatedAt: T0,
      canceledAt: null,
      expiresAt: null,
      delayedCancelAt: null,
      cancelAtEndOfPeriod: false,
      cancellationMessage: null,
      cancellationMethod: null,
      signupPaymentId: null,
      signupRevenueInCents: 0,
      couponCodes: [],
      referralCode: null,
      data: {},
      createdAt: T0,
      updatedAt: T0,
    });
    const coupon = await tx.coupons.insert({
      siteId: s.id,
      familyId: family.id,
      name: 'C',
      code: 'C',
      description: null,
      percentage: null,
      amountInCents: 100,
      recurring: false,
      durationPeriodCount: null,
      endDate: null,
      allowNegativeBalance: false,
      stackable: false,
      compoundingStrategy: 'compound',
      conversionLimit: null,
      archivedAt: null,
      createdAt: T0,
      updatedAt: T0,
    });
    return {
      siteId: s.id,
      subscriptionId: subscription.id,
      componentId: component.id,
      couponId: coupon.id,
      customerId: customer.id,
    };
  });
}

/**
 * A site with a row in every table: everything {@link seedComponents} makes, plus credentials,
 * an idempotency claim, due work, an outbox event, a payment profile, ledger lines, a payment
 * attempt, a note, a metafield with a value, component allocation and usage, a webhook endpoint
 * with a webhook, and a direct-post call. Returns the site id.
 */
export async function populateSite(storage: Storage, subdomain: string): Promise<number> {
  const seed = await seedComponents(storage, subdomain);
  const { siteId, subscriptionId, componentId, customerId, couponId } = seed;
  await storage.transaction(async (tx) => {
    await tx.credentials.insertApiKey({
      siteId,
      name: 'k',
      prefix: 'p',
      secretHash: 'h',
      createdAt: T0,
      revokedAt: null,
    });
    await tx.credentials.insertDirect({
      siteId,
      apiId: `api-${subdomain}`,
      apiSecret: 's',
      apiPasswordHash: 'h',
      defaultRedirectUri: null,
      createdAt: T0,
      revokedAt: null,
    });
    await tx.idempotency.claim(siteId, 'scope', 'key', T0, null);
    await tx.dueWork.schedule({
      siteId,
      kind: 'renewal',
      subjectId: subscriptionId,
      dueAt: T0,
      uniqueKey: 'renewal:1:1',
    });
    const [event] = await tx.outbox.append([
      {
        siteId,
        key: 'signup_success',
        subjectType: 'subscription',
        subjectId: subscriptionId,
        payload: {},
        occurredAt: T0,
      },
    ]);
    await tx.customers.insertPaymentProfile({
      siteId,
      customerId,
      paymentType: 'credit_card',
      vaultToken: 'tok',
      customerVaultToken: null,
      currentVault: 'bogus',
      cardType: 'visa',
      lastFour: '1111',
      expirationMonth: 1,
      expirationYear: 2030,
      firstName: null,
      lastName: null,
      billingAddress: { address: null, address2: null, city: null, state: null, zip: null, country: null },
      createdAt: T0,
      updatedAt: T0,
    });
    const [charged] = await tx.ledger.append([
      {
        siteId,
        subscriptionId,
        customerId,
        type: 'charge',
        kind: null,
        amountInCents: 100,
        memo: 'm',
        success: null,
        paymentId: null,
        productId: null,
        componentId: null,
        periodIndex: null,
        gatewayTransactionId: null,
        createdAt: T0,
        balanceDeltaInCents: 100,
      },
    ]);
    await tx.payments.insert({ ...attempt(siteId, 'pay', 100), subscriptionId, customerId });
    await tx.notes.insert({ siteId, subscriptionId, body: 'n', sticky: false, createdAt: T0, updatedAt: T0 });
    await tx.reasonCodes.insert({
      siteId,
      code: 'CH1',
      description: 'Churn',
      position: 1,
      createdAt: T0,
      updatedAt: T0,
    });
    await tx.couponSubcodes.insert({ siteId, couponId, code: 'SUB1', createdAt: T0 });
    await tx.portalAccess.save({
      siteId,
      customerId,
      enabled: true,
      createdAt: T0,
      inviteLastSentAt: T0,
      inviteLastAcceptedAt: null,
      revokedAt: null,
      updatedAt: T0,
    });
    await tx.accounts.insert({
      siteId,
      subscriptionId,
      account: 'prepayment',
      entryType: 'prepayment',
      amountInCents: 100,
      memo: 'm',
      details: null,
      method: 'check',
      external: true,
      prepaymentId: null,
      transactionId: charged!.id,
      createdAt: T0,
    });
    const product = (await tx.subscriptions.findById(siteId, subscriptionId))!.productId;
    await tx.offers.insert({
      siteId,
      name: 'Offer',
      handle: 'offer',
      description: null,
      productId: product,
      productPricePointId: null,
      items: [{ componentId, pricePointId: null, startingQuantity: 1 }],
      couponIds: [couponId],
      archivedAt: null,
      createdAt: T0,
      updatedAt: T0,
    });
    await tx.mrrMovements.insert({
      siteId,
      subscriptionId,
      occurredAt: T0,
      category: 'new_business',
      amountInCents: 100,
      planAmountInCents: 100,
      usageAmountInCents: 0,
      mrrInCents: 100,
      planMrrInCents: 100,
      usageMrrInCents: 0,
      subscriberName: 'A B',
      lineItems: [],
    });
    const exported = await tx.exports.insert({ siteId, kind: 'subscriptions', createdAt: T0 });
    await tx.exports.complete(siteId, exported.id, [{ id: subscriptionId }], T0);
    const noAddress = { address: null, address2: null, city: null, state: null, zip: null, country: null };
    await tx.proformaInvoices.insert({
      siteId,
      uid: `pro_seed${siteId}`,
      number: await tx.proformaInvoices.nextNumber(siteId),
      status: 'draft',
      subscriptionId,
      customerId,
      role: 'proforma_adhoc',
      collectionMethod: 'automatic',
      deliveryDate: '2026-02-01',
      currency: 'USD',
      memo: '',
      seller: { name: 'Seller', address: noAddress, phone: null },
      customer: {
        customerId,
        firstName: 'A',
        lastName: 'B',
        organization: null,
        email: 'a@example.com',
        reference: null,
        billingAddress: noAddress,
      },
      productName: null,
      productFamilyName: null,
      periodStart: null,
      periodEnd: null,
      lineItems: [],
      discounts: [],
      subtotalInCents: 0,
      discountInCents: 0,
      taxInCents: 0,
      totalInCents: 0,
      dueInCents: 0,
      createdAt: T0,
      voidedAt: null,
      voidReason: null,
    });
    const field = await tx.metafields.insertField({
      siteId,
      resourceType: 'subscription',
      name: 'color',
      inputType: 'text',
      enumValues: null,
      scope: { hosted: [], csv: false, invoices: false, statements: false, portal: false },
      createdAt: T0,
      updatedAt: T0,
    });
    await tx.metafields.setValue({
      siteId,
      resourceType: 'subscription',
      resourceId: subscriptionId,
      metafieldId: field.id,
      name: 'color',
      value: 'blue',
      updatedAt: T0,
      now: T0,
    });
    await tx.subscriptionComponents.upsert({
      siteId,
      subscriptionId,
      componentId,
      componentVersion: 1,
      allocatedQuantity: 1,
      unitBalance: 0,
      createdAt: T0,
      updatedAt: T0,
    });
    await tx.subscriptionComponents.insertAllocation({
      siteId,
      subscriptionId,
      componentId,
      previousQuantity: 0,
      quantity: 1,
      memo: null,
      upgradeCharge: null,
      downgradeCredit: null,
      accrueCharge: false,
      createdAt: T0,
    });
    await tx.subscriptionComponents.insertUsage({
      siteId,
      subscriptionId,
      componentId,
      quantity: 1,
      memo: null,
      createdAt: T0,
    });
    const endpoint = await tx.webhooks.insertEndpoint({
      siteId,
      url: 'https://example.com/hook',
      events: ['signup_success'],
      status: 'enabled',
      failureCount: 0,
      createdAt: T0,
      updatedAt: T0,
    });
    await tx.webhooks.insertWebhook({
      siteId,
      endpointId: endpoint.id,
      eventId: event?.id ?? null,
      eventKey: 'signup_success',
      body: 'a=b',
      status: 'pending',
      attempts: 0,
      lastSentAt: null,
      lastSentUrl: null,
      lastError: null,
      lastErrorAt: null,
      acceptedAt: null,
      createdAt: T0,
      updatedAt: T0,
    });
    await tx.directCalls.insert({
      id: 'a'.repeat(40),
      siteId,
      apiId: `api-${subdomain}`,
      nonce: null,
      timestamp: null,
      success: true,
      request: {},
      response: {},
      createdAt: T0,
    });
    await tx.directCalls.claimPost({ siteId, inputHash: 'b'.repeat(64), nonceKey: `api-${subdomain}|1|n`, at: T0 });
    await populateInvoices(tx, siteId);
  });
  return siteId;
}
