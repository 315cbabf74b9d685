import { randomUUID } from 'node:crypto';
import { nextPeriod } from '../domain/subscription/periods.js';
import { BillingError } from '../errors.js';
import type { ChargeResult } from '../ports/gateway.js';
import { transition } from '../domain/subscription/state-machine.js';
import type { DueWorkKind, DueWorkRecord, PaymentAttemptRecord, SubscriptionRecord, SubscriptionState } from '../ports/storage.js';
import { cancelNow, type CancellationMethod, recordStateChange, resumeInCommand } from './lifecycle-service.js';
import { runCommand } from './command-runner.js';
import { chargeAttempt } from './payment-runner.js';
import { scheduleRenewalAt } from './renewal-schedule.js';
import { line, recordPayment, type SubscriptionDeps } from './subscription-service.js';

/** Options of {@link RenewalService.runDue}. */
export interface RunDueOptions {
  /** Process work due at or before this instant; default the clock's now. */
  readonly until?: Date;
  /** Stop after this many items (default: no limit). */
  readonly limit?: number;
  /** Items claimed per batch; memory use is bounded by it, not by how much is due. */
  readonly batchSize?: number;
  /** Only this site's work. */
  readonly siteId?: number;
  /** Only this subject's work (with `siteId`). */
  readonly subjectId?: number;
}

/** What a `runDue` call did. */
export interface RunDueSummary {
  readonly processed: number;
  readonly renewed: number;
  readonly declined: number;
  readonly failed: number;
  readonly errors: number;
}

/** States whose subscriptions renew at the end of their period. */
const RENEWING: readonly SubscriptionState[] = ['active', 'trialing', 'past_due', 'soft_failure', 'unpaid'];

const LEASE_MS = 5 * 60_000;

/** The kinds of due work this service runs. */
const HANDLED_KINDS: DueWorkKind[] = ['renewal', 'auto_resume'];

/** How long after an unanswered charge its renewal is looked at again (by key, never re-charged blindly). */
const UNKNOWN_RETRY_MS = 60 * 60_000;

/**
 * Due work: claims what is due in time order and processes each item in its own transactions.
 * Each item happens at its due instant (its ledger lines and events carry that instant), so one
 * jump of the clock gives the same ledger as many small steps.
 */
export class RenewalService {
  readonly #deps: SubscriptionDeps;
  readonly #owner = `worker-${randomUUID()}`;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /** Processes everything due up to `until`; running it again does nothing more. */
  async runDue(options: RunDueOptions = {}): Promise<RunDueSummary> {
    const until = options.until ?? this.#deps.clock.now();
    const batchSize = Math.max(1, options.batchSize ?? 100);
    const summary = { processed: 0, renewed: 0, declined: 0, failed: 0, errors: 0 };
    for (;;) {
      const left = options.limit === undefined ? batchSize : Math.min(batchSize, options.limit - summary.processed);
      if (left <= 0) break;
      const now = this.#deps.clock.now();
      const batch = await this.#deps.storage.transaction((tx) =>
        tx.dueWork.claim({
          until,
          limit: left,
          owner: this.#owner,
          leaseUntil: new Date(now.getTime() + LEASE_MS),
          now,
          kinds: HANDLED_KINDS,
          ...(options.siteId === undefined ? {} : { siteId: options.siteId }),
          ...(options.subjectId === undefined ? {} : { subjectId: options.subjectId }),
        }),
      );
      if (batch.length === 0) break;
      for (const item of batch) {
        summary.processed += 1;
        try {
          const outcome = item.kind === 'auto_resume' ? await this.#autoResume(item) : await this.#renew(item);
          if (outcome === 'renewed') summary.renewed += 1;
          else if (outcome === 'declined') summary.declined += 1;
          else if (outcome === 'failed') summary.failed += 1;
        } catch (error) {
          summary.errors += 1;
          // The item stays claimed; its lease lapses and a later run retries it.
          if (!(error instanceof BillingError)) throw error;
        }
      }
    }
    return summary;
  }

  /** Runs one subscription's work that is due now (after a reactivation, resume or billing-date change). */
  runDueFor(siteId: number, subjectId: number): Promise<RunDueSummary> {
    return this.runDue({ siteId, subjectId, until: this.#deps.clock.now() });
  }

  /** Resumes a subscription on hold at its automatic resume instant; its new period is then due. */
  async #autoResume(item: DueWorkRecord): Promise<'skipped'> {
    const deps = { ...this.#deps, clock: { now: () => item.dueAt } };
    await runCommand(deps, async (ctx) => {
      const site = await ctx.tx.sites.findById(item.siteId);
      const subscription = await ctx.tx.subscriptions.findById(item.siteId, item.subjectId);
      if (site && subscription?.state === 'on_hold') await resumeInCommand(ctx, site, subscription);
      await ctx.tx.dueWork.complete(item.siteId, item.id, this.#owner, ctx.now);
    });
    return 'skipped';
  }

  /**
   * One renewal in three steps (DESIGN §3): (1) charge the new period and commit a payment
   * attempt with the key `renewal:<subscription>:<period>`; (2) call the gateway outside any
   * transaction; (3) commit the outcome. A crash between steps is resumed from the stored attempt.
   */
  async #renew(item: DueWorkRecord): Promise<'renewed' | 'declined' | 'failed' | 'skipped' | 'pending'> {
    const periodIndex = Number(item.payload.periodIndex);
    const key = `renewal:${item.subjectId}:${periodIndex}`;
    const deps = { ...this.#deps, clock: { now: () => item.dueAt } };
    const prepared = await runCommand(deps, async (ctx) => {
      const site = await ctx.tx.sites.findById(item.siteId);
      const subscription = await ctx.tx.subscriptions.findById(item.siteId, item.subjectId);
      const existing = await ctx.tx.payments.findByKey(item.siteId, key);
      if (existing) return { kind: 'pay' as const, attempt: existing, subscription: subscription! };
      if (!site || !subscription || !RENEWING.includes(subscription.state) || subscription.periodIndex >= periodIndex) {
        await ctx.tx.dueWork.complete(item.siteId, item.id, this.#owner, ctx.now);
        return { kind: 'skipped' as const };
      }
      if (subscription.cancelAtEndOfPeriod) {
        const method = (subscription.data.pendingCancellationMethod as CancellationMethod | undefined) ?? 'merchant_api';
        await cancelNow(ctx, site, subscription, method, subscription.cancellationMessage);
        await ctx.tx.dueWork.complete(item.siteId, item.id, this.#owner, ctx.now);
        return { kind: 'skipped' as const };
      }
      const version = await ctx.tx.catalog.findProductVersion(site.id, subscription.productId, subscription.productVersion);
      if (!version) throw new BillingError('storage', `Subscription ${subscription.id} refers to a missing product version.`);
      const period = nextPeriod(subscription, version.terms, site.timeZone, site.settings.periodRule);
      const advanced = await ctx.tx.subscriptions.updateAtVersion(site.id, subscription.id, subscription.version, {
        periodIndex: period.index,
        currentPeriodStartedAt: period.start,
        currentPeriodEndsAt: period.end,
        nextAssessmentAt: period.end,
        // A trial ends when its first paid period starts, whatever the payment gives.
        state: subscription.state === 'trialing' ? 'active' : subscription.state,
        activatedAt: subscription.activatedAt ?? ctx.now,
        updatedAt: ctx.now,
      });
      if (!advanced) throw new BillingError('conflict', `Subscription ${subscription.id} changed during its renewal.`);
      const memo = `${version.terms.name} (${period.start.toISOString().slice(0, 10)} - ${period.end.toISOString().slice(0, 10)})`;
      await ctx.tx.ledger.append([line(advanced, 'charge', 'baseline', version.terms.priceInCents, memo, ctx.now, { periodIndex: period.index })]);
      if (subscription.state === 'trialing') recordStateChange(ctx, advanced, 'trialing');
      const balance = await ctx.tx.ledger.balance(site.id, subscription.id);
      if (balance <= 0 || advanced.paymentProfileId === null) {
        await this.#finish(ctx, item, advanced, balance <= 0);
        return { kind: balance <= 0 ? ('renewed' as const) : ('failed' as const) };
      }
      const attempt = await ctx.tx.payments.insert({
        siteId: site.id,
        subscriptionId: subscription.id,
        customerId: subscription.customerId,
        idempotencyKey: key,
        amountInCents: balance,
        currency: site.currency,
        purpose: 'renewal',
        status: 'pending',
        gatewayTransactionId: null,
        message: null,
        transactionId: null,
        createdAt: ctx.now,
        updatedAt: ctx.now,
      });
      return { kind: 'pay' as const, attempt, subscription: advanced };
    });
    if (prepared.kind !== 'pay') return prepared.kind;

    const result = await this.#charge(prepared.attempt, prepared.subscription);
    return runCommand(deps, async (ctx) => {
      const subscription = await ctx.tx.subscriptions.findById(item.siteId, item.subjectId);
      if (!subscription) throw new BillingError('not_found', `Subscription ${item.subjectId} vanished during its renewal.`);
      const message = result.outcome === 'success' ? null : result.message;
      const status = result.outcome === 'success' ? 'succeeded' : result.outcome === 'declined' ? 'declined' : result.outcome === 'error' ? 'failed' : 'unknown';
      if (status === 'unknown') {
        // No answer from the gateway: keep the attempt and retry the item later; the retry
        // looks the key up at the gateway before it would charge.
        await ctx.tx.payments.update(item.siteId, prepared.attempt.id, { status, message, updatedAt: ctx.now });
        const retryFrom = Math.max(this.#deps.clock.now().getTime(), item.dueAt.getTime());
        await ctx.tx.dueWork.release(item.siteId, item.id, this.#owner, new Date(retryFrom + UNKNOWN_RETRY_MS), ctx.now);
        return 'pending' as const;
      }
      if (result.outcome === 'success') {
        const [payment] = await ctx.tx.ledger.append([
          line(subscription, 'payment', null, prepared.attempt.amountInCents, `Payment for renewal`, ctx.now, {
            success: true,
            gatewayTransactionId: result.transactionId,
          }),
        ]);
        await ctx.tx.payments.update(item.siteId, prepared.attempt.id, {
          status,
          gatewayTransactionId: result.transactionId,
          transactionId: payment!.id,
          updatedAt: ctx.now,
        });
        let settled = subscription;
        if (subscription.state !== 'active') {
          const moved = await ctx.tx.subscriptions.updateAtVersion(item.siteId, subscription.id, subscription.version, {
            state: transition(subscription.state, 'renewal_paid'),
            updatedAt: ctx.now,
          });
          if (!moved) throw new BillingError('conflict', `Subscription ${subscription.id} changed during its renewal.`);
          recordStateChange(ctx, moved, subscription.state);
          settled = moved;
        }
        recordPayment(ctx, settled, payment!, true);
        await this.#finish(ctx, item, settled, true);
        return 'renewed' as const;
      }
      await ctx.tx.payments.update(item.siteId, prepared.attempt.id, { status, message, updatedAt: ctx.now });
      const state: SubscriptionState = transition(subscription.state, result.outcome === 'declined' ? 'renewal_declined' : 'renewal_error');
      const moved = await ctx.tx.subscriptions.updateAtVersion(item.siteId, subscription.id, subscription.version, { state, updatedAt: ctx.now });
      if (!moved) throw new BillingError('conflict', `Subscription ${subscription.id} changed during its renewal.`);
      if (subscription.state !== state) recordStateChange(ctx, moved, subscription.state);
      ctx.record({
        siteId: item.siteId,
        key: 'payment_failure',
        subjectType: 'subscription',
        subjectId: subscription.id,
        payload: { subscription: { id: subscription.id, state }, message },
      });
      await this.#finish(ctx, item, moved, false);
      return result.outcome === 'declined' ? ('declined' as const) : ('failed' as const);
    });
  }

  async #charge(attempt: PaymentAttemptRecord, subscription: SubscriptionRecord): Promise<ChargeResult> {
    if (attempt.status === 'succeeded' && attempt.gatewayTransactionId) return { outcome: 'success', transactionId: attempt.gatewayTransactionId };
    const profileId = subscription.paymentProfileId;
    const profile =
      profileId === null
        ? undefined
        : await this.#deps.storage.transaction((tx) => tx.customers.findPaymentProfile(subscription.siteId, profileId));
    if (!profile) return { outcome: 'error', message: 'No payment profile on file.' };
    return chargeAttempt(this.#deps.gateway, attempt, profile, `Renewal of subscription ${subscription.id}`);
  }

  async #finish(
    ctx: import('./command-runner.js').CommandContext,
    item: DueWorkRecord,
    subscription: SubscriptionRecord,
    success: boolean,
  ): Promise<void> {
    ctx.record({
      siteId: item.siteId,
      key: success ? 'renewal_success' : 'renewal_failure',
      subjectType: 'subscription',
      subjectId: subscription.id,
      payload: { subscription: { id: subscription.id, state: subscription.state } },
    });
    await scheduleRenewalAt(ctx, subscription);
    await ctx.tx.dueWork.complete(item.siteId, item.id, this.#owner, ctx.now);
  }
}
