import { randomUUID } from 'node:crypto';
import { LIVE_STATES, nextState, transition } from '../domain/subscription/state-machine.js';
import { toWallClock } from '../domain/time/index.js';
import { BillingError, invalid } from '../errors.js';
import {
  type ChargeVault,
  type CollectionStart,
  collect,
  gatewayConcurrency,
  isOpenAttempt,
  NOT_SEEN_BY_GATEWAY,
  openRenewalAmount,
  type PendingCharge,
  reconcileByKey,
  renewalAttemptKey,
} from '../payments/collect.js';
import type { ChargeResult, PaymentGateway } from '../ports/gateway.js';
import type {
  DueWorkKind,
  DueWorkRecord,
  PaymentAttemptRecord,
  ProductTerms,
  SiteRecord,
  SubscriptionRecord,
  SubscriptionState,
} from '../ports/storage.js';
import {
  ADVANCE_INVOICE_KEY,
  renewalLines,
  voidAdvanceInvoiceOnClose,
  withoutAdvanceInvoice,
} from './advance-invoice-service.js';
import { CommandBatcher, type CommandContext } from './command-runner.js';
import {
  type DelayedStart,
  PENDING_START_KEY,
  planDelayedStart,
  readStoredStart,
  startFields,
  startLines,
  storedStart,
  withoutStoredStart,
} from './delayed-signup.js';
import {
  type CancellationMethod,
  cancelNow,
  recordStateChange,
  resumeInCommand,
  settleIfPaid,
} from './lifecycle-service.js';
import { pendingAttempt, scheduleReconciliation } from './payment-runner.js';
import { assessNextPeriod, couponDataAfter } from './period-assessment.js';
import { collectableAmount, collectableBalance, collectsAutomatically, post } from './posting.js';
import { SUBSCRIPTION_WORK, scheduleExpiringCardScan, scheduleRenewalAt } from './renewal-schedule.js';
import { line, maskedProfile, recordPayment, type SubscriptionDeps } from './subscription-service.js';

// Where a renewal's coupons are chosen and counted; re-exported for the commands that share them.
export { couponDataAfter, renewalCoupons } from './period-assessment.js';

/** Options of {@link RenewalService.runDue}. */
export interface RunDueOptions {
  /** Process work due at or before this instant; default the clock's now. */
  readonly until?: Date;
  /** Stop after this many items (default: no limit). */
  readonly limit?: number;
  /** Items claimed per batch; memory use is bounded by it, not by how much is due. */
  readonly batchSize?: number;
  /**
   * At most this many charges at the gateway at once (default 32, lowered to the gateway's
   * `maxConcurrentCharges` when it declares one). Up to twice as many items are in progress, so
   * that an item commits its outcome while the next one's charge is out. Each subscription's work
   * still runs one item at a time, in due order.
   */
  readonly concurrency?: number;
  /** Only this site's work. */
  readonly siteId?: number;
  /** Only this subject's work (with `siteId`). */
  readonly subjectId?: number;
  /** Called after each item with the counts so far (a copy), e.g. to draw a progress bar. */
  readonly onProgress?: (soFar: RunDueSummary) => void;
}

/** What a `runDue` call did. `processed` counts every item; the others say what came of them. */
export interface RunDueSummary {
  readonly processed: number;
  /** Renewal and trial-end notices recorded. */
  readonly notices: number;
  /** Expiring-card scans run (each records `expiring_card` for the cards expiring next month). */
  readonly scans: number;
  /** Renewals into a new period (paid, or covered by credit). */
  readonly renewed: number;
  /** Dunning retries that collected the balance; a retry is not a renewal. */
  readonly recovered: number;
  readonly declined: number;
  readonly failed: number;
  readonly errors: number;
}

/** A run that did nothing: the start of a sum of runs. */
export const NO_DUE_WORK: RunDueSummary = Object.freeze({
  processed: 0,
  notices: 0,
  scans: 0,
  renewed: 0,
  recovered: 0,
  declined: 0,
  failed: 0,
  errors: 0,
});

/** The counts of two runs together (for example of several workers: `runs.reduce(addRunDueSummaries, NO_DUE_WORK)`). */
export function addRunDueSummaries(a: RunDueSummary, b: RunDueSummary): RunDueSummary {
  return {
    processed: a.processed + b.processed,
    notices: a.notices + b.notices,
    scans: a.scans + b.scans,
    renewed: a.renewed + b.renewed,
    recovered: a.recovered + b.recovered,
    declined: a.declined + b.declined,
    failed: a.failed + b.failed,
    errors: a.errors + b.errors,
  };
}

/** Collaborators of {@link RenewalService}. */
export interface RenewalServiceOptions {
  /** Settles a payment attempt left open by a one-time charge or refund (`reconcile_payment` rows). */
  readonly reconcile?: (
    work: Pick<DueWorkRecord, 'siteId' | 'payload'>,
  ) => Promise<'succeeded' | 'failed' | 'unknown' | 'settled'>;
}

type Outcome = 'renewed' | 'recovered' | 'declined' | 'failed' | 'skipped' | 'pending' | 'notice' | 'scan';

/** States whose subscriptions renew at the end of their period. */
const RENEWING: readonly SubscriptionState[] = ['active', 'trialing', 'past_due', 'soft_failure', 'unpaid'];

/** States in dunning: a retry collects the balance. */
const DUNNING: readonly SubscriptionState[] = ['past_due', 'soft_failure'];

/** The kinds of due work this service runs. */
const HANDLED_KINDS: DueWorkKind[] = [
  'renewal',
  'auto_resume',
  'dunning_retry',
  'notice',
  'reconcile_payment',
  'expiring_card_scan',
  'delayed_signup',
  'expiration',
];

/** How long a claim holds; a live worker extends the leases of what it holds well before they lapse. */
const LEASE_MS = 5 * 60_000;

/** A worker extends its leases once less than this is left of them. */
const LEASE_RENEW_MARGIN_MS = LEASE_MS / 2;

/** How often (real time) a worker looks at its leases while items are in flight, however slow the gateway. */
const LEASE_HEARTBEAT_MS = 30_000;

/** Items in progress per gateway charge slot of a run (see `#runUntil`). */
const ITEMS_PER_CHARGE_SLOT = 2;

/**
 * `gateway` with at most `limit` of its `charge` calls in flight; every other member is the
 * gateway's own (bound to it, so a gateway with private fields works unchanged).
 */
function limitCharges(gateway: PaymentGateway, limit: number): PaymentGateway {
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const charge: PaymentGateway['charge'] = async (...args) => {
    if (inFlight >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else inFlight += 1;
    try {
      return await gateway.charge(...args);
    } finally {
      // The slot passes straight to the next waiter (inFlight unchanged), or is freed.
      const next = waiting.shift();
      if (next !== undefined) next();
      else inFlight -= 1;
    }
  };
  return new Proxy(gateway, {
    get(target, property) {
      if (property === 'charge') return charge;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Charges in flight by default: gateway latency, not storage, bounds a renewal run (issue 18). */
export const DEFAULT_RUN_DUE_CONCURRENCY = 32;

/** How long after an unanswered charge it is looked at again (by key, never re-charged blindly). */
const UNKNOWN_RETRY_MS = 60 * 60_000;

/**
 * The plan type of the `reconcile_payment` row of a due item's attempt, scheduled with the attempt
 * and canceled when its outcome is committed: it settles an attempt still open (a lost answer, or
 * a worker that died after the gateway call) by key once the item's own row no longer comes back
 * (a command canceled it).
 */
const DUE_PAYMENT_PLAN = 'due_payment';

/** A due item's attempt, as its `reconcile_payment` row carries it. */
interface DuePaymentPlan {
  readonly type: typeof DUE_PAYMENT_PLAN;
  /** The attempt's idempotency key. */
  readonly key: string;
  /** The unique key of the due-work row (renewal, dunning retry, delayed signup) that made the attempt. */
  readonly workKey: string;
}

function parseDuePaymentPlan(payload: Readonly<Record<string, unknown>>): DuePaymentPlan | undefined {
  const { type, key, workKey } = payload;
  if (type !== DUE_PAYMENT_PLAN || typeof key !== 'string' || typeof workKey !== 'string') return undefined;
  return { type, key, workKey };
}

/**
 * The idempotency scope that makes the settling of a due item's attempt without its row exclusive:
 * claimed and released in the settling transaction, so of two such transactions (a worker whose
 * row was canceled under it, the attempt's reconciliation) the second waits for the first on
 * Postgres and then finds the attempt settled. Nothing of it outlives the transaction.
 */
const SETTLEMENT_SCOPE = 'due_payment_settlement';

/** What committing an answer without the item's row did. */
type OrphanSettlement = 'succeeded' | 'declined' | 'failed' | 'unknown' | 'settled';

/**
 * Due work: claims what is due in time order and processes each item in its own transactions.
 * Each item happens at its due instant (its ledger lines and events carry that instant), so one
 * jump of the clock gives the same ledger as many small steps. Payments take three steps: the
 * attempt is committed with a deterministic key, the gateway is called outside any transaction,
 * and the outcome is committed; an item interrupted between the steps resumes from the attempt.
 */
export class RenewalService {
  readonly #deps: SubscriptionDeps;
  readonly #owner = `worker-${randomUUID()}`;
  readonly #reconcile: RenewalServiceOptions['reconcile'];
  /** Every step of due work commits through it: many items' steps share one transaction (issue 18). */
  readonly #batcher: CommandBatcher;

  constructor(deps: SubscriptionDeps, options: RenewalServiceOptions = {}) {
    this.#deps = deps;
    this.#reconcile = options.reconcile;
    this.#batcher = new CommandBatcher(deps);
  }

  /**
   * Processes everything due up to `until`; running it again does nothing more. Billing ahead of
   * the clock is for test sites only: a live site's work runs up to the clock's now at most (asking
   * for a live site by `siteId` with a later `until` is refused), while test sites run to `until`.
   */
  async runDue(options: RunDueOptions = {}): Promise<RunDueSummary> {
    const now = this.#deps.clock.now();
    if (options.until === undefined || options.until.getTime() <= now.getTime()) return this.#runUntil(options);
    const sites = await this.#deps.storage.transaction((tx) => tx.sites.list());
    const named = options.siteId === undefined ? undefined : sites.find((site) => site.id === options.siteId);
    if (named?.mode === 'live') {
      throw invalid(
        `Until: may not pass the clock's now (${now.toISOString()}) on a live site; only test sites may bill ahead.`,
        'until',
      );
    }
    // Everything to now first (live and test alike, in due order), then each test site to `until`.
    let summary = await this.#runUntil({ ...options, until: now });
    for (const site of sites) {
      if (site.mode !== 'test' || (options.siteId !== undefined && site.id !== options.siteId)) continue;
      const left = options.limit === undefined ? undefined : options.limit - summary.processed;
      if (left !== undefined && left <= 0) break;
      const before = summary;
      const more = await this.#runUntil({
        ...options,
        siteId: site.id,
        ...(left === undefined ? {} : { limit: left }),
        ...(options.onProgress === undefined
          ? {}
          : { onProgress: (s) => options.onProgress!(addRunDueSummaries(before, s)) }),
      });
      summary = addRunDueSummaries(summary, more);
    }
    return summary;
  }

  /**
   * Claims batches and runs up to `concurrency` items at once. A claim hands out at most one open
   * item per subscription (the earliest), so concurrent items never belong to one subscription and
   * each subscription's work stays in due order. A lane that finds the queue empty claims again
   * after its own item has finished, so work an item schedules (the next period, a retry) is
   * found; the run ends when no lane can claim anything.
   */
  async #runUntil(options: RunDueOptions): Promise<RunDueSummary> {
    const until = options.until ?? this.#deps.clock.now();
    const batchSize = Math.max(1, options.batchSize ?? 100);
    const concurrency = this.#concurrency(options);
    // `concurrency` charges at the gateway at once, and up to twice as many items in progress: an
    // item whose answer came back commits its outcome while the next item's charge is out, so a
    // gateway slot never waits for a commit (on SQLite each is a flush to disk).
    const gateway = limitCharges(this.#deps.gateway, concurrency);
    const maxLanes = concurrency * ITEMS_PER_CHARGE_SLOT;
    const summary = { processed: 0, notices: 0, scans: 0, renewed: 0, recovered: 0, declined: 0, failed: 0, errors: 0 };
    const queue: DueWorkRecord[] = [];
    const leases = new HeldLeases();
    let claimedSoFar = 0;
    let failure: { error: unknown } | undefined;
    let lanes = 0;
    const running: Promise<void>[] = [];

    const claim = async (): Promise<number> => {
      const left = options.limit === undefined ? batchSize : Math.min(batchSize, options.limit - claimedSoFar);
      if (left <= 0) return 0;
      claimedSoFar += left;
      const now = this.#deps.clock.now();
      const leaseUntil = new Date(now.getTime() + LEASE_MS);
      let batch: DueWorkRecord[] = [];
      try {
        batch = await this.#deps.storage.transaction((tx) =>
          tx.dueWork.claim({
            until,
            limit: left,
            owner: this.#owner,
            leaseUntil,
            now,
            kinds: HANDLED_KINDS,
            ...(options.siteId === undefined ? {} : { siteId: options.siteId }),
            ...(options.subjectId === undefined ? {} : { subjectId: options.subjectId }),
          }),
        );
      } finally {
        claimedSoFar -= left - batch.length;
      }
      leases.hold(batch, leaseUntil);
      queue.push(...batch);
      // The claiming lane takes one item itself; more lanes for the rest, up to the limit.
      spawn(batch.length - 1);
      return batch.length;
    };

    const runItem = async (item: DueWorkRecord): Promise<void> => {
      summary.processed += 1;
      try {
        const outcome = await this.#process(item, until, gateway);
        if (outcome === 'renewed') summary.renewed += 1;
        else if (outcome === 'recovered') summary.recovered += 1;
        else if (outcome === 'declined') summary.declined += 1;
        else if (outcome === 'failed') summary.failed += 1;
        else if (outcome === 'notice') summary.notices += 1;
        else if (outcome === 'scan') summary.scans += 1;
      } catch (error) {
        summary.errors += 1;
        // The item stays claimed; its lease lapses and a later run retries it.
        if (!(error instanceof BillingError)) failure ??= { error };
      } finally {
        leases.drop(item);
      }
      options.onProgress?.({ ...summary });
    };

    const lane = async (): Promise<void> => {
      try {
        while (failure === undefined) {
          await this.#keepLeases(leases);
          const item = queue.shift();
          if (item !== undefined) {
            await runItem(item);
            continue;
          }
          // Claimed after this lane's own item finished, so whatever it scheduled is seen. An empty
          // claim ends the lane only if no other lane's claim filled the queue meanwhile.
          if ((await claim()) === 0 && queue.length === 0) return;
        }
      } catch (error) {
        failure ??= { error };
      } finally {
        lanes -= 1;
      }
    };

    function spawn(wanted: number): void {
      for (let n = 0; n < wanted && failure === undefined && lanes < maxLanes; n++) {
        lanes += 1;
        running.push(lane());
      }
    }

    // Wall time only wakes the check; the lease instants come from the engine's clock.
    const heartbeat = setInterval(() => {
      this.#keepLeases(leases).catch(() => {});
    }, LEASE_HEARTBEAT_MS);
    heartbeat.unref?.();
    try {
      spawn(1);
      // Lanes spawn lanes; wait until every one of them has ended.
      for (let seen = 0; seen < running.length; ) {
        const upTo = running.length;
        await Promise.all(running.slice(seen, upTo));
        seen = upTo;
      }
    } finally {
      clearInterval(heartbeat);
    }
    if (failure !== undefined) throw failure.error;
    return summary;
  }

  /** Items at once for one run: the option (default 32), capped by the gateway's own limit. */
  #concurrency(options: RunDueOptions): number {
    const asked = options.concurrency ?? DEFAULT_RUN_DUE_CONCURRENCY;
    if (!Number.isSafeInteger(asked) || asked < 1) throw invalid('Concurrency: must be a positive whole number.');
    return Math.min(asked, gatewayConcurrency(this.#deps.gateway) ?? asked);
  }

  /** Extends the leases this run holds once they come within the margin of lapsing. */
  async #keepLeases(leases: HeldLeases): Promise<void> {
    const now = this.#deps.clock.now();
    if (!leases.needsRenewal(now)) return;
    const leaseUntil = new Date(now.getTime() + LEASE_MS);
    await leases.renew(leaseUntil, (rows) =>
      this.#deps.storage.transaction((tx) => tx.dueWork.extendLeases(rows, this.#owner, leaseUntil, now)),
    );
  }

  /**
   * How many items `runDue` would find due up to `until` (default now) right now: the open rows of
   * the kinds it handles. Work the run schedules as it goes (retries, next periods) comes on top.
   */
  countDue(options: Pick<RunDueOptions, 'until' | 'siteId'> = {}): Promise<number> {
    const until = options.until ?? this.#deps.clock.now();
    return this.#deps.storage.transaction((tx) =>
      tx.dueWork.countDue({
        until,
        kinds: HANDLED_KINDS,
        ...(options.siteId === undefined ? {} : { siteId: options.siteId }),
      }),
    );
  }

  /** Runs one subscription's work that is due now (after a reactivation, resume or billing-date change). */
  runDueFor(siteId: number, subjectId: number): Promise<RunDueSummary> {
    return this.runDue({ siteId, subjectId, until: this.#deps.clock.now() });
  }

  #process(item: DueWorkRecord, until: Date, gateway: PaymentGateway): Promise<Outcome> {
    switch (item.kind) {
      case 'renewal':
        return this.#renew(item, until, gateway);
      case 'dunning_retry':
        return this.#retry(item, until, gateway);
      case 'auto_resume':
        return this.#autoResume(item);
      case 'notice':
        return this.#notice(item);
      case 'reconcile_payment':
        return this.#reconcilePayment(item);
      case 'expiring_card_scan':
        return this.#expiringCards(item);
      case 'delayed_signup':
        return this.#startDelayedSignup(item, until, gateway);
      case 'expiration':
        return this.#expireAt(item);
      default:
        return this.#at<Outcome>(item, async (ctx) => {
          await this.#complete(ctx, item);
          return 'skipped';
        });
    }
  }

  /**
   * Runs `work` as a command that happens at the item's due instant, in a transaction it may share
   * with other items' steps (never with another step of its own subscription: a lane holds one
   * item per subscription). It settles once that transaction has committed.
   */
  #at<T>(item: DueWorkRecord, work: (ctx: CommandContext) => Promise<T>): Promise<T> {
    return this.#batcher.run(item.dueAt, work);
  }

  async #complete(ctx: CommandContext, item: DueWorkRecord): Promise<void> {
    await ctx.tx.dueWork.complete(item.siteId, item.id, this.#owner, ctx.now);
  }

  /**
   * Settles a one-time charge or refund whose outcome was not known when its command ended, by
   * asking the gateway by key. Still unknown: looked at again an hour later.
   */
  async #reconcilePayment(item: DueWorkRecord): Promise<Outcome> {
    const duePayment = parseDuePaymentPlan(item.payload);
    const outcome =
      duePayment !== undefined
        ? await this.#reconcileDuePayment(item, duePayment)
        : this.#reconcile
          ? await this.#reconcile(item)
          : 'settled';
    await this.#at(item, async (ctx) => {
      if (outcome === 'unknown') {
        const retryFrom = Math.max(this.#deps.clock.now().getTime(), item.dueAt.getTime());
        await ctx.tx.dueWork.release(
          item.siteId,
          item.id,
          this.#owner,
          new Date(retryFrom + UNKNOWN_RETRY_MS),
          ctx.now,
        );
      } else {
        await this.#complete(ctx, item);
      }
    });
    return outcome === 'unknown' ? 'pending' : outcome === 'failed' ? 'failed' : 'skipped';
  }

  /**
   * Records `expiring_card` for every live subscription whose card expires next month (in the
   * site's zone), then schedules the site's next scan. Reads the site's subscriptions page by page.
   */
  #expiringCards(item: DueWorkRecord): Promise<Outcome> {
    return this.#at<Outcome>(item, async (ctx) => {
      const site = await ctx.tx.sites.findById(item.siteId);
      if (site) {
        const wall = toWallClock(ctx.now, site.timeZone);
        const year = wall.month === 12 ? wall.year + 1 : wall.year;
        const month = wall.month === 12 ? 1 : wall.month + 1;
        for (let page = 1; ; page++) {
          const rows = await ctx.tx.subscriptions.list(site.id, { states: LIVE_STATES }, { page, perPage: 200 });
          for (const subscription of rows) {
            if (subscription.paymentProfileId === null) continue;
            const profile = await ctx.tx.customers.findPaymentProfile(site.id, subscription.paymentProfileId);
            if (profile?.expirationYear !== year || profile.expirationMonth !== month) continue;
            ctx.record({
              siteId: site.id,
              key: 'expiring_card',
              subjectType: 'subscription',
              subjectId: subscription.id,
              payload: {
                subscription: { id: subscription.id, state: subscription.state },
                payment_profile: maskedProfile(profile),
              },
            });
          }
          if (rows.length < 200) break;
        }
        await scheduleExpiringCardScan(ctx.tx, site, ctx.now);
      }
      await this.#complete(ctx, item);
      return 'scan';
    });
  }

  /**
   * Expires a subscription at the `expires_at` given at signup (no charge, no further renewals),
   * when it is still live and its `expires_at` has come (a date moved later since is left to the
   * renewal's own check).
   */
  #expireAt(item: DueWorkRecord): Promise<Outcome> {
    return this.#at<Outcome>(item, async (ctx) => {
      const site = await ctx.tx.sites.findById(item.siteId);
      const subscription = await ctx.tx.subscriptions.findById(item.siteId, item.subjectId);
      if (
        site &&
        subscription &&
        subscription.expiresAt !== null &&
        subscription.expiresAt.getTime() <= ctx.now.getTime() &&
        nextState(subscription.state, 'expire') !== undefined
      ) {
        await this.#expire(ctx, site, subscription);
      }
      await this.#complete(ctx, item);
      return 'skipped';
    });
  }

  /**
   * Starts a delayed signup at its `initial_billing_at`, in the three steps of any due payment:
   * step 1 plans the lines a signup at that instant would bill (see `planDelayedStart`), keeps them
   * in the subscription's data and commits a payment attempt keyed `delayed_signup:<subscription>`
   * (one charge, however many workers run it); step 2 calls the gateway; step 3, on success, posts
   * the lines with their payment in one post (the signup invoice, paid) and moves the subscription
   * to trialing or active, its first period from `initial_billing_at`. A start with nothing to
   * collect (free, a free trial, or remittance) is written at step 1. A failed first payment (or
   * no card when one is needed) cancels the subscription, as a declined signup creates none: nothing
   * is posted, so nothing is owed.
   */
  async #startDelayedSignup(item: DueWorkRecord, until: Date, gateway: PaymentGateway): Promise<Outcome> {
    const key = `delayed_signup:${item.subjectId}`;
    const begin = this.#begin(item, key, async (ctx): Promise<PendingCharge | Outcome> => {
      const site = await ctx.tx.sites.findById(item.siteId);
      const subscription = await ctx.tx.subscriptions.findById(item.siteId, item.subjectId);
      if (!site || !subscription || subscription.state !== 'awaiting_signup') {
        await this.#complete(ctx, item);
        return 'skipped';
      }
      const terms = await this.#terms(ctx, subscription);
      const start = await planDelayedStart(ctx, site, subscription, terms);
      const amount = collectableAmount(subscription, start.totalInCents);
      if (amount <= 0) {
        await this.#writeStart(ctx, site, subscription, terms, start, undefined);
        await this.#complete(ctx, item);
        return 'renewed';
      }
      if (subscription.paymentProfileId === null) {
        await this.#failStart(ctx, item, site, subscription, 'No payment method on file.');
        return 'failed';
      }
      const held = await this.#move(ctx, subscription, subscription.state, {
        data: { ...subscription.data, [PENDING_START_KEY]: storedStart(start) },
      });
      return this.#pending(ctx, await this.#attempt(ctx, item, until, site, held, key, amount, 'signup'), held);
    });
    const settle = this.#settle(item, async (ctx, attempt, result) => {
      const site = (await ctx.tx.sites.findById(item.siteId))!;
      const subscription = await ctx.tx.subscriptions.findById(item.siteId, item.subjectId);
      if (!subscription)
        throw new BillingError('not_found', `Subscription ${item.subjectId} vanished during its delayed signup.`);
      if (result.outcome === 'unknown') return this.#unknown(ctx, item, attempt, result.message);
      const start = readStoredStart(subscription.data);
      if (result.outcome === 'success') {
        const terms = await this.#terms(ctx, subscription);
        if (subscription.state === 'awaiting_signup' && start !== undefined) {
          await this.#writeStart(ctx, site, subscription, terms, start, {
            attempt,
            transactionId: result.transactionId,
          });
          await this.#complete(ctx, item);
          return 'renewed';
        }
        // Canceled while the charge was in flight: the money taken is kept as the subscription's
        // credit (a payment line), never lost; nothing is billed.
        const [payment] = await post(ctx.tx, [
          line(subscription, 'payment', null, attempt.amountInCents, `Payment for: ${terms.name}`, ctx.now, {
            success: true,
            gatewayTransactionId: result.transactionId,
          }),
        ]);
        await ctx.tx.payments.update(site.id, attempt.id, {
          status: 'succeeded',
          gatewayTransactionId: result.transactionId,
          transactionId: payment!.id,
          updatedAt: ctx.now,
        });
        const kept =
          start === undefined
            ? subscription
            : await this.#move(ctx, subscription, subscription.state, { data: withoutStoredStart(subscription.data) });
        recordPayment(ctx, kept, payment!, true);
        await this.#complete(ctx, item);
        return 'skipped';
      }
      await ctx.tx.payments.update(item.siteId, attempt.id, {
        status: result.outcome === 'declined' ? 'declined' : 'failed',
        message: result.message,
        updatedAt: ctx.now,
      });
      if (subscription.state === 'awaiting_signup') {
        await this.#failStart(ctx, item, site, subscription, result.message);
      } else {
        if (start !== undefined)
          await this.#move(ctx, subscription, subscription.state, { data: withoutStoredStart(subscription.data) });
        await this.#complete(ctx, item);
      }
      return result.outcome === 'declined' ? 'declined' : 'failed';
    });
    return collect(gateway, { begin, settle });
  }

  /**
   * Writes a delayed signup's start: its lines and their payment (when one was collected) in one
   * post, the signup invoice; the subscription trialing or active, its first period from now; its
   * coupons counted; and the renewal that follows scheduled.
   */
  async #writeStart(
    ctx: CommandContext,
    site: SiteRecord,
    subscription: SubscriptionRecord,
    terms: ProductTerms,
    start: DelayedStart,
    paid: { attempt: PaymentAttemptRecord; transactionId: string } | undefined,
  ): Promise<SubscriptionRecord> {
    const lines = startLines(subscription, start, ctx.now);
    if (paid)
      lines.push(
        line(subscription, 'payment', null, paid.attempt.amountInCents, `Payment for: ${terms.name}`, ctx.now, {
          success: true,
          gatewayTransactionId: paid.transactionId,
        }),
      );
    const written = await post(ctx.tx, lines, { role: 'signup' });
    const payment = paid ? written.at(-1) : undefined;
    if (paid && payment)
      await ctx.tx.payments.update(site.id, paid.attempt.id, {
        status: 'succeeded',
        gatewayTransactionId: paid.transactionId,
        transactionId: payment.id,
        updatedAt: ctx.now,
      });
    const started = await this.#move(ctx, subscription, start.state, {
      ...startFields(subscription, start, ctx.now),
      ...(payment ? { signupPaymentId: payment.id } : {}),
    });
    if (payment) recordPayment(ctx, started, payment, true);
    await scheduleRenewalAt(ctx, started);
    return started;
  }

  /**
   * A delayed signup whose first payment failed (or that has no card when one is needed): the
   * subscription is canceled at once (`cancellation_method` dunning), as the service does, and
   * `signup_failure` and `payment_failure` are recorded. Nothing was posted, so nothing is owed.
   */
  async #failStart(
    ctx: CommandContext,
    item: DueWorkRecord,
    site: SiteRecord,
    subscription: SubscriptionRecord,
    message: string,
  ): Promise<void> {
    const canceled = await cancelNow(
      ctx,
      site,
      { ...subscription, data: withoutStoredStart(subscription.data) },
      'dunning',
      `The first payment of the delayed signup failed: ${message}`,
    );
    ctx.record({
      siteId: site.id,
      key: 'payment_failure',
      subjectType: 'subscription',
      subjectId: subscription.id,
      payload: { subscription: { id: subscription.id, state: canceled.state }, message },
    });
    ctx.record({
      siteId: site.id,
      key: 'signup_failure',
      subjectType: 'subscription',
      subjectId: subscription.id,
      payload: { subscription: { id: subscription.id, state: canceled.state }, message },
    });
    await this.#complete(ctx, item);
  }

  /** Resumes a subscription on hold at its automatic resume instant; its new period is then due. */
  #autoResume(item: DueWorkRecord): Promise<Outcome> {
    return this.#at<Outcome>(item, async (ctx) => {
      const site = await ctx.tx.sites.findById(item.siteId);
      const subscription = await ctx.tx.subscriptions.findById(item.siteId, item.subjectId);
      if (site && subscription?.state === 'on_hold') await resumeInCommand(ctx, site, subscription);
      await this.#complete(ctx, item);
      return 'skipped';
    });
  }

  /**
   * Records `upcoming_renewal_notice` (or `trial_end_notice`) three days ahead, unless the
   * renewal it announces was moved or the subscription stopped renewing since.
   */
  #notice(item: DueWorkRecord): Promise<Outcome> {
    return this.#at<Outcome>(item, async (ctx) => {
      const subscription = await ctx.tx.subscriptions.findById(item.siteId, item.subjectId);
      const renewalAt = String(item.payload.renewalAt);
      const still =
        subscription !== undefined &&
        RENEWING.includes(subscription.state) &&
        subscription.nextAssessmentAt?.toISOString() === renewalAt &&
        subscription.periodIndex + 1 === Number(item.payload.periodIndex);
      if (still) {
        const version = await ctx.tx.catalog.findProductVersion(
          item.siteId,
          subscription.productId,
          subscription.productVersion,
        );
        const trial = subscription.state === 'trialing';
        ctx.record({
          siteId: item.siteId,
          key: trial ? 'trial_end_notice' : 'upcoming_renewal_notice',
          subjectType: 'subscription',
          subjectId: subscription.id,
          payload: {
            subscription: { id: subscription.id, state: subscription.state, next_assessment_at: renewalAt },
            estimated_renewal_amount_in_cents: version?.terms.priceInCents ?? 0,
            email_sent: false,
            message: trial ? 'Trial ends within 3 days' : 'Renewal within 3 days',
          },
        });
      }
      await this.#complete(ctx, item);
      return 'notice';
    });
  }

  /**
   * One renewal: step 1 charges the new period (or ends the subscription: delayed cancel,
   * expiration, a trial ending without a card) and commits a payment attempt keyed
   * `renewal:<subscription>:<period>`; step 2 calls the gateway; step 3 settles.
   */
  async #renew(item: DueWorkRecord, until: Date, gateway: PaymentGateway): Promise<Outcome> {
    const periodIndex = Number(item.payload.periodIndex);
    const key = renewalAttemptKey(item.subjectId, periodIndex);
    const begin = this.#begin(item, key, async (ctx): Promise<PendingCharge | Outcome> => {
      const site = await ctx.tx.sites.findById(item.siteId);
      let subscription = await ctx.tx.subscriptions.findById(item.siteId, item.subjectId);
      if (!site || !subscription || !RENEWING.includes(subscription.state) || subscription.periodIndex >= periodIndex) {
        await this.#complete(ctx, item);
        return 'skipped';
      }
      if (subscription.cancelAtEndOfPeriod) {
        const method =
          (subscription.data.pendingCancellationMethod as CancellationMethod | undefined) ?? 'merchant_api';
        await cancelNow(ctx, site, subscription, method, subscription.cancellationMessage);
        await this.#complete(ctx, item);
        return 'skipped';
      }
      if (subscription.expiresAt !== null && subscription.expiresAt.getTime() <= ctx.now.getTime()) {
        // The period an open advance invoice billed never starts: it is voided.
        await voidAdvanceInvoiceOnClose(ctx, subscription, 'Subscription expired');
        await this.#expire(ctx, site, subscription);
        await this.#complete(ctx, item);
        return 'skipped';
      }
      subscription = await this.#applyDelayedProductChange(ctx, site, subscription);
      const terms = await this.#terms(ctx, subscription);
      const endingTrial = subscription.state === 'trialing';
      if (
        endingTrial &&
        subscription.paymentProfileId === null &&
        !terms.requireCreditCard &&
        collectsAutomatically(subscription)
      ) {
        // A no-obligation trial without a card ends unless existing credit covers the price. A
        // remittance subscription needs no card: its first invoice is issued and left open.
        const balance = await ctx.tx.ledger.balance(site.id, subscription.id);
        if (balance + terms.priceInCents > 0) {
          const ended = await this.#move(
            ctx,
            subscription,
            transition(subscription.state, 'trial_ended_without_payment'),
            {
              nextAssessmentAt: null,
            },
          );
          await ctx.tx.dueWork.cancelFor(site.id, ended.id, SUBSCRIPTION_WORK, ctx.now);
          await this.#complete(ctx, item);
          return 'skipped';
        }
      }
      const {
        period,
        charges: assessed,
        coupons,
        discounts,
      } = await assessNextPeriod(ctx, site, subscription, terms, {
        resetMetered: true,
      });
      // An advance invoice already billed this period: only the difference is billed now (its
      // coupon uses are counted here, once). Its note is cleared either way. The billing manifest
      // shows the same lines (`renewalLines`).
      const { lines: billed } = await renewalLines(ctx.tx, subscription, { period, charges: assessed, discounts });
      let data = coupons.length === 0 ? undefined : couponDataAfter(subscription.data, coupons, discounts);
      if (ADVANCE_INVOICE_KEY in subscription.data) data = withoutAdvanceInvoice(data ?? subscription.data);
      const advanced = await this.#move(ctx, subscription, endingTrial ? 'active' : subscription.state, {
        periodIndex: period.index,
        currentPeriodStartedAt: period.start,
        currentPeriodEndsAt: period.end,
        nextAssessmentAt: period.end,
        activatedAt: subscription.activatedAt ?? ctx.now,
        ...(data === undefined ? {} : { data }),
      });
      const lines = billed.map((d) =>
        line(advanced, d.type, d.kind, d.amountInCents, d.memo, ctx.now, {
          periodIndex: period.index,
          componentId: d.componentId,
        }),
      );
      const written = await post(ctx.tx, lines);
      // The balance after the post is its last line's (the ledger chains each subscription's
      // lines from its balance), so it is read again only when nothing was posted.
      const ledgerBalance =
        written.at(-1)?.endingBalanceInCents ?? (await ctx.tx.ledger.balance(site.id, subscription.id));
      // A payment whose outcome is not known yet (an allocation's lost answer) holds its amount
      // out of what is collected, until its reconciliation settles it. A remittance subscription
      // has nothing collectable: the period's invoice stays open and the renewal is done.
      // The previous period's charge may still be at the gateway under a renewal row a command
      // canceled (a billing date moved to now): its amount is not this renewal's to collect.
      const balance = collectableBalance(ledgerBalance, advanced) - (await openRenewalAmount(ctx.tx, subscription));
      if (balance <= 0) {
        await this.#finishRenewal(ctx, item, site.id, advanced, true);
        return 'renewed';
      }
      if (advanced.state === 'unpaid' || advanced.paymentProfileId === null) {
        // No automatic collection: unpaid accrues; a missing card is a failed renewal.
        await this.#failRenewal(
          ctx,
          item,
          site,
          advanced,
          advanced.state === 'unpaid' ? 'unpaid' : 'declined',
          'No payment method on file.',
        );
        return 'failed';
      }
      return this.#pending(
        ctx,
        await this.#attempt(ctx, item, until, site, advanced, key, balance, 'renewal'),
        advanced,
      );
    });
    const settle = this.#settle(item, async (ctx, attempt, result) => {
      const subscription = await ctx.tx.subscriptions.findById(item.siteId, item.subjectId);
      if (!subscription)
        throw new BillingError('not_found', `Subscription ${item.subjectId} vanished during its renewal.`);
      if (result.outcome === 'unknown') return this.#unknown(ctx, item, attempt, result.message);
      if (result.outcome === 'success') {
        const settled = await this.#recordPaid(ctx, subscription, attempt, result.transactionId, 'renewal_paid');
        await this.#finishRenewal(ctx, item, item.siteId, settled, subscription.state !== 'active');
        return 'renewed';
      }
      await ctx.tx.payments.update(item.siteId, attempt.id, {
        status: result.outcome === 'declined' ? 'declined' : 'failed',
        message: result.message,
        updatedAt: ctx.now,
      });
      await this.#failRenewal(
        ctx,
        item,
        (await ctx.tx.sites.findById(item.siteId))!,
        subscription,
        result.outcome === 'declined' ? 'declined' : 'error',
        result.message,
      );
      return result.outcome === 'declined' ? 'declined' : 'failed';
    });
    return collect(gateway, { begin, settle });
  }

  /**
   * A dunning retry: collects the balance of a past-due subscription. Success returns it to
   * active (a `payment_success`, never a `renewal_success`); after the last failed retry the
   * site's final action applies (cancel, or mark unpaid).
   */
  async #retry(item: DueWorkRecord, until: Date, gateway: PaymentGateway): Promise<Outcome> {
    const attemptNo = Number(item.payload.attempt);
    const key = `dunning:${item.subjectId}:${item.payload.periodIndex}:${attemptNo}`;
    const begin = this.#begin(item, key, async (ctx): Promise<PendingCharge | Outcome> => {
      const site = await ctx.tx.sites.findById(item.siteId);
      const subscription = await ctx.tx.subscriptions.findById(item.siteId, item.subjectId);
      if (!site || !subscription || !DUNNING.includes(subscription.state)) {
        await this.#complete(ctx, item);
        return 'skipped';
      }
      const balance = await ctx.tx.ledger.balance(site.id, subscription.id);
      if (balance <= 0) {
        await this.#move(ctx, subscription, transition(subscription.state, 'balance_settled'), {});
        await this.#complete(ctx, item);
        return 'skipped';
      }
      // A payment whose outcome is not known yet (an allocation's lost answer) holds its amount out
      // of what the retry collects; when it holds all of it, the retry looks again after its
      // reconciliation, which either pays the balance or leaves it owed.
      const collectable = collectableBalance(balance, subscription) - (await openRenewalAmount(ctx.tx, subscription));
      if (!collectsAutomatically(subscription)) {
        // Switched to remittance while in dunning: the engine no longer charges it, so the cycle
        // ends here; the customer pays the open invoices, which settles the subscription.
        await ctx.tx.dueWork.cancelFor(site.id, subscription.id, ['dunning_retry'], ctx.now);
        await this.#complete(ctx, item);
        return 'skipped';
      }
      if (collectable <= 0) {
        const retryFrom = Math.max(this.#deps.clock.now().getTime(), item.dueAt.getTime());
        await ctx.tx.dueWork.release(
          item.siteId,
          item.id,
          this.#owner,
          new Date(retryFrom + UNKNOWN_RETRY_MS),
          ctx.now,
        );
        return 'pending';
      }
      if (subscription.paymentProfileId === null) {
        await this.#dunningFailed(ctx, item, site, subscription, attemptNo, 'No payment method on file.');
        return 'failed';
      }
      return this.#pending(
        ctx,
        await this.#attempt(ctx, item, until, site, subscription, key, collectable, 'dunning'),
        subscription,
      );
    });
    const settle = this.#settle(item, async (ctx, attempt, result) => {
      const subscription = await ctx.tx.subscriptions.findById(item.siteId, item.subjectId);
      if (!subscription) throw new BillingError('not_found', `Subscription ${item.subjectId} vanished during a retry.`);
      if (result.outcome === 'unknown') return this.#unknown(ctx, item, attempt, result.message);
      if (result.outcome === 'success') {
        await this.#recordPaid(ctx, subscription, attempt, result.transactionId, 'balance_settled');
        await ctx.tx.dueWork.cancelFor(item.siteId, subscription.id, ['dunning_retry'], ctx.now);
        await this.#complete(ctx, item);
        return 'recovered';
      }
      await ctx.tx.payments.update(item.siteId, attempt.id, {
        status: result.outcome === 'declined' ? 'declined' : 'failed',
        message: result.message,
        updatedAt: ctx.now,
      });
      const site = (await ctx.tx.sites.findById(item.siteId))!;
      await this.#dunningFailed(ctx, item, site, subscription, attemptNo, result.message);
      return result.outcome === 'declined' ? 'declined' : 'failed';
    });
    return collect(gateway, { begin, settle });
  }

  /**
   * Step 1 of a due item's payment, at the item's due instant: an attempt already committed under
   * `key` (a run that died after step 1, or an answer that was lost) is resumed as it is; otherwise
   * `prepare` decides, finishing the item itself or committing a new attempt.
   */
  #begin(
    item: DueWorkRecord,
    key: string,
    prepare: (ctx: CommandContext) => Promise<PendingCharge | Outcome>,
  ): () => Promise<CollectionStart<undefined, Outcome>> {
    return async () => {
      const started = await this.#at(item, async (ctx): Promise<PendingCharge | Outcome> => {
        const existing = await ctx.tx.payments.findByKey(item.siteId, key);
        return existing ? this.#pending(ctx, existing) : prepare(ctx);
      });
      return typeof started === 'string' ? { done: started } : { charge: started, plan: undefined };
    };
  }

  /**
   * Step 3 of a due item's payment: commits the outcome only while this worker still holds the
   * item (its lease is extended in the same transaction, which on Postgres also locks the row) and
   * the attempt is still open, so of two workers that ever held one item only one settles it.
   */
  #settle(
    item: DueWorkRecord,
    apply: (ctx: CommandContext, attempt: PaymentAttemptRecord, result: ChargeResult) => Promise<Outcome>,
  ): (charge: PendingCharge, plan: undefined, result: ChargeResult) => Promise<Outcome> {
    return (charge, _plan, result) =>
      this.#at(item, async (ctx) => {
        const now = this.#deps.clock.now();
        const held = await ctx.tx.dueWork.extendLeases(
          [item],
          this.#owner,
          new Date(Math.max(now.getTime(), ctx.now.getTime()) + LEASE_MS),
          ctx.now,
        );
        if (held === 0) {
          const row = await ctx.tx.dueWork.findByKey(item.siteId, item.uniqueKey);
          // Still open: whoever holds it now (a worker that took the lapsed lease), or its next
          // claim, resumes the attempt by its key and settles the item in full.
          if (row !== undefined && (row.status === 'pending' || row.status === 'claimed')) return 'skipped';
          // Canceled under the charge (the subscription canceled, put on hold, its billing date
          // moved...): the row never comes back, so the answer is committed here.
          const settled = await this.#settleWithoutRow(
            ctx,
            item.siteId,
            charge.attempt.idempotencyKey,
            item.uniqueKey,
            result,
            this.#retryFrom(item),
          );
          return settled === 'declined' || settled === 'failed'
            ? settled
            : settled === 'unknown'
              ? 'pending'
              : 'skipped';
        }
        const stored = await ctx.tx.payments.findByKey(item.siteId, charge.attempt.idempotencyKey);
        if (stored === undefined || !isOpenAttempt(stored.status)) {
          await this.#complete(ctx, item);
          return 'skipped';
        }
        // A known answer ends the attempt's reconciliation row (scheduled with the attempt).
        if (result.outcome !== 'unknown')
          await ctx.tx.dueWork.cancelFor(item.siteId, stored.id, ['reconcile_payment'], ctx.now);
        return apply(ctx, stored, result);
      });
  }

  /** A committed attempt with the vault of its subscription's card (none on file: the charge fails without a call). */
  async #pending(
    ctx: CommandContext,
    attempt: PaymentAttemptRecord,
    known?: SubscriptionRecord,
  ): Promise<PendingCharge> {
    const subscription =
      known ??
      (attempt.subscriptionId === null
        ? undefined
        : await ctx.tx.subscriptions.findById(attempt.siteId, attempt.subscriptionId));
    const profile =
      subscription?.paymentProfileId == null
        ? undefined
        : await ctx.tx.customers.findPaymentProfile(attempt.siteId, subscription.paymentProfileId);
    const vault: ChargeVault | undefined =
      profile === undefined
        ? undefined
        : { vaultToken: profile.vaultToken, customerVaultToken: profile.customerVaultToken };
    return {
      attempt,
      vault,
      description: `${attempt.purpose} of subscription ${attempt.subscriptionId}`,
      // No caller waits for due work: a lost answer is asked about when the item comes back.
      lookUpLostAnswer: false,
    };
  }

  async #dunningFailed(
    ctx: CommandContext,
    item: DueWorkRecord,
    site: SiteRecord,
    subscription: SubscriptionRecord,
    attemptNo: number,
    message: string,
  ): Promise<void> {
    ctx.record({
      siteId: site.id,
      key: 'payment_failure',
      subjectType: 'subscription',
      subjectId: subscription.id,
      payload: { subscription: { id: subscription.id, state: subscription.state }, message },
    });
    await this.#scheduleDunning(ctx, site, subscription, attemptNo + 1, Number(item.payload.periodIndex));
    await this.#complete(ctx, item);
  }

  /**
   * Schedules retry `attemptNo` of the dunning cycle, or applies the site's final action when the
   * retries are used up (`retryCount` retries follow the failed renewal; 0 means act at once).
   */
  async #scheduleDunning(
    ctx: CommandContext,
    site: SiteRecord,
    subscription: SubscriptionRecord,
    attemptNo: number,
    periodIndex: number,
  ): Promise<void> {
    const { retryCount, retryIntervalHours, finalAction } = site.settings.dunning;
    ctx.record({
      siteId: site.id,
      key: 'dunning_step_reached',
      subjectType: 'subscription',
      subjectId: subscription.id,
      payload: {
        subscription: { id: subscription.id, state: subscription.state },
        dunning: { attempt: attemptNo, of: retryCount },
      },
    });
    if (attemptNo <= retryCount) {
      await ctx.tx.dueWork.schedule({
        siteId: site.id,
        kind: 'dunning_retry',
        subjectId: subscription.id,
        dueAt: new Date(ctx.now.getTime() + retryIntervalHours * 3_600_000),
        uniqueKey: `dunning:${subscription.id}:${periodIndex}:${attemptNo}`,
        payload: { attempt: attemptNo, periodIndex },
      });
      return;
    }
    if (finalAction === 'canceled') {
      await cancelNow(ctx, site, subscription, 'dunning', 'Canceled by dunning: payment could not be collected.');
    } else {
      await this.#move(ctx, subscription, transition(subscription.state, 'dunning_exhausted_unpaid'), {});
    }
  }

  /**
   * A renewal paid (or covered by credit): `renewal_success`, the next period scheduled, the item
   * done. `endsDunning` cancels the subscription's payment retries; a subscription that was active
   * when its renewal was paid has none (every way out of dunning cancels them), so the ordinary
   * renewal spares that statement.
   */
  async #finishRenewal(
    ctx: CommandContext,
    item: DueWorkRecord,
    siteId: number,
    subscription: SubscriptionRecord,
    endsDunning: boolean,
  ): Promise<void> {
    ctx.record({
      siteId,
      key: 'renewal_success',
      subjectType: 'subscription',
      subjectId: subscription.id,
      payload: { subscription: { id: subscription.id, state: subscription.state } },
    });
    if (endsDunning) await ctx.tx.dueWork.cancelFor(siteId, subscription.id, ['dunning_retry'], ctx.now);
    await scheduleRenewalAt(ctx, subscription);
    await this.#complete(ctx, item);
  }

  /** A renewal that could not be collected: past due (or soft failure) and dunning, or unpaid accrual. */
  async #failRenewal(
    ctx: CommandContext,
    item: DueWorkRecord,
    site: SiteRecord,
    subscription: SubscriptionRecord,
    cause: 'declined' | 'error' | 'unpaid',
    message: string,
  ): Promise<void> {
    let current = subscription;
    if (cause !== 'unpaid') {
      current = await this.#move(
        ctx,
        subscription,
        transition(subscription.state, cause === 'declined' ? 'renewal_declined' : 'renewal_error'),
        {},
      );
      ctx.record({
        siteId: site.id,
        key: 'payment_failure',
        subjectType: 'subscription',
        subjectId: subscription.id,
        payload: { subscription: { id: subscription.id, state: current.state }, message },
      });
    }
    ctx.record({
      siteId: site.id,
      key: 'renewal_failure',
      subjectType: 'subscription',
      subjectId: subscription.id,
      payload: { subscription: { id: current.id, state: current.state }, message },
    });
    const inDunning = (await ctx.tx.dueWork.pendingFor(site.id, subscription.id, ['dunning_retry'])).length > 0;
    if (cause !== 'unpaid' && !inDunning) await this.#scheduleDunning(ctx, site, current, 1, current.periodIndex);
    // The final action may have canceled it; a canceled subscription schedules nothing more.
    const after = await ctx.tx.subscriptions.findById(site.id, subscription.id);
    if (after && RENEWING.includes(after.state)) await scheduleRenewalAt(ctx, after);
    await this.#complete(ctx, item);
  }

  /** Ends a subscription whose product expiration has come: no charge at that renewal. */
  async #expire(ctx: CommandContext, site: SiteRecord, subscription: SubscriptionRecord): Promise<void> {
    await this.#move(ctx, subscription, transition(subscription.state, 'expire'), { nextAssessmentAt: null });
    await ctx.tx.dueWork.cancelFor(site.id, subscription.id, SUBSCRIPTION_WORK, ctx.now);
  }

  /** Applies a product change that was delayed to this renewal. */
  async #applyDelayedProductChange(
    ctx: CommandContext,
    site: SiteRecord,
    subscription: SubscriptionRecord,
  ): Promise<SubscriptionRecord> {
    const nextProductId = subscription.data.nextProductId;
    if (typeof nextProductId !== 'number') return subscription;
    const product = await ctx.tx.catalog.findProduct(site.id, nextProductId);
    const { nextProductId: _done, ...data } = subscription.data;
    if (!product) return this.#move(ctx, subscription, subscription.state, { data });
    const moved = await this.#move(ctx, subscription, subscription.state, {
      productId: product.id,
      productVersion: product.currentVersion,
      data,
    });
    ctx.record({
      siteId: site.id,
      key: 'subscription_product_change',
      subjectType: 'subscription',
      subjectId: subscription.id,
      payload: {
        previous_product: { id: subscription.productId },
        subscription: { id: subscription.id, product: { id: product.id } },
      },
    });
    return moved;
  }

  async #terms(ctx: CommandContext, subscription: SubscriptionRecord): Promise<ProductTerms> {
    const version = await ctx.tx.catalog.findProductVersion(
      subscription.siteId,
      subscription.productId,
      subscription.productVersion,
    );
    if (!version)
      throw new BillingError('storage', `Subscription ${subscription.id} refers to a missing product version.`);
    return version.terms;
  }

  /** Writes a patch at the subscription's version and records the state change if the state moves. */
  async #move(
    ctx: CommandContext,
    subscription: SubscriptionRecord,
    state: SubscriptionState,
    patch: Parameters<CommandContext['tx']['subscriptions']['updateAtVersion']>[3],
  ): Promise<SubscriptionRecord> {
    const moved = await ctx.tx.subscriptions.updateAtVersion(
      subscription.siteId,
      subscription.id,
      subscription.version,
      {
        ...patch,
        state,
        updatedAt: ctx.now,
      },
    );
    if (!moved) throw new BillingError('conflict', `Subscription ${subscription.id} changed during its renewal.`);
    if (state !== subscription.state) recordStateChange(ctx, moved, subscription.state);
    return moved;
  }

  /**
   * Commits a due item's payment attempt (step 1) together with its reconciliation row, so that
   * every committed attempt has a way back that no command cancels: the item's own row normally
   * settles it (and cancels that row in the same transaction); a row a command canceled while the
   * charge was at the gateway is settled by the worker's own step 3; and when that worker died as
   * well (both faults at once) the reconciliation row asks the gateway by key. It waits while the
   * item's row is open, and falls due an hour after the later of now and the run's `until`, so it
   * never comes up inside the run whose worker is still calling the gateway.
   */
  async #attempt(
    ctx: CommandContext,
    item: DueWorkRecord,
    until: Date,
    site: SiteRecord,
    subscription: SubscriptionRecord,
    key: string,
    amountInCents: number,
    purpose: string,
  ): Promise<PaymentAttemptRecord> {
    const attempt = await ctx.tx.payments.insert(
      pendingAttempt({
        siteId: site.id,
        subscriptionId: subscription.id,
        customerId: subscription.customerId,
        idempotencyKey: key,
        amountInCents,
        currency: site.currency,
        purpose,
        now: ctx.now,
      }),
    );
    const from = new Date(Math.max(until.getTime(), this.#retryFrom(item).getTime()));
    await this.#scheduleLostAnswer(ctx, attempt, item.uniqueKey, from);
    return attempt;
  }

  /** Records a collected payment and moves the subscription out of dunning when it was in it. */
  async #recordPaid(
    ctx: CommandContext,
    subscription: SubscriptionRecord,
    attempt: PaymentAttemptRecord,
    transactionId: string,
    event: 'renewal_paid' | 'balance_settled',
  ): Promise<SubscriptionRecord> {
    const [payment] = await post(ctx.tx, [
      line(
        subscription,
        'payment',
        null,
        attempt.amountInCents,
        attempt.purpose === 'dunning' ? 'Payment (dunning retry)' : 'Payment for renewal',
        ctx.now,
        {
          success: true,
          gatewayTransactionId: transactionId,
        },
      ),
    ]);
    await ctx.tx.payments.update(subscription.siteId, attempt.id, {
      status: 'succeeded',
      gatewayTransactionId: transactionId,
      transactionId: payment!.id,
      updatedAt: ctx.now,
    });
    const settled =
      subscription.state === 'active'
        ? subscription
        : await this.#move(ctx, subscription, transition(subscription.state, event), {});
    recordPayment(ctx, settled, payment!, true);
    return settled;
  }

  /**
   * No answer from the gateway: keep the attempt and look again later, by key, before charging.
   * The item's row comes back an hour later; the attempt's reconciliation row (scheduled with the
   * attempt) is there for when a command cancels the item's row before that: it then settles the
   * attempt. It is scheduled here too for an attempt committed before rows came with attempts.
   */
  async #unknown(
    ctx: CommandContext,
    item: DueWorkRecord,
    attempt: PaymentAttemptRecord,
    message: string,
  ): Promise<Outcome> {
    await ctx.tx.payments.update(item.siteId, attempt.id, { status: 'unknown', message, updatedAt: ctx.now });
    const retryFrom = this.#retryFrom(item);
    await ctx.tx.dueWork.release(
      item.siteId,
      item.id,
      this.#owner,
      new Date(retryFrom.getTime() + UNKNOWN_RETRY_MS),
      ctx.now,
    );
    await this.#scheduleLostAnswer(ctx, attempt, item.uniqueKey, retryFrom);
    return 'pending';
  }

  /** The instant a lost answer's next look counts from: now, or the item's due instant if later. */
  #retryFrom(item: DueWorkRecord): Date {
    return new Date(Math.max(this.#deps.clock.now().getTime(), item.dueAt.getTime()));
  }

  /** Schedules the reconciliation of a due item's attempt (once per attempt: a taken key is skipped; due an hour after `from`). */
  async #scheduleLostAnswer(
    ctx: CommandContext,
    attempt: PaymentAttemptRecord,
    workKey: string,
    from: Date,
  ): Promise<void> {
    const plan: DuePaymentPlan = { type: DUE_PAYMENT_PLAN, key: attempt.idempotencyKey, workKey };
    await scheduleReconciliation(ctx.tx, attempt, { ...plan }, from);
  }

  /**
   * Settles a due item's attempt left open (`unknown`, or `pending` when its worker died after
   * the gateway call), from its `reconcile_payment` row. While the item's own row is open it comes
   * back and resumes the attempt by key itself (settling the renewal or retry in full), so this row
   * only waits; once that row was canceled, the gateway is asked by the key (never charged again;
   * no record of the key means nothing was taken) and its answer committed as
   * {@link #settleWithoutRow} does.
   */
  async #reconcileDuePayment(
    item: DueWorkRecord,
    plan: DuePaymentPlan,
  ): Promise<'succeeded' | 'failed' | 'unknown' | 'settled'> {
    const { siteId } = item;
    const [row, attempt] = await this.#deps.storage.transaction(
      async (tx) =>
        [await tx.dueWork.findByKey(siteId, plan.workKey), await tx.payments.findByKey(siteId, plan.key)] as const,
    );
    if (attempt === undefined || !isOpenAttempt(attempt.status)) return 'settled';
    if (row !== undefined && (row.status === 'pending' || row.status === 'claimed')) return 'unknown';
    const finding = await reconcileByKey(this.#deps.storage, this.#deps.gateway, siteId, plan.key);
    if (finding.kind !== 'known') return finding.kind;
    if (finding.result.outcome === 'unknown') return 'unknown';
    const { result } = finding;
    const settled = await this.#at(item, (ctx) =>
      this.#settleWithoutRow(ctx, siteId, plan.key, plan.workKey, result, this.#retryFrom(item)),
    );
    if (settled === 'succeeded') return 'succeeded';
    if (settled === 'declined' || settled === 'failed') return 'failed';
    return settled;
  }

  /**
   * Commits the gateway's answer for the attempt of a due item whose row a command canceled while
   * the charge was at the gateway, so the row never comes back: the answer is the attempt's, and
   * the subscription stays as that command left it. Money taken is a ledger payment (with
   * `payment_success`, the attempt succeeded with its transaction id) and a subscription in
   * dunning whose balance it pays returns to active; nothing is scheduled and nothing canceled is
   * revived. A decline or error marks the attempt and records `payment_failure`; the charge stays
   * owed, and no dunning starts. A lost answer marks the attempt `unknown` and schedules its
   * reconciliation, which asks the gateway by key later. Once per attempt: an attempt already
   * settled is left as it is, under a claim that orders concurrent settlers on Postgres.
   */
  async #settleWithoutRow(
    ctx: CommandContext,
    siteId: number,
    key: string,
    workKey: string,
    result: ChargeResult,
    retryFrom: Date,
  ): Promise<OrphanSettlement> {
    if (!(await ctx.tx.idempotency.claim(siteId, SETTLEMENT_SCOPE, key, ctx.now, null)))
      throw new BillingError('conflict', `Payment attempt ${key} is being settled by another worker.`);
    const settled = await this.#commitWithoutRow(ctx, siteId, key, workKey, result, retryFrom);
    await ctx.tx.idempotency.release(siteId, SETTLEMENT_SCOPE, key);
    return settled;
  }

  async #commitWithoutRow(
    ctx: CommandContext,
    siteId: number,
    key: string,
    workKey: string,
    result: ChargeResult,
    retryFrom: Date,
  ): Promise<OrphanSettlement> {
    const attempt = await ctx.tx.payments.findByKey(siteId, key);
    if (attempt === undefined) return 'settled';
    // A charge the reconciliation found the gateway never saw, whose own call then reached it and
    // took the money (a live worker whose call outlasted the reconciliation's hour): the money was
    // taken after all, so it is recorded, once (the attempt is then settled with it).
    const takenAfterAll =
      attempt.status === 'failed' &&
      attempt.message === NOT_SEEN_BY_GATEWAY &&
      attempt.transactionId === null &&
      result.outcome === 'success';
    if (!isOpenAttempt(attempt.status) && !takenAfterAll) return 'settled';
    if (result.outcome === 'unknown') {
      await ctx.tx.payments.update(siteId, attempt.id, {
        status: 'unknown',
        message: result.message,
        updatedAt: ctx.now,
      });
      await this.#scheduleLostAnswer(ctx, attempt, workKey, retryFrom);
      return 'unknown';
    }
    await ctx.tx.dueWork.cancelFor(siteId, attempt.id, ['reconcile_payment'], ctx.now);
    const subscription =
      attempt.subscriptionId === null ? undefined : await ctx.tx.subscriptions.findById(siteId, attempt.subscriptionId);
    if (subscription === undefined)
      throw new BillingError('not_found', `The subscription of payment attempt ${key} vanished.`);
    if (result.outcome !== 'success') {
      await ctx.tx.payments.update(siteId, attempt.id, {
        status: result.outcome === 'declined' ? 'declined' : 'failed',
        message: result.message,
        updatedAt: ctx.now,
      });
      ctx.record({
        siteId,
        key: 'payment_failure',
        subjectType: 'subscription',
        subjectId: subscription.id,
        payload: { subscription: { id: subscription.id, state: subscription.state }, message: result.message },
      });
      return result.outcome === 'declined' ? 'declined' : 'failed';
    }
    const memo =
      attempt.purpose === 'dunning'
        ? 'Payment (dunning retry)'
        : attempt.purpose === 'signup'
          ? `Payment for: ${(await this.#terms(ctx, subscription)).name}`
          : 'Payment for renewal';
    const [payment] = await post(ctx.tx, [
      line(subscription, 'payment', null, attempt.amountInCents, memo, ctx.now, {
        success: true,
        gatewayTransactionId: result.transactionId,
      }),
    ]);
    await ctx.tx.payments.update(siteId, attempt.id, {
      status: 'succeeded',
      gatewayTransactionId: result.transactionId,
      transactionId: payment!.id,
      updatedAt: ctx.now,
    });
    // A delayed signup that will never start keeps the money as credit, not its planned lines.
    const kept =
      readStoredStart(subscription.data) === undefined
        ? subscription
        : await this.#move(ctx, subscription, subscription.state, { data: withoutStoredStart(subscription.data) });
    recordPayment(ctx, kept, payment!, true);
    await settleIfPaid(ctx, siteId, subscription.id);
    return 'succeeded';
  }
}

/**
 * The claims one run holds and has not finished, and when the earliest of their leases lapses, so
 * that the run extends them (all in one statement) before a slow gateway lets one lapse.
 */
class HeldLeases {
  readonly #held = new Map<number, { readonly siteId: number; readonly id: number }>();
  #lapsesAt = Number.POSITIVE_INFINITY;
  #renewing: Promise<void> | undefined;

  hold(batch: readonly DueWorkRecord[], leaseUntil: Date): void {
    for (const item of batch) this.#held.set(item.id, { siteId: item.siteId, id: item.id });
    if (batch.length > 0) this.#lapsesAt = Math.min(this.#lapsesAt, leaseUntil.getTime());
  }

  drop(item: DueWorkRecord): void {
    this.#held.delete(item.id);
    if (this.#held.size === 0) this.#lapsesAt = Number.POSITIVE_INFINITY;
  }

  needsRenewal(now: Date): boolean {
    return this.#renewing === undefined && now.getTime() >= this.#lapsesAt - LEASE_RENEW_MARGIN_MS;
  }

  /** Extends every held lease to `leaseUntil`; a failure is left for the next look (the lease still has its margin). */
  renew(leaseUntil: Date, extend: (rows: { siteId: number; id: number }[]) => Promise<number>): Promise<void> {
    if (this.#renewing !== undefined) return this.#renewing;
    const rows = [...this.#held.values()];
    this.#renewing = extend(rows)
      .then(
        () => {
          // Batches claimed meanwhile carry leases from a later now, so this one is the earliest.
          this.#lapsesAt = this.#held.size === 0 ? Number.POSITIVE_INFINITY : leaseUntil.getTime();
        },
        (error: unknown) => {
          if (!(error instanceof BillingError)) throw error;
        },
      )
      .finally(() => {
        this.#renewing = undefined;
      });
    return this.#renewing;
  }
}
