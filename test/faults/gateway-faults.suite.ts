import {
  type BillingEngine,
  BillingError,
  type ChargeCall,
  createBillingEngine,
  createTestGateway,
  type GatewayFault,
  ManualClock,
  type PaymentGateway,
  type Storage,
  type TestGateway,
} from 'billing-engine';
import { createMemoryStorage } from 'billing-engine/adapters/memory';
import type { StorageHarness } from 'billing-engine/testing';
import { describe, expect, it } from 'vitest';
import { balanceDelta } from '../../src/domain/ledger/balance-delta.js';
import type { OutboxEventRecord, PaymentAttemptRecord, TransactionRecord } from '../../src/ports/storage.js';
import type { GatewayFaults } from '../../src/test-gateway.js';

// ---------------------------------------------------------------------------------------------
// The book: 30 monthly subscriptions (a third on a trial with seats, coupons on some), one-time
// charges made by a merchant script, two customers whose cards start declining, billed for six
// months on a manual clock. The same script runs twice: once without faults on the memory
// adapter (the control), once with faults on the storage under test.

const START = Date.parse('2026-01-05T14:00:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The clock advances this much between two `runDue` calls. */
const STEP = 6 * HOUR;
/** Faults stop here (about six months in), then the book runs on until everything settled. */
const FAULTS_END = START + 182 * DAY;
const END = FAULTS_END + 14 * DAY;
const BOOK_SIZE = 30;
const SIGNUPS_PER_DAY = 3;
const VISA = { fullNumber: '4111111111111111', expirationMonth: 12, expirationYear: 2035 };
const DUNNING = { retryCount: 3, retryIntervalHours: 24, finalAction: 'canceled' as const };

/**
 * A quarter of the renewal, dunning, one-time charge, mid-period allocation and migration calls
 * fail, half of those with a lost answer.
 */
export const FAULTS: GatewayFaults = {
  seed: 20_260_105,
  errorRate: 0.13,
  unknownRate: 0.12,
  unknownChargedRate: 0.5,
  lookupFailureRate: 0.3,
  keyPrefixes: ['renewal:', 'dunning:', 'charge:', 'allocation:', 'migration:'],
};

/**
 * The gateway a book is billed through, and what the checks read from it: the test gateway, or
 * the Stripe gateway over the fake Stripe (`stripe-faults.ts`), with the same faults and records.
 */
export interface FaultyGateway {
  /** What the engine charges. */
  readonly gateway: PaymentGateway;
  /** The card number signups use (one that pays). */
  readonly cardNumber: string;
  /** Declines the next `times` (default 1) charges whose key starts with `keyPrefix`. */
  declineNext(keyPrefix: string, times?: number): void;
  /** Loses the answer of the next charge whose key starts with `keyPrefix`, after taking the money or before. */
  loseNext(keyPrefix: string, charged: boolean): void;
  /** Stops the faults for good. */
  stopFaults(): void;
  /** Every charge that took money, by idempotency key. */
  readonly charges: ReadonlyMap<string, { readonly amountInCents: number; readonly transactionId: string }>;
  /** Money given back, by the charge's transaction id. */
  readonly refunds: ReadonlyMap<string, number>;
  /** How many times `charge` was called, including repeats of one key. */
  readonly chargeCalls: number;
  /** Every `charge` call in order, with its answer. */
  readonly calls: readonly ChargeCall[];
  /** Every fault injected, in order. */
  readonly faults: readonly GatewayFault[];
  /** Invariants of the gateway's own records, checked after the run. */
  expectSound?(): void;
  close?(): Promise<void>;
}

/** How a suite gets its gateway: with the faults (or none, for the control) on the book's clock. */
export interface FaultyGatewayKind {
  readonly name: string;
  create(faults: GatewayFaults | undefined, clock: ManualClock): Promise<FaultyGateway>;
}

/** The built-in test gateway, whose seeded faults are drawn in call order. */
export const testGatewayKind: FaultyGatewayKind = {
  name: 'test gateway',
  async create(faults) {
    const gateway = createTestGateway(faults === undefined ? {} : { faults });
    return {
      gateway,
      cardNumber: VISA.fullNumber,
      declineNext: (keyPrefix, times) =>
        gateway.injectFailure({ outcome: 'declined', keyPrefix, ...(times === undefined ? {} : { times }) }),
      loseNext: (keyPrefix, charged) => gateway.injectFailure({ outcome: 'unknown', keyPrefix, charged }),
      stopFaults: () => gateway.setFaults(undefined),
      get charges() {
        return gateway.charges;
      },
      get refunds() {
        return gateway.refunds;
      },
      get chargeCalls() {
        return gateway.chargeCalls;
      },
      get calls() {
        return gateway.calls;
      },
      get faults() {
        return gateway.faults;
      },
    };
  },
};

/** Which book entries get what. */
const isTeam = (i: number) => i % 3 === 0;
const productOf = (i: number) => (isTeam(i) ? 'team' : i % 3 === 1 ? 'basic' : 'pro');
const couponOf = (i: number) => (i % 4 === 0 ? 'LAUNCH' : i % 7 === 3 ? 'WELCOME' : undefined);
/** Entry 7: its second renewal and first dunning retry are declined (past due, then cured). */
const DECLINED_ONCE = 7;
/** Entry 13: its card declines from the third renewal on; dunning exhausts and cancels it. */
const DECLINED_FOR_GOOD = 13;
/** Days (after START) on which the merchant makes one-time charges, and to whom. */
const CHARGE_DAYS = Array.from({ length: 12 }, (_, n) => 12 + 14 * n);
const chargesOn = (day: number, i: number) => (i + day) % 3 === 0;

/**
 * Mid-period commands of the merchant script: Basic entries migrate to Pro (prorated: a credit for
 * Basic's unused time, Pro charged, the difference paid at once), half of them keeping their period
 * dates; Pro and Team entries raise their seats (a prorated charge paid at once). Entries 7 and 13
 * (the declining cards) are left out.
 */
const MIGRATIONS: ReadonlyMap<number, { day: number; preservePeriod: boolean }> = new Map([
  [1, { day: 45, preservePeriod: false }],
  [10, { day: 47, preservePeriod: true }],
  [19, { day: 52, preservePeriod: false }],
  [28, { day: 58, preservePeriod: true }],
  [4, { day: 96, preservePeriod: true }],
  [22, { day: 101, preservePeriod: false }],
]);
const ALLOCATIONS: ReadonlyMap<number, { day: number; quantity: number }> = new Map([
  [2, { day: 40, quantity: 3 }],
  [8, { day: 44, quantity: 2 }],
  [14, { day: 61, quantity: 5 }],
  [20, { day: 66, quantity: 1 }],
  [26, { day: 73, quantity: 4 }],
  [0, { day: 55, quantity: 4 }],
  [6, { day: 83, quantity: 6 }],
  [12, { day: 90, quantity: 5 }],
  [18, { day: 110, quantity: 5 }],
]);

/**
 * Besides the seeded faults, these commands' first charge loses its answer (with the money taken,
 * or not), so every path of a lost mid-period payment is taken on every run.
 */
const LOST_COMMANDS: ReadonlyMap<number, boolean> = new Map([
  [19, true],
  [4, false],
  [14, true],
  [6, false],
]);

/** A migration or seat allocation the merchant script means to apply exactly once. */
interface Command {
  readonly entry: number;
  readonly kind: 'migration' | 'allocation';
  readonly day: number;
  state: 'open' | 'done' | 'refused';
  /** Calls the script made for it; more than one means it was retried (refused, or its payment failed). */
  calls: number;
  /** What became of its payment at the call that applied it (allocations report it; a migration applied was paid). */
  payment?: string;
}

/** A one-time charge the merchant script means to collect exactly once. */
interface Intent {
  readonly entry: number;
  readonly memo: string;
  readonly amountInCents: number;
  state: 'open' | 'waiting' | 'done' | 'refused';
  /** Failed payments already seen for it (each left an `info` line). */
  failures: number;
  /** `charge` calls the script made for it. */
  calls: number;
}

/** Everything a run leaves behind for the checks. */
interface BookRun {
  readonly engine: BillingEngine;
  readonly storage: Storage;
  readonly gateway: FaultyGateway;
  readonly siteId: number;
  /** Subscription id of each book entry. */
  readonly ids: readonly number[];
  readonly intents: readonly Intent[];
  readonly commands: readonly Command[];
  /** Gateway calls made while the faults were on. */
  readonly callsWithFaults: number;
  readonly merchant: {
    pendingAnswers: number;
    immediateFailures: number;
    reconciledFailures: number;
    migrationsRetried: number;
    allocationPayments: Record<string, number>;
  };
}

async function runBook(
  storage: Storage,
  faults: GatewayFaults | undefined,
  kind: FaultyGatewayKind = testGatewayKind,
): Promise<BookRun> {
  const clock = new ManualClock(START);
  // Created with the faults (which also records every call), so they apply from the first charge.
  const gateway = await kind.create(faults, clock);
  const engine = createBillingEngine({ storage, clock, gateway: gateway.gateway });
  const { site } = await engine.sites.create({
    subdomain: 'faults',
    currency: 'USD',
    timeZone: 'America/New_York',
    settings: { dunning: DUNNING },
  });
  const acme = engine.site('faults');
  const family = await acme.catalog.createFamily({ name: 'Plans' });
  const monthly = { interval: 1, intervalUnit: 'month' as const };
  await acme.catalog.createProduct(family.id, { name: 'Basic', handle: 'basic', priceInCents: 1900, ...monthly });
  await acme.catalog.createProduct(family.id, { name: 'Pro', handle: 'pro', priceInCents: 4900, ...monthly });
  await acme.catalog.createProduct(family.id, {
    name: 'Team',
    handle: 'team',
    priceInCents: 9900,
    ...monthly,
    trialInterval: 14,
    trialIntervalUnit: 'day',
    trialPriceInCents: 0,
  });
  const seats = await acme.components.create(family.id, {
    kind: 'quantity_based_component',
    name: 'Seats',
    unitName: 'seat',
    pricingScheme: 'per_unit',
    unitPrice: '4.00',
  });
  await acme.coupons.create({
    name: 'Launch',
    code: 'LAUNCH',
    percentage: '15',
    recurring: true,
    durationPeriodCount: 3,
    productFamilyId: family.id,
  });
  await acme.coupons.create({ name: 'Welcome', code: 'WELCOME', amountInCents: 500, productFamilyId: family.id });

  const ids: number[] = [];
  const intents: Intent[] = [];
  const commands: Command[] = [];
  const merchant = {
    pendingAnswers: 0,
    immediateFailures: 0,
    reconciledFailures: 0,
    migrationsRetried: 0,
    allocationPayments: {} as Record<string, number>,
  };
  let callsWithFaults = 0;

  /** The merchant's side of one-time charges: retry a failed one, wait for a lost answer, never pay twice. */
  const chase = async () => {
    for (const intent of intents) {
      if (intent.state === 'waiting') {
        const lines = await acme.subscriptions.transactions(ids[intent.entry]!);
        if (lines.some((l) => l.type === 'charge' && l.kind === 'one_time' && l.memo === intent.memo)) {
          intent.state = 'done';
          continue;
        }
        const failures = lines.filter((l) => l.type === 'info' && l.memo.endsWith(`(${intent.memo})`)).length;
        if (failures === intent.failures) continue; // still unresolved: keep waiting
        merchant.reconciledFailures += failures - intent.failures;
        intent.failures = failures;
        intent.state = 'open';
      }
      if (intent.state !== 'open') continue;
      intent.calls += 1;
      try {
        await acme.ledger.charge(ids[intent.entry]!, { amountInCents: intent.amountInCents, memo: intent.memo });
        intent.state = 'done';
      } catch (error) {
        if (!(error instanceof BillingError)) throw error;
        if (error.code === 'validation') {
          // Dunning canceled the subscription before the charge: the engine refuses it, nothing is owed.
          intent.state = 'refused';
        } else if (error.code === 'gateway_error' && error.data?.pending === true) {
          // The answer was lost: the engine reconciles it by key; charging again could take the money twice.
          merchant.pendingAnswers += 1;
          intent.state = 'waiting';
        } else if (error.code === 'gateway_error') {
          merchant.immediateFailures += 1;
          intent.failures += 1;
        } else {
          throw error;
        }
      }
    }
  };

  /**
   * The merchant's side of migrations and allocations. An allocation stands whatever its payment
   * does (a failed one accrues to the next renewal; a lost one is reconciled by the engine), so it
   * is never sent twice. A migration whose payment failed, or whose answer was lost, did not
   * happen: the engine refunds a lost charge it took, and until then refuses another (409); the
   * script tries again at later steps, and must never pay twice.
   */
  const command = async () => {
    for (const c of commands) {
      if (c.state !== 'open') continue;
      c.calls += 1;
      const id = ids[c.entry]!;
      try {
        if (c.kind === 'migration') {
          const { preservePeriod } = MIGRATIONS.get(c.entry)!;
          await acme.subscriptions.migrate(id, { productHandle: 'pro', preservePeriod });
          c.payment = 'succeeded';
        } else {
          const { quantity } = ALLOCATIONS.get(c.entry)!;
          const result = await acme.allocations.allocate(id, seats.component.id, {
            quantity,
            memo: `Seats for entry ${c.entry}`,
          });
          c.payment = result.payment?.status ?? 'none';
          merchant.allocationPayments[c.payment] = (merchant.allocationPayments[c.payment] ?? 0) + 1;
        }
        c.state = 'done';
      } catch (error) {
        if (!(error instanceof BillingError)) throw error;
        const state = (await acme.subscriptions.get(id)).subscription.state;
        if (state === 'cancelled') c.state = 'refused';
        else if (c.kind === 'migration') merchant.migrationsRetried += 1;
        // conflict (a payment of the subscription unsettled), gateway_error, payment_declined,
        // or not eligible while dunning runs: nothing changed; try again at the next step.
        if (!['conflict', 'gateway_error', 'payment_declined', 'validation'].includes(error.code)) throw error;
      }
    }
  };

  let day = -1;
  for (let at = START; at <= END; at += STEP) {
    clock.set(at);
    const today = Math.floor((at - START) / DAY);
    if (today !== day) {
      day = today;
      // Signups: three a day for the first ten days, at the step's instant.
      for (let n = 0; n < SIGNUPS_PER_DAY && ids.length < BOOK_SIZE; n++) {
        const i = ids.length;
        const coupon = couponOf(i);
        const created = await acme.subscriptions.create({
          productHandle: productOf(i),
          customer: { firstName: 'Book', lastName: `Entry ${i}`, email: `entry${i}@example.com`, reference: `e${i}` },
          creditCard: { ...VISA, fullNumber: gateway.cardNumber },
          ...(coupon === undefined ? {} : { couponCode: coupon }),
          ...(isTeam(i) ? { components: [{ componentId: seats.component.id, allocatedQuantity: 1 + (i % 5) }] } : {}),
        });
        const id = created.subscription.id;
        ids.push(id);
        if (i === DECLINED_ONCE) {
          gateway.declineNext(`renewal:${id}:2`);
          gateway.declineNext(`dunning:${id}:2:1`);
        }
        if (i === DECLINED_FOR_GOOD) {
          gateway.declineNext(`renewal:${id}:3`);
          gateway.declineNext(`dunning:${id}:3:`, DUNNING.retryCount);
        }
      }
      for (const [kind, schedule] of [
        ['migration', MIGRATIONS],
        ['allocation', ALLOCATIONS],
      ] as const) {
        for (const [entry, { day: on }] of schedule) {
          if (on !== day) continue;
          commands.push({ entry, kind, day, state: 'open', calls: 0 });
          const charged = LOST_COMMANDS.get(entry);
          if (faults && charged !== undefined) gateway.loseNext(`${kind}:${ids[entry]}:`, charged);
        }
      }
      if (CHARGE_DAYS.includes(day)) {
        for (let i = 0; i < BOOK_SIZE; i++) {
          if (!chargesOn(day, i)) continue;
          intents.push({
            entry: i,
            memo: `Onboarding day ${day} entry ${i}`,
            amountInCents: 1000 + 37 * i + day,
            state: 'open',
            failures: 0,
            calls: 0,
          });
        }
      }
    }
    // Many charges in flight at once (issue 18): lost answers and errors land between the steps of
    // concurrent payments, whose outcomes must still settle exactly once.
    await engine.runDue({ concurrency: 16 });
    await chase();
    await command();
    if (faults && at >= FAULTS_END && callsWithFaults === 0) {
      callsWithFaults = gateway.calls.length;
      gateway.stopFaults();
    }
  }
  return { engine, storage, gateway, siteId: site.id, ids, intents, commands, callsWithFaults, merchant };
}

// ---------------------------------------------------------------------------------------------
// Reading a run through the storage port.

interface SubscriptionFacts {
  readonly id: number;
  readonly state: string;
  readonly periodIndex: number;
  readonly canceledAt: Date | null;
  readonly signupPaymentId: number | null;
  readonly balance: number;
  readonly lines: readonly TransactionRecord[];
  /** Attempts by idempotency key, for renewal and dunning keys of this subscription. */
  readonly attempts: ReadonlyMap<string, PaymentAttemptRecord>;
  readonly events: readonly OutboxEventRecord[];
}

async function facts(run: BookRun): Promise<SubscriptionFacts[]> {
  return run.storage.transaction(async (tx) => {
    const events: OutboxEventRecord[] = [];
    for (let after = 0; ; ) {
      const page = await tx.outbox.listAfter(run.siteId, after, 500);
      events.push(...page);
      if (page.length < 500) break;
      after = page.at(-1)!.id;
    }
    const out: SubscriptionFacts[] = [];
    for (const id of run.ids) {
      const subscription = (await tx.subscriptions.findById(run.siteId, id))!;
      const attempts = new Map<string, PaymentAttemptRecord>();
      // Renewal keys name the period, dunning keys the period and the retry: enumerate them all.
      for (let k = 0; k <= subscription.periodIndex + 1; k++) {
        for (const key of [
          `renewal:${id}:${k}`,
          ...Array.from({ length: DUNNING.retryCount + 1 }, (_, n) => `dunning:${id}:${k}:${n + 1}`),
        ]) {
          const attempt = await tx.payments.findByKey(run.siteId, key);
          if (attempt) attempts.set(key, attempt);
        }
      }
      out.push({
        id,
        state: subscription.state,
        periodIndex: subscription.periodIndex,
        canceledAt: subscription.canceledAt,
        signupPaymentId: subscription.signupPaymentId,
        balance: await tx.ledger.balance(run.siteId, id),
        lines: await tx.ledger.listForSubscription(run.siteId, id),
        attempts,
        events: events.filter((e) => e.subjectType === 'subscription' && e.subjectId === id),
      });
    }
    return out;
  });
}

/** The subscription a gateway key charges for (signup keys name none). */
function subscriptionOfKey(key: string): number | undefined {
  const match = /^(?:renewal|dunning|charge|allocation|migration):(\d+):/.exec(key);
  return match ? Number(match[1]) : undefined;
}

/** Lines that a renewal or signup assessed (charges and coupon adjustments of a period), comparable across runs. */
function periodLines(lines: readonly TransactionRecord[], upTo: number): string[] {
  return lines
    .filter((l) => (l.type === 'charge' || l.type === 'adjustment') && l.periodIndex !== null && l.periodIndex <= upTo)
    .map((l) => `${l.periodIndex}|${l.type}|${l.kind}|${l.componentId === null ? '' : 'c'}|${l.amountInCents}`)
    .sort();
}

/**
 * The state path the engine's rules give a subscription, from its payment attempts: a trial ends
 * active at its first renewal; a declined renewal makes it past due and an erroring one a soft
 * failure; a dunning retry that collects makes it active again; when the last of `retryCount`
 * retries fails, dunning cancels it. Checks along the way that each retry exists, comes
 * `retryIntervalHours` after the failure before it, and that nothing is tried after a success.
 */
function expectedPath(
  f: SubscriptionFacts,
  trial: boolean,
  openedByMigration: ReadonlySet<number>,
): { path: string[]; exhaustedAt: number | undefined } {
  const path: string[] = [trial ? 'trialing' : 'active'];
  const attempt = (key: string) => f.attempts.get(key);
  // A trial's end is period 0's renewal (the trial re-anchors the subscription); others renew from 1.
  for (let k = trial ? 0 : 1; k <= f.periodIndex; k++) {
    if (path.at(-1) === 'trialing') path.push('active');
    // A migration that resets the period opened this one, paid at once: no renewal.
    if (openedByMigration.has(k)) continue;
    const renewal = attempt(`renewal:${f.id}:${k}`);
    expect(renewal, `renewal ${k} of ${f.id}`).toBeDefined();
    if (renewal!.status === 'succeeded') {
      expect(attempt(`dunning:${f.id}:${k}:1`), `no dunning after paid renewal ${k} of ${f.id}`).toBeUndefined();
      continue;
    }
    path.push(renewal!.status === 'declined' ? 'past_due' : 'soft_failure');
    let before = renewal!;
    for (let n = 1; n <= DUNNING.retryCount; n++) {
      const retry = attempt(`dunning:${f.id}:${k}:${n}`);
      expect(retry, `dunning ${k}:${n} of ${f.id}`).toBeDefined();
      expect(retry!.createdAt.getTime(), `dunning ${k}:${n} of ${f.id} is due a day after the failure`).toBe(
        before.updatedAt.getTime() + DUNNING.retryIntervalHours * HOUR,
      );
      if (retry!.status === 'succeeded') {
        path.push('active');
        expect(attempt(`dunning:${f.id}:${k}:${n + 1}`)).toBeUndefined();
        break;
      }
      before = retry!;
      if (n === DUNNING.retryCount) {
        path.push('cancelled');
        expect(f.canceledAt?.getTime(), `dunning cancels ${f.id} at its last failed retry`).toBe(
          retry!.updatedAt.getTime(),
        );
        return { path, exhaustedAt: k };
      }
    }
  }
  return { path, exhaustedAt: undefined };
}

// ---------------------------------------------------------------------------------------------

/** A book billed for six months through a gateway that fails a quarter of its calls, on one adapter. */
export function gatewayFaultsSuite(harness: StorageHarness, kind: FaultyGatewayKind = testGatewayKind): void {
  const title = kind === testGatewayKind ? harness.name : `${harness.name}, ${kind.name}`;
  describe(`gateway faults (${title})`, () => {
    it('bills every period once, takes no money twice and records every lost answer exactly once', async () => {
      const control = await runBook(createMemoryStorage(), undefined, kind);
      const storage = await harness.create();
      let faultedGateway: FaultyGateway | undefined;
      try {
        const run = await runBook(storage, FAULTS, kind);
        const gateway = run.gateway;
        faultedGateway = gateway;
        gateway.expectSound?.();
        const [faulted, expected] = [await facts(run), await facts(control)];

        // The faults really happened, in the proportion asked, on every path worth testing.
        const faults = gateway.faults;
        const errors = faults.filter((f) => f.outcome === 'error');
        const unknown = faults.filter((f) => f.outcome === 'unknown');
        const lookups = faults.filter((f) => f.outcome === 'lookup');
        const failedCalls = errors.length + unknown.length;
        const faultable = gateway.calls
          .slice(0, run.callsWithFaults)
          .filter((c) => FAULTS.keyPrefixes!.some((p) => c.idempotencyKey.startsWith(p)));
        const share = failedCalls / faultable.length;
        const kinds = (list: typeof faults, prefix: string, charged?: boolean) =>
          list.filter((f) => f.idempotencyKey.startsWith(prefix) && (charged === undefined || f.charged === charged))
            .length;
        const figures = {
          chargeCalls: gateway.chargeCalls,
          callsWhileFaulty: faultable.length,
          failed: failedCalls,
          errors: errors.length,
          unknownCharged: unknown.filter((f) => f.charged).length,
          unknownNotCharged: unknown.filter((f) => !f.charged).length,
          lookupFailures: lookups.length,
          oneTime: {
            intents: run.intents.length,
            calls: run.intents.reduce((n, i) => n + i.calls, 0),
            ...run.merchant,
            unknownCharged: kinds(unknown, 'charge:', true),
            unknownNotCharged: kinds(unknown, 'charge:', false),
          },
          commands: {
            allocationFaults: kinds(errors, 'allocation:') + kinds(unknown, 'allocation:'),
            migrationFaults: kinds(errors, 'migration:') + kinds(unknown, 'migration:'),
            migrationsRetried: run.merchant.migrationsRetried,
            allocationPayments: run.merchant.allocationPayments,
          },
          renewalUnknown: kinds(unknown, 'renewal:'),
          dunningUnknown: kinds(unknown, 'dunning:'),
        };
        console.log(`[gateway faults ${title}] ${JSON.stringify(figures)}`);
        expect(share).toBeGreaterThan(0.15);
        expect(share).toBeLessThan(0.35);
        for (const prefix of ['renewal:', 'charge:']) {
          expect(kinds(errors, prefix), `errors on ${prefix}`).toBeGreaterThan(0);
          expect(kinds(unknown, prefix, true), `lost answers that took money on ${prefix}`).toBeGreaterThan(0);
          expect(kinds(unknown, prefix, false), `lost answers that took nothing on ${prefix}`).toBeGreaterThan(0);
        }
        expect(kinds(lookups, 'charge:'), 'lookups without an answer on one-time charges').toBeGreaterThan(0);
        expect(kinds(lookups, 'renewal:'), 'lookups without an answer on renewals').toBeGreaterThan(0);
        expect(run.merchant.pendingAnswers, 'one-time charges whose answer stayed unknown').toBeGreaterThan(0);
        // Mid-period allocations and migrations met the faults too: lost migration charges were
        // refunded and the migration sent again; lost allocation payments were reconciled.
        expect(run.merchant.migrationsRetried, 'migrations sent again after a lost answer').toBeGreaterThan(0);
        expect(run.merchant.allocationPayments.unknown, 'allocation payments whose answer was lost').toBeGreaterThan(0);
        expect(run.merchant.reconciledFailures, 'one-time charges reconciled as failed').toBeGreaterThan(0);

        // No attempt is left open, and each attempt says what the gateway did with its key.
        const unresolved = await storage.transaction((tx) => tx.payments.listUnresolved(new Date(END + DAY), 1000));
        expect(unresolved).toEqual([]);
        const keys = new Set(gateway.calls.map((c) => c.idempotencyKey));
        /** Lost migration charges refunded by their reconciliation (the ledger rightly has no line). */
        const refundedUncommitted = new Set<string>();
        const allLines = faulted.flatMap((f) => f.lines);
        const paymentsByGatewayId = new Map<string, TransactionRecord[]>();
        for (const line of allLines) {
          if (line.type !== 'payment' || line.gatewayTransactionId === null) continue;
          paymentsByGatewayId.set(line.gatewayTransactionId, [
            ...(paymentsByGatewayId.get(line.gatewayTransactionId) ?? []),
            line,
          ]);
        }
        for (const key of keys) {
          const tookMoney = gateway.calls.filter((c) => c.idempotencyKey === key && c.tookMoney).length;
          expect(tookMoney, `money taken for ${key}`).toBeLessThanOrEqual(1);
          const attempt = await storage.transaction((tx) => tx.payments.findByKey(run.siteId, key));
          expect(attempt, key).toBeDefined();
          const charge = gateway.charges.get(key);
          if (charge === undefined) {
            expect(['failed', 'declined'], `${key} took nothing`).toContain(attempt!.status);
            expect(attempt!.gatewayTransactionId).toBeNull();
            continue;
          }
          if (key.startsWith('migration:') && !paymentsByGatewayId.has(charge.transactionId)) {
            // A migration whose answer was lost did not happen: its reconciliation found the
            // charge and gave it back in full, and the attempt says so.
            expect(gateway.refunds.get(charge.transactionId), `refund of ${key}`).toBe(charge.amountInCents);
            expect(attempt).toMatchObject({ status: 'failed', gatewayTransactionId: charge.transactionId });
            refundedUncommitted.add(key);
            continue;
          }
          // Money the ledger records as paid is never given back behind its back.
          expect(gateway.refunds.get(charge.transactionId), `refund of ${key}`).toBeUndefined();
          expect(attempt).toMatchObject({
            status: 'succeeded',
            gatewayTransactionId: charge.transactionId,
            amountInCents: charge.amountInCents,
          });
          const recorded = paymentsByGatewayId.get(charge.transactionId) ?? [];
          expect(recorded, `payment lines for ${key}`).toHaveLength(1);
          expect(recorded[0]).toMatchObject({ id: attempt!.transactionId, amountInCents: charge.amountInCents });
          const owner = subscriptionOfKey(key);
          if (owner !== undefined) expect(recorded[0]!.subscriptionId).toBe(owner);
        }
        // Every gateway payment in the ledger is money the gateway took (none invented).
        expect(paymentsByGatewayId.size).toBe(gateway.charges.size - refundedUncommitted.size);

        // Every migration and allocation was applied exactly once (none refused: no command entry
        // is canceled), its money kept once: one payment line per migration, kept under one key
        // (the keys of attempts whose answer was lost were refunded), one allocation per command.
        for (const c of run.commands) {
          const f = faulted[c.entry]!;
          const label = `${c.kind} of entry ${c.entry} (subscription ${f.id})`;
          expect(c.state, label).toBe('done');
          const keysOf = [...gateway.charges.keys()].filter((key) => key.startsWith(`${c.kind}:${f.id}:`));
          const kept = keysOf.filter((key) => !refundedUncommitted.has(key));
          if (c.kind === 'migration') {
            expect(kept, `${label}: keys that kept money`).toHaveLength(1);
            const paid = f.lines.filter((l) => l.type === 'payment' && l.memo === 'Payment for migration');
            expect(
              paid.map((l) => l.gatewayTransactionId),
              label,
            ).toEqual([gateway.charges.get(kept[0]!)!.transactionId]);
            const migrated = (await run.engine.site('faults').subscriptions.get(f.id)).product.product.handle;
            expect(migrated, label).toBe('pro');
          } else {
            expect(keysOf.length, `${label}: one charge at most`).toBeLessThanOrEqual(1);
            const allocations = await run.engine.site('faults').allocations.listAllocations(f.id);
            expect(allocations.filter((a) => a.memo === `Seats for entry ${c.entry}`)).toHaveLength(1);
          }
        }

        /** How often each state appears in the book's state paths: how much dunning the faults caused. */
        const dunning: Record<string, number> = {};
        const exhausted: string[] = [];
        const retriedEntries: number[] = [];
        // The control run applied every command at its first call, its payment taken at once.
        for (const cmd of control.commands)
          expect(cmd, `control ${cmd.kind} of entry ${cmd.entry}`).toMatchObject({
            state: 'done',
            calls: 1,
            payment: 'succeeded',
          });
        expect(control.commands).toHaveLength(MIGRATIONS.size + ALLOCATIONS.size);
        for (let i = 0; i < BOOK_SIZE; i++) {
          const f = faulted[i]!;
          const c = expected[i]!;
          const label = `entry ${i} (subscription ${f.id})`;

          // The balance is the sum of the lines, and the last line's ending balance.
          const sum = f.lines.reduce((total, l) => total + balanceDelta(l.type, l.amountInCents), 0);
          expect(f.balance, label).toBe(sum);
          expect(f.lines.at(-1)!.endingBalanceInCents, label).toBe(sum);

          // Exactly one baseline charge per period, from period 0 (the signup, or a trial's end) to
          // the current one: by its signup or renewal, or by the migration that opened it. A
          // migration that kept the period dates adds its prorated charge beside the period's own.
          const baselines = f.lines.filter((l) => l.type === 'charge' && l.kind === 'baseline');
          const byMigration = baselines.filter((l) => l.memo.endsWith('(migration)')).map((l) => l.periodIndex!);
          const byRenewal = baselines.filter((l) => !l.memo.endsWith('(migration)')).map((l) => l.periodIndex!);
          const openedByMigration = new Set(byMigration.filter((k) => !byRenewal.includes(k)));
          expect(byMigration.length, label).toBe(MIGRATIONS.has(i) ? 1 : 0);
          expect(
            [...byRenewal, ...openedByMigration].sort((a, b) => a - b),
            label,
          ).toEqual(Array.from({ length: f.periodIndex + 1 }, (_, n) => n));

          // Dunning and declines follow the rules, judged from the attempts; one renewal event per period.
          const { path, exhaustedAt } = expectedPath(f, isTeam(i), openedByMigration);
          for (const state of path) dunning[state] = (dunning[state] ?? 0) + 1;
          if (exhaustedAt !== undefined) exhausted.push(`entry ${i} at period ${exhaustedAt}`);
          const changes = f.events.filter((e) => e.key === 'subscription_state_change');
          const actual = [
            isTeam(i) ? 'trialing' : 'active',
            ...changes.map((e) => (e.payload.subscription as { state: string }).state),
          ];
          expect(actual, label).toEqual(path);
          expect(f.state, label).toBe(path.at(-1));
          const renewalEvents = f.events.filter((e) => e.key === 'renewal_success' || e.key === 'renewal_failure');
          const failedRenewals = [...f.attempts]
            .filter(([key, a]) => key.startsWith('renewal:') && a.status !== 'succeeded')
            .map(([key]) => key);
          expect(
            renewalEvents.filter((e) => e.key === 'renewal_failure'),
            label,
          ).toHaveLength(failedRenewals.length);
          expect(renewalEvents, label).toHaveLength(
            (isTeam(i) ? f.periodIndex + 1 : f.periodIndex) - openedByMigration.size,
          );

          // A command the script had to send again (its migration's payment failed or was lost, or
          // it was refused while a payment was unsettled) ran later than in the control run, so
          // it was rightly priced at another instant; the control comparisons skip that entry.
          const retried = run.commands.some((cmd) => cmd.entry === i && cmd.calls > 1);
          if (retried) retriedEntries.push(i);

          // Faults change nothing about what each period costs: the same lines as the control run.
          if (exhaustedAt === undefined && !retried) {
            expect(f.periodIndex, label).toBe(c.periodIndex);
          } else {
            expect(f.periodIndex, label).toBeLessThanOrEqual(c.periodIndex);
          }
          if (!retried) expect(periodLines(f.lines, f.periodIndex), label).toEqual(periodLines(c.lines, f.periodIndex));

          // Money: what the gateway kept for this subscription (took, less the lost migration
          // charges it gave back) is what the ledger records as paid, which is what was charged
          // less what is still owed.
          const ledgerPaid = f.lines
            .filter((l) => l.type === 'payment' && l.gatewayTransactionId !== null)
            .reduce((n, l) => n + l.amountInCents, 0);
          const signupLine = f.lines.find((l) => l.id === f.signupPaymentId);
          const gatewayTook =
            [...gateway.charges]
              .filter(([key]) => subscriptionOfKey(key) === f.id)
              .reduce(
                (n, [, charge]) => n + charge.amountInCents - (gateway.refunds.get(charge.transactionId) ?? 0),
                0,
              ) + (signupLine?.amountInCents ?? 0);
          expect(ledgerPaid, label).toBe(gatewayTook);
          const owed = f.lines
            .filter((l) => l.type === 'charge' || l.type === 'adjustment' || l.type === 'credit')
            .reduce((n, l) => n + l.amountInCents, 0);
          expect(gatewayTook, label).toBe(owed - f.balance);
          if (f.state !== 'cancelled') expect(f.balance, label).toBe(0);

          // One-time charges: each the merchant meant is charged and paid exactly once; the
          // gateway took exactly their sum for this subscription's charge keys.
          // The engine refuses a charge only on a subscription that dunning canceled.
          if (run.intents.some((n) => n.entry === i && n.state === 'refused')) expect(f.state, label).toBe('cancelled');
          const intents = run.intents.filter((n) => n.entry === i && n.state !== 'refused');
          for (const intent of intents) {
            expect(intent.state, intent.memo).toBe('done');
            expect(f.lines.filter((l) => l.type === 'charge' && l.memo === intent.memo)).toHaveLength(1);
            const paid = f.lines.filter((l) => l.type === 'payment' && l.memo === `Payment for: ${intent.memo}`);
            expect(
              paid.map((l) => l.amountInCents),
              intent.memo,
            ).toEqual([intent.amountInCents]);
            expect(f.lines.filter((l) => l.type === 'info' && l.memo.endsWith(`(${intent.memo})`))).toHaveLength(
              intent.failures,
            );
          }
          const tookForCharges = [...gateway.charges]
            .filter(([key]) => key.startsWith(`charge:${f.id}:`))
            .reduce((n, [, charge]) => n + charge.amountInCents, 0);
          expect(tookForCharges, label).toBe(intents.reduce((n, intent) => n + intent.amountInCents, 0));
          if (exhaustedAt === undefined && c.state !== 'cancelled' && !retried) {
            // Same money as without faults, to the cent.
            const controlTook =
              [...control.gateway.charges]
                .filter(([key]) => subscriptionOfKey(key) === c.id)
                .reduce((n, [, charge]) => n + charge.amountInCents, 0) +
              (c.lines.find((l) => l.id === c.signupPaymentId)?.amountInCents ?? 0);
            expect(gatewayTook, label).toBe(controlTook);
          }
        }

        console.log(
          `[gateway faults ${title}] state paths ${JSON.stringify(dunning)}; dunning canceled ${exhausted}; ` +
            `commands retried on entries ${retriedEntries.join(', ') || 'none'}`,
        );
        // Most commands went through at once, so the control comparisons still cover them.
        expect(retriedEntries.length).toBeLessThan(run.commands.length / 2);
        // Errors sent renewals into soft failure, and dunning brought them back.
        expect(dunning.soft_failure ?? 0).toBeGreaterThan(1);
        expect(dunning.past_due).toBeGreaterThanOrEqual(2);

        // The two declining customers: one cured by dunning, one canceled by it, as in the control.
        expect(expected[DECLINED_ONCE]!.state).toBe('active');
        expect(expected[DECLINED_FOR_GOOD]!.state).toBe('cancelled');
        expect(expected[DECLINED_FOR_GOOD]!.periodIndex).toBe(3);
        expect(faulted[DECLINED_FOR_GOOD]!.state).toBe('cancelled');
        expect(faulted[DECLINED_ONCE]!.attempts.get(`renewal:${faulted[DECLINED_ONCE]!.id}:2`)?.status).toBe(
          'declined',
        );
      } finally {
        await (harness.destroy ? harness.destroy(storage) : storage.close());
        await control.storage.close();
        await faultedGateway?.close?.();
        await control.gateway.close?.();
      }
    }, 900_000);

    // The signup cases below drive the test gateway's own hooks; they run once per storage.
    if (kind !== testGatewayKind) return;

    // A signup's payment has no subscription to settle against until the signup is written, so a
    // lost answer is looked up at once, and what stays unknown (or a process that died between the
    // charge and the write) is reconciled an hour later by key: money taken is refunded, never kept
    // without a subscription and never charged twice.
    describe('signups whose charge answer is lost', () => {
      const signupWorld = async (
        gateway: TestGateway | PaymentGateway,
        wrap: (storage: Storage) => Storage = (x) => x,
      ) => {
        const storage = await harness.create();
        const clock = new ManualClock(START);
        const engine = createBillingEngine({ storage: wrap(storage), clock, gateway });
        await engine.sites.create({ subdomain: 'signup', currency: 'USD' });
        const site = engine.site('signup');
        const family = await site.catalog.createFamily({ name: 'Plans' });
        await site.catalog.createProduct(family.id, {
          name: 'Basic',
          handle: 'basic',
          priceInCents: 1900,
          interval: 1,
          intervalUnit: 'month',
        });
        const input = {
          productHandle: 'basic',
          customer: { firstName: 'Lost', lastName: 'Answer', email: 'lost@example.com' },
          creditCard: VISA,
        };
        const settle = async () => {
          for (let hour = 1; hour <= 3; hour++) {
            clock.advance({ hours: 1 });
            await engine.runDue();
          }
        };
        const signupAttempts = () =>
          storage.transaction(async (tx) => {
            const found: PaymentAttemptRecord[] = [];
            for (const key of gatewayKeys) {
              const attempt = await tx.payments.findByKey((await tx.sites.findBySubdomain('signup'))!.id, key);
              if (attempt) found.push(attempt);
            }
            return found;
          });
        const gatewayKeys: string[] = [];
        const close = () => (harness.destroy ? harness.destroy(storage) : storage.close());
        return { storage, clock, engine, site, input, settle, signupAttempts, gatewayKeys, close };
      };
      const paymentsRecorded = async (site: ReturnType<BillingEngine['site']>) =>
        (await site.ledger.transactions({ types: ['payment'], perPage: 200 })).reduce((n, l) => n + l.amountInCents, 0);
      const keptBy = (gateway: TestGateway) =>
        [...gateway.charges]
          .filter(([key]) => key.startsWith('signup:'))
          .reduce((n, [, c]) => n + c.amountInCents - (gateway.refunds.get(c.transactionId) ?? 0), 0);

      it('completes the signup when a lookup finds the lost charge taken: one subscription, charged once', async () => {
        const gateway = createTestGateway();
        const w = await signupWorld(gateway);
        try {
          gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'signup:', charged: true });
          const created = await w.site.subscriptions.create(w.input);
          expect(created.subscription.state).toBe('active');
          await w.settle();
          const unresolved = await w.storage.transaction((tx) => tx.payments.listUnresolved(w.clock.now(), 100));
          expect(unresolved).toEqual([]);
          expect(gateway.charges.size).toBe(1);
          expect(keptBy(gateway)).toBe(1900);
          expect(await paymentsRecorded(w.site)).toBe(1900);
        } finally {
          await w.close();
        }
      });

      it('refunds, an hour later, a charge taken for a signup the customer was told failed; the retry is charged once', async () => {
        const gateway = createTestGateway();
        // The first lookup goes unanswered too, so the signup fails with the outcome unknown.
        const flaky = firstLookupsUnanswered(gateway, 1);
        const w = await signupWorld(flaky);
        try {
          gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'signup:', charged: true });
          const refused = await w.site.subscriptions.create(w.input).catch((error: unknown) => error);
          expect(refused).toBeInstanceOf(BillingError);
          expect((refused as BillingError).code).toBe('gateway_error');
          // The merchant tries again, as any client would.
          await w.site.subscriptions.create(w.input);
          expect(gateway.charges.size).toBe(2);
          await w.settle();
          const unresolved = await w.storage.transaction((tx) => tx.payments.listUnresolved(w.clock.now(), 100));
          expect(unresolved).toEqual([]);
          // The first charge was given back in full; the customer paid once.
          expect(gateway.refunds.size).toBe(1);
          expect(keptBy(gateway)).toBe(1900);
          expect(await paymentsRecorded(w.site)).toBe(1900);
          expect((await w.site.subscriptions.list({})).length).toBe(1);
          // Reconciling again changes nothing.
          await w.settle();
          expect(gateway.refunds.size).toBe(1);
        } finally {
          await w.close();
        }
      });

      it('refunds a migration charge whose answer stayed unknown; the subscription keeps its product, and a retry after the refund is charged once', async () => {
        const gateway = createTestGateway();
        const flaky = firstLookupsUnanswered(gateway, 1);
        const w = await signupWorld(flaky);
        try {
          const family = (await w.site.catalog.listFamilies())[0]!;
          await w.site.catalog.createProduct(family.id, {
            name: 'Pro',
            handle: 'pro',
            priceInCents: 4900,
            interval: 1,
            intervalUnit: 'month',
          });
          const { subscription } = await w.site.subscriptions.create(w.input);
          w.clock.advance({ days: 10 });
          gateway.injectFailure({ outcome: 'unknown', keyPrefix: 'migration:', charged: true });
          const refused = await w.site.subscriptions
            .migrate(subscription.id, { productHandle: 'pro' })
            .catch((error: unknown) => error);
          expect((refused as BillingError).code).toBe('gateway_error');
          expect((await w.site.subscriptions.get(subscription.id)).product.product.handle).toBe('basic');
          // While the lost charge is unsettled, a retry is refused before the gateway: it cannot
          // take the money a second time.
          const calls = gateway.chargeCalls;
          const early = await w.site.subscriptions
            .migrate(subscription.id, { productHandle: 'pro' })
            .catch((error: unknown) => error);
          expect((early as BillingError).code).toBe('conflict');
          expect(gateway.chargeCalls).toBe(calls);
          // The reconciliation refunds it and frees the subscription; the retry is charged once.
          await w.settle();
          const migrated = await w.site.subscriptions.migrate(subscription.id, { productHandle: 'pro' });
          expect(migrated.product.product.handle).toBe('pro');
          await w.settle();
          const unresolved = await w.storage.transaction((tx) => tx.payments.listUnresolved(w.clock.now(), 100));
          expect(unresolved).toEqual([]);
          const migrationCharges = [...gateway.charges].filter(([key]) => key.startsWith('migration:'));
          expect(migrationCharges).toHaveLength(2);
          // The lost one was refunded in full, the retry kept: what the gateway keeps is what the ledger shows.
          const kept = migrationCharges.reduce(
            (n, [, c]) => n + c.amountInCents - (gateway.refunds.get(c.transactionId) ?? 0),
            0,
          );
          expect(gateway.refunds.size).toBe(1);
          expect(kept).toBe(migrationCharges[1]![1].amountInCents);
          expect(await paymentsRecorded(w.site)).toBe(1900 + kept);
        } finally {
          await w.close();
        }
      });

      it('settles an attempt left pending by a process that died mid-signup: refunded if taken, failed if the gateway never saw it', async () => {
        const gateway = createTestGateway();
        let calls = 0;
        let dead = false;
        // The process "dies" during its first charge after the gateway took the money, and during
        // its second before the gateway saw it: from then on nothing it does reaches the database
        // or the gateway, so each attempt stays pending with its reconciliation row.
        const dying: PaymentGateway = Object.assign(Object.create(gateway) as TestGateway, {
          charge: async (request: Parameters<TestGateway['charge']>[0]) => {
            calls += 1;
            if (calls === 1) await gateway.charge(request);
            dead = true;
            throw new ProcessDied();
          },
          lookup: async (key: string) => {
            if (dead) throw new ProcessDied();
            return gateway.lookup(key);
          },
        });
        const mortal = (storage: Storage): Storage =>
          Object.assign(Object.create(storage) as Storage, {
            transaction: ((
              work: Parameters<Storage['transaction']>[0],
              options?: Parameters<Storage['transaction']>[1],
            ) =>
              dead ? Promise.reject(new ProcessDied()) : storage.transaction(work, options)) as Storage['transaction'],
          });
        const w = await signupWorld(dying, mortal);
        try {
          for (let i = 0; i < 2; i++) {
            await expect(w.site.subscriptions.create(w.input)).rejects.toBeInstanceOf(ProcessDied);
            dead = false; // the restarted process
          }
          const pending = await w.storage.transaction((tx) =>
            tx.payments.listUnresolved(new Date(w.clock.now().getTime() + 1), 100),
          );
          expect(pending.map((a) => a.status)).toEqual(['pending', 'pending']);
          await w.settle();
          const unresolved = await w.storage.transaction((tx) => tx.payments.listUnresolved(w.clock.now(), 100));
          expect(unresolved).toEqual([]);
          expect(gateway.charges.size).toBe(1);
          expect(gateway.refunds.size).toBe(1);
          expect(keptBy(gateway)).toBe(0);
          expect(await paymentsRecorded(w.site)).toBe(0);
          expect((await w.site.subscriptions.list({})).length).toBe(0);
        } finally {
          await w.close();
        }
      });
    });
  });
}

/** What a killed process would leave: the gateway call never returns an answer to the engine. */
class ProcessDied extends Error {}

/** `gateway`, except that its first `count` lookups time out. */
function firstLookupsUnanswered(gateway: TestGateway, count: number): PaymentGateway {
  let left = count;
  return Object.assign(Object.create(gateway) as TestGateway, {
    lookup: async (key: string) => {
      if (left-- > 0) throw new Error('lookup timed out');
      return gateway.lookup(key);
    },
  });
}
