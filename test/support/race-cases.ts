/**
 * Concurrency proofs shared by the SQL adapters (issue 3, item 7): several independent storages
 * (own pool or own connection each), and separate Node processes, racing on one database. Each
 * case checks the port's race contract by counting: every due row claimed exactly once, one
 * winner per idempotency key and per expected version, balances that chain, limits that hold.
 */
import type { DueWorkRecord, NewSite, Storage, SubscriptionRecord } from 'billing-engine';
import { BillingError } from 'billing-engine';
import { afterEach, describe, expect, it } from 'vitest';
import { runRaceProcesses } from './race-processes.js';
import type { RaceWorkerArgs } from './race-worker.js';
import { seedComponents } from './sql-adapter-cases.js';

/** One shared database for a race. */
export interface RaceDatabase {
  /** A storage to seed and to check results with. */
  readonly seed: Storage;
  /** `count` independent storages on the same database (own pool / own connection each). */
  openStorages(count: number): Promise<Storage[]>;
  /** Where a child process finds the database. */
  readonly location: Pick<RaceWorkerArgs, 'dialect'> & Record<string, unknown>;
  dispose(): Promise<void>;
}

/** How the race cases get a fresh shared database of one dialect. */
export interface RaceContext {
  readonly name: string;
  /** When set, every case is skipped and this reason printed. */
  readonly skipReason?: string;
  open(): Promise<RaceDatabase>;
}

const T0 = new Date('2026-03-01T10:00:00.123Z');
const ROWS = 2000;
const BATCH = 50;
const CLAIMERS = 4;

function site(subdomain: string): NewSite {
  return {
    subdomain,
    name: subdomain,
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
  };
}

/** Seeds 2,000 due rows over 4 sites with colliding due times; returns the sites' ids. */
async function seedDueWork(storage: Storage): Promise<number[]> {
  // One transaction per site, in parallel where the storage allows it, to keep seeding short.
  return Promise.all(
    [0, 1, 2, 3].map((s) =>
      storage.transaction(async (tx) => {
        const created = await tx.sites.insert(site(`race-${s}`));
        for (let i = 0; i < ROWS / 4; i++) {
          await tx.dueWork.schedule({
            siteId: created.id,
            kind: i % 5 === 0 ? 'dunning_retry' : 'renewal',
            subjectId: i,
            // Many rows share a due instant, so the (due_at, id) order and the locks both matter.
            dueAt: new Date(T0.getTime() + (i % 37) * 1000),
            uniqueKey: `renewal:${i}:1`,
          });
        }
        return created.id;
      }),
    ),
  );
}

/** Asserts that the claims cover every seeded row exactly once and that storage agrees on who holds each. */
async function expectEachClaimedOnce(
  storage: Storage,
  siteIds: number[],
  claims: Map<string, number[]>,
): Promise<void> {
  const owners = new Map<number, string>();
  const duplicates: number[] = [];
  for (const [owner, ids] of claims) {
    for (const id of ids) {
      if (owners.has(id)) duplicates.push(id);
      owners.set(id, owner);
    }
  }
  expect(duplicates).toEqual([]);
  expect(owners.size).toBe(ROWS);
  // Read back through the port: every row claimed, by the claimer that reported it.
  const perSite = await Promise.all(
    siteIds.map((siteId) =>
      storage.transaction(async (tx) => {
        const out: DueWorkRecord[] = [];
        for (let i = 0; i < ROWS / 4; i++) {
          const row = await tx.dueWork.findByKey(siteId, `renewal:${i}:1`);
          if (row) out.push(row);
        }
        return out;
      }),
    ),
  );
  const stored = perSite.flat();
  expect(stored).toHaveLength(ROWS);
  expect(stored.filter((row) => row.status !== 'claimed')).toEqual([]);
  expect(stored.filter((row) => owners.get(row.id) !== row.claimedBy).map((row) => row.id)).toEqual([]);
  const spread = [...claims.entries()].map(([owner, ids]) => `${owner}: ${ids.length}`);
  // Printed so a run shows the claimers really interleaved (a race nobody lost proves little).
  console.info(`[races] rows per claimer: ${spread.join(', ')}`);
}

async function claimUntilEmpty(storage: Storage, owner: string): Promise<number[]> {
  const claimed: number[] = [];
  for (;;) {
    const batch = await storage.transaction((tx) =>
      tx.dueWork.claim({
        until: new Date(T0.getTime() + 60_000),
        limit: BATCH,
        owner,
        leaseUntil: new Date(T0.getTime() + 3_600_000),
        now: T0,
      }),
    );
    if (batch.length === 0) return claimed;
    claimed.push(...batch.map((row) => row.id));
  }
}

/** Registers the race cases for one dialect. */
export function raceCases(context: RaceContext): void {
  const test = context.skipReason === undefined ? it : it.skip;
  if (context.skipReason !== undefined) console.info(`[${context.name} races] skipping: ${context.skipReason}`);

  describe(`${context.name} races`, () => {
    let db: RaceDatabase | undefined;
    const open = async () => {
      db = await context.open();
      return db;
    };
    afterEach(async () => {
      await db?.dispose();
      db = undefined;
    });

    test(`${CLAIMERS} storages claiming ${ROWS} due rows in batches of ${BATCH} claim each exactly once`, async () => {
      const { seed, openStorages } = await open();
      const siteIds = await seedDueWork(seed);
      const storages = await openStorages(CLAIMERS);
      const results = await Promise.all(storages.map((storage, i) => claimUntilEmpty(storage, `claimer-${i}`)));
      const claims = new Map(results.map((ids, i) => [`claimer-${i}`, ids]));
      await expectEachClaimedOnce(seed, siteIds, claims);
    });

    test(`${CLAIMERS} processes claiming ${ROWS} due rows in batches of ${BATCH} claim each exactly once`, async () => {
      const { seed, location } = await open();
      const siteIds = await seedDueWork(seed);
      const results = await runRaceProcesses(
        Array.from(
          { length: CLAIMERS },
          (_, i) =>
            ({
              ...location,
              owner: `process-${i}`,
              siteId: siteIds[0]!,
              op: 'claim-due',
              batch: BATCH,
              now: T0.getTime() + 60_000,
            }) as RaceWorkerArgs,
        ),
      );
      const claims = new Map(results.map((r) => [r.owner, 'claimed' in r ? r.claimed : []]));
      await expectEachClaimedOnce(seed, siteIds, claims);
    });

    test('gives an idempotency key to exactly one of 20 concurrent claims from 4 storages', async () => {
      const { seed, openStorages } = await open();
      const target = await seed.transaction((tx) => tx.sites.insert(site('race-key')));
      const storages = await openStorages(4);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          storages[i % 4]!.transaction((tx) => tx.idempotency.claim(target.id, 'race', 'one-key', T0, null)),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    test('gives an idempotency key to exactly one of 20 concurrent claims from 4 processes', async () => {
      const { seed, location } = await open();
      const target = await seed.transaction((tx) => tx.sites.insert(site('race-key-p')));
      const results = await runRaceProcesses(
        Array.from(
          { length: 4 },
          (_, i) =>
            ({
              ...location,
              owner: `p${i}`,
              siteId: target.id,
              op: 'claim-key',
              times: 5,
              now: T0.getTime(),
            }) as RaceWorkerArgs,
        ),
      );
      expect(results.reduce((sum, r) => sum + ('wins' in r ? r.wins : 0), 0)).toBe(1);
    });

    test('lets exactly one of 12 concurrent updates at one version win, from 4 storages and from 4 processes', async () => {
      const { seed, openStorages, location } = await open();
      const target = await seed.transaction((tx) => tx.sites.insert(site('race-version')));
      const storages = await openStorages(4);
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          storages[i % 4]!.transaction((tx) => tx.sites.updateAtVersion(target.id, 1, { name: `writer-${i}` })),
        ),
      );
      const winners = results.filter((r) => r !== undefined);
      expect(winners).toHaveLength(1);
      expect((await seed.transaction((tx) => tx.sites.findById(target.id)))?.name).toBe(winners[0]?.name);

      const processes = await runRaceProcesses(
        Array.from(
          { length: 4 },
          (_, i) =>
            ({
              ...location,
              owner: `p${i}`,
              siteId: target.id,
              op: 'update-site',
              times: 3,
              expectedVersion: 2,
            }) as RaceWorkerArgs,
        ),
      );
      expect(processes.reduce((sum, r) => sum + ('wins' in r ? r.wins : 0), 0)).toBe(1);
      expect((await seed.transaction((tx) => tx.sites.findById(target.id)))?.version).toBe(3);
    });

    test('schedules one unique key once when 12 storages race to schedule it', async () => {
      const { seed, openStorages } = await open();
      const target = await seed.transaction((tx) => tx.sites.insert(site('race-schedule')));
      const storages = await openStorages(4);
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          storages[i % 4]!.transaction((tx) =>
            tx.dueWork.schedule({
              siteId: target.id,
              kind: 'renewal',
              subjectId: 42,
              dueAt: T0,
              uniqueKey: 'renewal:42:7',
            }),
          ),
        ),
      );
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
      expect(await seed.transaction((tx) => tx.dueWork.pendingFor(target.id, 42))).toHaveLength(1);
    });

    test('keeps ledger balances chained, coupon limits and refund caps under concurrent writers', async () => {
      const { seed, openStorages } = await open();
      const { siteId, sub, couponId, paymentLineId } = await seed.transaction(async (tx) => {
        const s = await tx.sites.insert(site('race-money'));
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
        const subscription: SubscriptionRecord = await tx.subscriptions.insert({
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
          name: 'Five uses',
          code: 'FIVE',
          description: null,
          percentage: '10',
          amountInCents: null,
          recurring: false,
          durationPeriodCount: null,
          endDate: null,
          allowNegativeBalance: false,
          stackable: false,
          compoundingStrategy: 'compound',
          conversionLimit: 5,
          archivedAt: null,
          createdAt: T0,
          updatedAt: T0,
        });
        const [payment] = await tx.ledger.append([
          line(s.id, subscription, { type: 'payment', amountInCents: 1000, balanceDeltaInCents: -1000 }),
        ]);
        return { siteId: s.id, sub: subscription, couponId: coupon.id, paymentLineId: payment!.id };
      });
      const storages = await openStorages(4);
      const on = (i: number) => storages[i % 4]!;
      const [appends, redeems, refunds] = await Promise.all([
        Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            on(i).transaction((tx) => tx.ledger.append([line(siteId, sub, { balanceDeltaInCents: 25 })])),
          ),
        ),
        Promise.all(
          Array.from({ length: 20 }, (_, i) => on(i + 1).transaction((tx) => tx.coupons.redeem(siteId, couponId, T0))),
        ),
        Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            on(i + 2).transaction((tx) => tx.ledger.addRefunded(siteId, paymentLineId, 150)),
          ),
        ),
      ]);
      expect(appends.flat()).toHaveLength(40);
      const lines = await seed.transaction((tx) => tx.ledger.listForSubscription(siteId, sub.id));
      let balance = 0;
      for (const l of lines) {
        expect(l.startingBalanceInCents).toBe(balance);
        balance = l.endingBalanceInCents;
      }
      expect(balance).toBe(-1000 + 40 * 25);
      expect(await seed.transaction((tx) => tx.ledger.balance(siteId, sub.id))).toBe(balance);
      expect(redeems.filter((r) => r !== undefined)).toHaveLength(5);
      expect((await seed.transaction((tx) => tx.coupons.findById(siteId, couponId)))?.redemptions).toBe(5);
      expect(refunds.filter((r) => r !== undefined)).toHaveLength(6);
      expect((await seed.transaction((tx) => tx.ledger.findById(siteId, paymentLineId)))?.refundedAmountInCents).toBe(
        900,
      );
    });

    test('loses no metered usage when 40 writers from 4 storages add to one component', async () => {
      const { seed, openStorages } = await open();
      const { siteId, subscriptionId, componentId } = await seedComponents(seed);
      await seed.transaction((tx) =>
        tx.subscriptionComponents.upsert({
          siteId,
          subscriptionId,
          componentId,
          componentVersion: 1,
          allocatedQuantity: 0,
          unitBalance: 0,
          createdAt: T0,
          updatedAt: T0,
        }),
      );
      const storages = await openStorages(4);
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          storages[i % 4]!.transaction((tx) =>
            tx.subscriptionComponents.addUsage(siteId, subscriptionId, componentId, 3, T0),
          ),
        ),
      );
      // Each writer saw a distinct balance before its own addition: none of them lost an update.
      const befores = results.map((r) => r?.before.unitBalance).sort((a, b) => (a ?? 0) - (b ?? 0));
      expect(befores).toEqual(Array.from({ length: 40 }, (_, i) => i * 3));
      const stored = await seed.transaction((tx) =>
        tx.subscriptionComponents.find(siteId, subscriptionId, componentId),
      );
      expect(stored?.unitBalance).toBe(120);
    });

    test('lets one of 10 concurrent payment attempts with one key in; the others get conflict', async () => {
      const { seed, openStorages } = await open();
      const target = await seed.transaction((tx) => tx.sites.insert(site('race-pay')));
      const storages = await openStorages(4);
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          storages[i % 4]!.transaction((tx) =>
            tx.payments.insert({
              siteId: target.id,
              subscriptionId: null,
              customerId: null,
              idempotencyKey: 'renewal:1:1',
              amountInCents: 100 + i,
              currency: 'USD',
              purpose: 'renewal',
              status: 'pending',
              gatewayTransactionId: null,
              message: null,
              transactionId: null,
              createdAt: T0,
              updatedAt: T0,
            }),
          ),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(rejected.every((r) => r.reason instanceof BillingError && r.reason.code === 'conflict')).toBe(true);
    });
  });
}

function line(
  siteId: number,
  sub: SubscriptionRecord,
  overrides: { type?: 'charge' | 'payment'; amountInCents?: number; balanceDeltaInCents: number },
) {
  return {
    siteId,
    subscriptionId: sub.id,
    customerId: sub.customerId,
    type: overrides.type ?? ('charge' as const),
    kind: null,
    amountInCents: overrides.amountInCents ?? overrides.balanceDeltaInCents,
    memo: 'race',
    success: null,
    paymentId: null,
    productId: null,
    componentId: null,
    periodIndex: null,
    gatewayTransactionId: null,
    createdAt: T0,
    balanceDeltaInCents: overrides.balanceDeltaInCents,
  };
}
