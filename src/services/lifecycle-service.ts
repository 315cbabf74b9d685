import { LIVE_STATES, resumeCanceled, transition } from '../domain/subscription/state-machine.js';
import { addInterval, parseInstant } from '../domain/time/index.js';
import { BillingError, invalid, ValidationCollector } from '../errors.js';
import type {
  AddressFields,
  PaymentCollectionMethod,
  SiteRecord,
  SubscriptionRecord,
  SubscriptionState,
} from '../ports/storage.js';
import { voidAdvanceInvoiceOnClose } from './advance-invoice-service.js';
import { type BillingManifest, nextBillingManifest } from './billing-manifest.js';
import { type CommandContext, runCommand } from './command-runner.js';
import { delayedStartInFlight, moveDelayedStart } from './delayed-signup-schedule.js';
import { post } from './posting.js';
import { isPrepaid, withoutPrepaidConfiguration } from './prepaid-configuration.js';
import { changeProductInCommand, type ProductChangeInput } from './product-change.js';
import { reasonCodeForCancellation } from './reason-code-service.js';
import { SUBSCRIPTION_WORK, scheduleRenewalAt } from './renewal-schedule.js';
import { loadSite } from './site-lookup.js';
import {
  type CreditCardInput,
  line,
  loadSubscription,
  loadView,
  parsePaymentCollectionMethod,
  prepareNewCard,
  replaceCardInCommand,
  type SubscriptionDeps,
  type SubscriptionView,
} from './subscription-service.js';

/** The subscription data key keeping the churn reason code its cancellation named (the site's spelling). */
export const REASON_CODE_DATA_KEY = 'reasonCode';

/** How a cancellation was asked for. */
export type CancellationMethod = 'merchant_ui' | 'merchant_api' | 'dunning' | 'billing_portal' | 'unknown' | 'imported';

/** Input of {@link LifecycleService.cancel}. */
export interface CancelInput {
  readonly cancellationMessage?: string | null;
  /** Cancel at the end of the current period instead of now. */
  readonly cancelAtEndOfPeriod?: boolean;
  readonly cancellationMethod?: CancellationMethod;
  readonly reasonCode?: string | null;
}

/** Input of {@link LifecycleService.update}: any of the three, applied in this order. */
export interface SubscriptionUpdateInput {
  readonly creditCard?: CreditCardInput & { billingAddress?: Partial<AddressFields> };
  readonly productChange?: ProductChangeInput | { delayed: true; productId: null };
  readonly nextBillingAt?: Date | string;
  /**
   * `automatic`, `remittance` or `invoice` (remittance's older name); applied after the card, so
   * a card given in the same update lets a remittance subscription switch to automatic.
   */
  readonly paymentCollectionMethod?: string;
}

/** Input of {@link LifecycleService.reactivate}. */
export interface ReactivateInput {
  /** Start the product's trial again instead of charging now. */
  readonly includeTrial?: boolean;
  /** Keep the balance owed (or credit) instead of resetting it to zero. */
  readonly preserveBalance?: boolean;
  /** Within the canceled period: return to the previous state with the billing dates unchanged. */
  readonly resume?: boolean;
  /** With `resume`: fail instead of reactivating normally when the subscription cannot be resumed. */
  readonly requireResume?: boolean;
}

/** The answer of {@link LifecycleService.previewRenewal}. */
export interface RenewalPreview {
  /** When the renewal is due. */
  readonly nextAssessmentAt: Date;
  /** Its lines, subtotal, discounts and total. */
  readonly manifest: BillingManifest;
  /** The balance owed now, before the renewal. */
  readonly existingBalanceInCents: number;
  /** The balance plus the renewal's total. */
  readonly totalAmountDueInCents: number;
}

/** Input of {@link LifecycleService.hold}. */
export interface HoldInput {
  /** Resume automatically at this instant. */
  readonly automaticallyResumeAt?: Date | string | null;
}

const DAY_MS = 86_400_000;

/** Runs one subscription's due work now (the renewal service), after a change that makes some due. */
export interface DueWorkRunner {
  runDueFor(siteId: number, subjectId: number): Promise<unknown>;
}

/**
 * The lifecycle of a subscription after signup: cancel now or at the end of the period, undo,
 * reactivate (with trial, preserving the balance, or resuming within the canceled period), hold
 * and resume, and billing-date changes. Every state change goes through the state machine and
 * records `subscription_state_change` with `previous_state`.
 */
export class LifecycleService {
  readonly #deps: SubscriptionDeps;
  readonly #renewals: DueWorkRunner;

  constructor(deps: SubscriptionDeps, renewals: DueWorkRunner) {
    this.#deps = deps;
    this.#renewals = renewals;
  }

  /** Cancels now, or at the end of the period with `cancelAtEndOfPeriod`. */
  async cancel(subdomain: string, id: number, input: CancelInput = {}): Promise<SubscriptionView> {
    if (input.cancelAtEndOfPeriod) return this.cancelAtEndOfPeriod(subdomain, id, input);
    return this.#command(subdomain, id, async (ctx, site, subscription) => {
      if (delayedStartInFlight(subscription))
        throw invalid(
          'The first payment of this subscription is in progress; it was not canceled. Try again when it has finished.',
        );
      const reasonCode = await reasonCodeForCancellation(ctx.tx, site.id, input.reasonCode);
      await cancelNow(
        ctx,
        site,
        subscription,
        input.cancellationMethod ?? 'merchant_api',
        input.cancellationMessage ?? null,
        reasonCode,
      );
    });
  }

  /** Marks the subscription to be canceled when its current period ends. Not while past due. */
  async cancelAtEndOfPeriod(
    subdomain: string,
    id: number,
    input: Omit<CancelInput, 'cancelAtEndOfPeriod'> = {},
  ): Promise<SubscriptionView> {
    return this.#command(subdomain, id, async (ctx, site, subscription) => {
      transition(subscription.state, 'delayed_cancel');
      if (subscription.state === 'past_due')
        throw invalid('A subscription that is past due cannot be set to cancel at the end of the period.');
      const reasonCode = await reasonCodeForCancellation(ctx.tx, site.id, input.reasonCode);
      await update(ctx, site, subscription, {
        cancelAtEndOfPeriod: true,
        delayedCancelAt: subscription.currentPeriodEndsAt,
        cancellationMessage: input.cancellationMessage ?? subscription.cancellationMessage,
        data: {
          ...subscription.data,
          pendingCancellationMethod: input.cancellationMethod ?? 'merchant_api',
          ...(reasonCode === null ? {} : { [REASON_CODE_DATA_KEY]: reasonCode }),
        },
      });
    });
  }

  /** Clears a delayed cancellation; idempotent. */
  async undoCancelAtEndOfPeriod(subdomain: string, id: number): Promise<SubscriptionView> {
    return this.#command(subdomain, id, async (ctx, site, subscription) => {
      if (!subscription.cancelAtEndOfPeriod) return;
      await update(ctx, site, subscription, { cancelAtEndOfPeriod: false, delayedCancelAt: null });
    });
  }

  /**
   * Reactivates a canceled, unpaid or trial-ended subscription. By default the balance resets to
   * zero and a new period starts now and is charged at once (through the renewal path, so a
   * decline leads to dunning like any renewal); `includeTrial` starts a trial instead; `resume`
   * within the canceled period returns to the previous state with the dates unchanged.
   */
  async reactivate(subdomain: string, id: number, input: ReactivateInput = {}): Promise<SubscriptionView> {
    let chargeNow = false;
    const view = await this.#command(subdomain, id, async (ctx, site, subscription) => {
      const resumable =
        subscription.state === 'cancelled' &&
        subscription.currentPeriodEndsAt.getTime() > ctx.now.getTime() &&
        subscription.canceledAt !== null;
      if ((input.resume || input.requireResume) && resumable) {
        const previous = resumeCanceled(
          subscription.state,
          subscription.data.stateBeforeCancel as SubscriptionState | undefined,
        );
        const moved = await update(ctx, site, subscription, {
          state: previous,
          canceledAt: null,
          cancellationMessage: null,
          cancellationMethod: null,
          nextAssessmentAt: subscription.currentPeriodEndsAt,
        });
        await scheduleRenewalAt(ctx, moved, moved.currentPeriodEndsAt);
        return;
      }
      if (input.requireResume) throw invalid("Request was 'resume only', but this subscription cannot be resumed.");
      const to = transition(subscription.state, input.includeTrial ? 'reactivate_with_trial' : 'reactivate');
      const version = await ctx.tx.catalog.findProductVersion(
        site.id,
        subscription.productId,
        subscription.productVersion,
      );
      if (!version)
        throw new BillingError('storage', `Subscription ${subscription.id} refers to a missing product version.`);
      const balance = await ctx.tx.ledger.balance(site.id, subscription.id);
      if (!input.preserveBalance && balance !== 0) {
        await post(ctx.tx, [
          line(subscription, 'adjustment', 'reactivation', -balance, 'Balance reset at reactivation', ctx.now),
        ]);
      }
      const nextIndex = subscription.periodIndex + 1;
      const trialEnd =
        to === 'trialing' && version.terms.trialInterval !== null
          ? addInterval(
              ctx.now,
              { count: version.terms.trialInterval, unit: version.terms.trialIntervalUnit ?? 'month' },
              1,
              site.timeZone,
            )
          : null;
      const anchor = trialEnd ?? ctx.now;
      const moved = await update(ctx, site, subscription, {
        state: trialEnd ? 'trialing' : to === 'trialing' ? 'active' : to,
        canceledAt: null,
        cancellationMessage: null,
        cancellationMethod: null,
        cancelAtEndOfPeriod: false,
        delayedCancelAt: null,
        periodAnchorAt: anchor,
        currentPeriodStartedAt: ctx.now,
        currentPeriodEndsAt: anchor,
        nextAssessmentAt: anchor,
        trialStartedAt: trialEnd ? ctx.now : subscription.trialStartedAt,
        trialEndedAt: trialEnd ?? subscription.trialEndedAt,
        activatedAt: subscription.activatedAt ?? ctx.now,
        data: { ...subscription.data, anchorIndex: nextIndex, reactivatedAt: ctx.now.toISOString() },
      });
      await scheduleRenewalAt(ctx, moved, anchor);
      chargeNow = trialEnd === null;
    });
    if (!chargeNow) return view;
    await this.#renewals.runDueFor(view.subscription.siteId, id);
    return this.#get(subdomain, id);
  }

  /** Puts a live subscription on hold; not within 24 hours of its next billing. */
  async hold(subdomain: string, id: number, input: HoldInput = {}): Promise<SubscriptionView> {
    return this.#command(subdomain, id, async (ctx, site, subscription) => {
      const resumeAt =
        input.automaticallyResumeAt == null
          ? null
          : parseInstant(input.automaticallyResumeAt, site.timeZone, 'Automatically resume at');
      transition(subscription.state, 'hold');
      const next = subscription.nextAssessmentAt;
      if (next !== null && next.getTime() - ctx.now.getTime() < DAY_MS)
        throw invalid('This subscription is not eligible to be put on hold.');
      if (resumeAt !== null && resumeAt.getTime() <= ctx.now.getTime())
        throw invalid('Automatically resume at: must be in the future.');
      await ctx.tx.dueWork.cancelFor(site.id, subscription.id, SUBSCRIPTION_WORK, ctx.now);
      const moved = await update(ctx, site, subscription, {
        state: 'on_hold',
        nextAssessmentAt: null,
        data: { ...subscription.data, stateBeforeHold: subscription.state, heldAt: ctx.now.toISOString() },
      });
      if (resumeAt !== null) {
        await ctx.tx.dueWork.schedule({
          siteId: site.id,
          kind: 'auto_resume',
          subjectId: moved.id,
          dueAt: resumeAt,
          uniqueKey: `auto_resume:${moved.id}:${resumeAt.getTime()}`,
        });
      }
    });
  }

  /**
   * Changes when a subscription on hold resumes by itself: at `automaticallyResumeAt` (in the
   * future), or never with null. The hold itself is unchanged.
   */
  async changeAutoResume(subdomain: string, id: number, input: HoldInput): Promise<SubscriptionView> {
    return this.#command(subdomain, id, async (ctx, site, subscription) => {
      if (subscription.state !== 'on_hold')
        throw new BillingError(
          'invalid_transition',
          `The resume date of a subscription that is ${subscription.state}, not on hold, cannot be changed.`,
        );
      const resumeAt =
        input.automaticallyResumeAt == null
          ? null
          : parseInstant(input.automaticallyResumeAt, site.timeZone, 'Automatically resume at');
      if (resumeAt !== null && resumeAt.getTime() <= ctx.now.getTime())
        throw invalid('Automatically resume at: must be in the future.');
      await ctx.tx.dueWork.cancelFor(site.id, subscription.id, ['auto_resume'], ctx.now);
      if (resumeAt !== null) {
        await ctx.tx.dueWork.schedule({
          siteId: site.id,
          kind: 'auto_resume',
          subjectId: subscription.id,
          dueAt: resumeAt,
          uniqueKey: `auto_resume:${subscription.id}:${resumeAt.getTime()}`,
        });
      }
    });
  }

  /**
   * Retries the payment of a subscription in dunning now (`PUT /subscriptions/{id}/retry.json`):
   * its next dunning retry is brought forward to now and run, with the same attempt number, so the
   * retries after it keep their schedule and count.
   */
  async retry(subdomain: string, id: number): Promise<SubscriptionView> {
    const view = await this.#command(subdomain, id, async (ctx, site, subscription) => {
      const [next] = await ctx.tx.dueWork.pendingFor(site.id, subscription.id, ['dunning_retry']);
      if (next === undefined || next.status !== 'pending')
        throw new BillingError(
          'invalid_transition',
          `A subscription that is ${subscription.state} has no payment retry to run now.`,
        );
      await ctx.tx.dueWork.cancelFor(site.id, subscription.id, ['dunning_retry'], ctx.now);
      await ctx.tx.dueWork.schedule({
        siteId: site.id,
        kind: 'dunning_retry',
        subjectId: subscription.id,
        dueAt: ctx.now,
        // A key of its own: the canceled row keeps the scheduled one.
        uniqueKey: `${next.uniqueKey}:now:${ctx.now.getTime()}`,
        payload: next.payload,
      });
    });
    await this.#renewals.runDueFor(view.subscription.siteId, id);
    return this.#get(subdomain, id);
  }

  /**
   * Stops the dunning of a subscription (`POST /subscriptions/{id}/cancel_dunning.json`): a
   * subscription in dunning (past due or soft failure) returns to active and its pending payment
   * retries are canceled, so no further retry, final action (cancel or unpaid) or dunning notice
   * happens. The balance stays owed; the next renewal charges as usual. A subscription not in
   * dunning is refused (422), and nothing changes.
   */
  async cancelDunning(subdomain: string, id: number): Promise<SubscriptionView> {
    return this.#command(subdomain, id, async (ctx, site, subscription) => {
      if (subscription.state !== 'past_due' && subscription.state !== 'soft_failure')
        throw new BillingError(
          'invalid_transition',
          `A subscription that is ${subscription.state} is not in dunning; there is no dunning to cancel.`,
        );
      await ctx.tx.dueWork.cancelFor(site.id, subscription.id, ['dunning_retry'], ctx.now);
      // The one table move from a dunning state to active; the check above keeps `unpaid` out.
      await update(ctx, site, subscription, { state: transition(subscription.state, 'balance_settled') });
    });
  }

  /**
   * What the subscription's next renewal will charge (`POST /subscriptions/{id}/renewals/preview.json`),
   * line by line, from the same assessment the renewal runs (the engine's billing manifest), with
   * the balance already owed. Reads only. Only a live subscription (trialing, active, in dunning or
   * unpaid) renews; a delayed signup not started yet (`awaiting_signup`) shows its start instead:
   * due at `initial_billing_at`, billing what the billing manifest of such a subscription shows
   * (the lines `planDelayedStart` plans at that instant, which the due work writes). Any other
   * state is refused (422).
   */
  async previewRenewal(subdomain: string, id: number): Promise<RenewalPreview> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      const subscription = await loadSubscription(tx, site.id, id);
      const renews = LIVE_STATES.includes(subscription.state) || subscription.state === 'awaiting_signup';
      if (!renews || subscription.nextAssessmentAt === null) {
        throw new BillingError(
          'invalid_transition',
          `A subscription that is ${subscription.state} has no renewal to preview.`,
        );
      }
      const manifest = await nextBillingManifest(tx, site, subscription, this.#deps.clock.now());
      const existingBalanceInCents = await tx.ledger.balance(site.id, subscription.id);
      return {
        nextAssessmentAt: subscription.nextAssessmentAt,
        manifest,
        existingBalanceInCents,
        totalAmountDueInCents: existingBalanceInCents + manifest.totalInCents,
      };
    });
  }

  /**
   * Activates a trialing subscription now (`PUT /subscriptions/{id}/activate.json`): the trial
   * ends at once and the first period is charged, as when the trial runs out.
   */
  async activate(subdomain: string, id: number): Promise<SubscriptionView> {
    let runNow = false;
    const view = await this.#command(subdomain, id, async (ctx, site, subscription) => {
      if (subscription.state !== 'trialing')
        throw new BillingError(
          'invalid_transition',
          `A subscription that is ${subscription.state} cannot be activated; only a trialing one can.`,
        );
      runNow = (await changeBillingDateInCommand(ctx, site, subscription, ctx.now)).runNow;
    });
    if (!runNow) return view;
    await this.#renewals.runDueFor(view.subscription.siteId, id);
    return this.#get(subdomain, id);
  }

  /** Resumes a subscription on hold: a new period starts now and is charged at once. */
  async resume(subdomain: string, id: number): Promise<SubscriptionView> {
    const view = await this.#command(subdomain, id, async (ctx, site, subscription) => {
      await resumeInCommand(ctx, site, subscription);
    });
    await this.#renewals.runDueFor(view.subscription.siteId, id);
    return this.#get(subdomain, id);
  }

  /**
   * Changes when the subscription is next billed. A past or immediate time bills now; while
   * trialing it moves the trial end. Records `billing_date_change` with the previous date.
   */
  async changeBillingDate(subdomain: string, id: number, nextBillingAt: Date | string): Promise<SubscriptionView> {
    let runNow = false;
    const view = await this.#command(subdomain, id, async (ctx, site, subscription) => {
      runNow = (await changeBillingDateInCommand(ctx, site, subscription, nextBillingAt)).runNow;
    });
    if (!runNow) return view;
    await this.#renewals.runDueFor(view.subscription.siteId, id);
    return this.#get(subdomain, id);
  }

  /**
   * Several changes to a subscription in one command (`PUT /subscriptions/{id}.json`): a new card,
   * then a product change, then a billing date, in that order (a billing date in the past is
   * charged to the new card, for the new product). The card is checked and tokenized first; then
   * everything is written in one transaction, so if any change is refused none is kept.
   */
  async update(subdomain: string, id: number, change: SubscriptionUpdateInput): Promise<SubscriptionView> {
    // Read before the card is tokenized, so a bad method is refused before the gateway is asked.
    const method = readCollectionMethod(change.paymentCollectionMethod);
    const newCard =
      change.creditCard === undefined
        ? undefined
        : await prepareNewCard(this.#deps.gateway, await this.#get(subdomain, id), change.creditCard);
    let runNow = false;
    const view = await this.#command(subdomain, id, async (ctx, site, loaded) => {
      let subscription = loaded;
      if (newCard !== undefined) subscription = await replaceCardInCommand(ctx, site, subscription, newCard);
      if (method !== undefined) subscription = await changeCollectionMethodInCommand(ctx, site, subscription, method);
      if (change.productChange !== undefined) {
        subscription = await changeProductInCommand(ctx, site, subscription, change.productChange);
      }
      if (change.nextBillingAt !== undefined) {
        runNow = (await changeBillingDateInCommand(ctx, site, subscription, change.nextBillingAt)).runNow;
      }
    });
    if (!runNow) return view;
    await this.#renewals.runDueFor(view.subscription.siteId, id);
    return this.#get(subdomain, id);
  }

  async #command(
    subdomain: string,
    id: number,
    work: (ctx: CommandContext, site: SiteRecord, subscription: SubscriptionRecord) => Promise<void>,
  ): Promise<SubscriptionView> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, id);
      await work(ctx, site, subscription);
      return loadView(ctx.tx, site.id, id);
    });
  }

  #get(subdomain: string, id: number): Promise<SubscriptionView> {
    return this.#deps.storage.transaction(async (tx) => loadView(tx, (await loadSite(tx, subdomain)).id, id));
  }
}

/** A collection method given to an update, read as the service names them; a bad one is a 422. */
function readCollectionMethod(value: string | undefined): PaymentCollectionMethod | undefined {
  if (value === undefined) return undefined;
  const errors = new ValidationCollector();
  const method = parsePaymentCollectionMethod(value, errors);
  errors.throwIfAny();
  return method;
}

/**
 * Changes how a subscription's invoices are paid. Automatic collection charges the payment profile,
 * so a subscription without one is refused (422) and keeps its method. A switch to remittance ends
 * a dunning cycle in progress: the engine no longer charges the subscription, so its retries would
 * have nothing to do; the balance stays owed on the open invoices for the customer to pay. Invoices
 * already issued keep their state either way, and a switch to automatic collects nothing at once:
 * the next renewal charges the balance then owed.
 */
export async function changeCollectionMethodInCommand(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  method: PaymentCollectionMethod,
): Promise<SubscriptionRecord> {
  // A prepaid subscription (automatic plus a configuration) leaves prepaid for either method: its
  // configuration is dropped, and its prepayment balance stays as credit its charges use.
  const prepaid = isPrepaid(subscription);
  if (method === subscription.paymentCollectionMethod && !prepaid) return subscription;
  if (method === 'automatic' && subscription.paymentProfileId === null) {
    throw invalid(
      'Payment collection method: automatic collection needs a payment profile; add a card first.',
      'payment_collection_method',
    );
  }
  const changed = await update(ctx, site, subscription, {
    paymentCollectionMethod: method,
    ...(prepaid ? { data: withoutPrepaidConfiguration(subscription.data) } : {}),
  });
  if (method === 'remittance') await ctx.tx.dueWork.cancelFor(site.id, subscription.id, ['dunning_retry'], ctx.now);
  return changed;
}

/** Writes a patch at the subscription's version, recording a state change when the state moves. */
async function update(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  patch: Parameters<CommandContext['tx']['subscriptions']['updateAtVersion']>[3],
): Promise<SubscriptionRecord> {
  const moved = await ctx.tx.subscriptions.updateAtVersion(site.id, subscription.id, subscription.version, {
    ...patch,
    updatedAt: ctx.now,
  });
  if (!moved) throw new BillingError('conflict', 'The subscription was changed by another request; try again.');
  if (moved.state !== subscription.state) recordStateChange(ctx, moved, subscription.state);
  return moved;
}

/** Records `subscription_state_change` with the previous state. */
export function recordStateChange(
  ctx: CommandContext,
  subscription: SubscriptionRecord,
  previous: SubscriptionState,
): void {
  ctx.record({
    siteId: subscription.siteId,
    key: 'subscription_state_change',
    subjectType: 'subscription',
    subjectId: subscription.id,
    payload: { subscription: { id: subscription.id, state: subscription.state, previous_state: previous } },
  });
}

/** Cancels a subscription now (also used by dunning and delayed cancellation). */
export async function cancelNow(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  method: CancellationMethod,
  message: string | null,
  reasonCode: string | null = null,
): Promise<SubscriptionRecord> {
  const to = transition(subscription.state, 'cancel');
  await ctx.tx.dueWork.cancelFor(site.id, subscription.id, SUBSCRIPTION_WORK, ctx.now);
  // An open advance invoice bills a period that will never start: it is voided.
  await voidAdvanceInvoiceOnClose(ctx, subscription, 'Subscription canceled');
  return update(ctx, site, subscription, {
    state: to,
    canceledAt: ctx.now,
    cancellationMessage: message,
    cancellationMethod: method,
    cancelAtEndOfPeriod: false,
    delayedCancelAt: null,
    nextAssessmentAt: null,
    data: {
      ...subscription.data,
      stateBeforeCancel: subscription.state,
      // A delayed cancellation keeps the code it was asked with unless this one names another.
      ...(reasonCode === null ? {} : { [REASON_CODE_DATA_KEY]: reasonCode }),
    },
  });
}

/** Moves a subscription off hold and schedules the charge of a new period starting now. */
export async function resumeInCommand(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
): Promise<SubscriptionRecord> {
  transition(subscription.state, 'resume');
  const moved = await update(ctx, site, subscription, {
    state: 'active',
    periodAnchorAt: ctx.now,
    currentPeriodStartedAt: ctx.now,
    currentPeriodEndsAt: ctx.now,
    nextAssessmentAt: ctx.now,
    data: { ...subscription.data, anchorIndex: subscription.periodIndex + 1, resumedAt: ctx.now.toISOString() },
  });
  await ctx.tx.dueWork.cancelFor(site.id, subscription.id, ['auto_resume'], ctx.now);
  await scheduleRenewalAt(ctx, moved, ctx.now);
  return moved;
}

/**
 * Returns a subscription in dunning (past due, soft failure) or unpaid to active when its balance
 * has been paid by other means (an external payment, a credit, an adjustment), and stops its
 * dunning retries (once the balance is paid, or reset to 0).
 */
export async function settleIfPaid(ctx: CommandContext, siteId: number, subscriptionId: number): Promise<void> {
  const subscription = await ctx.tx.subscriptions.findById(siteId, subscriptionId);
  if (!subscription || !['past_due', 'soft_failure', 'unpaid'].includes(subscription.state)) return;
  if ((await ctx.tx.ledger.balance(siteId, subscriptionId)) > 0) return;
  const site = await ctx.tx.sites.findById(siteId);
  if (!site) return;
  await update(ctx, site, subscription, { state: transition(subscription.state, 'balance_settled') });
  await ctx.tx.dueWork.cancelFor(siteId, subscriptionId, ['dunning_retry'], ctx.now);
}

/**
 * Moves the next billing date inside a command (a past or immediate time bills now; while trialing
 * it moves the trial end; while awaiting its signup it moves the start, see `moveDelayedStart`)
 * and records `billing_date_change`. `runNow`: the renewal is due at once,
 * to be run after the commit.
 */
export async function changeBillingDateInCommand(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  nextBillingAt: Date | string,
): Promise<{ subscription: SubscriptionRecord; runNow: boolean }> {
  const at = parseInstant(nextBillingAt, site.timeZone, 'Next billing at');
  // Before a delayed signup starts, its billing date is its start (`initial_billing_at`).
  if (subscription.state === 'awaiting_signup') return moveDelayedStart(ctx, site, subscription, at);
  if (!LIVE_STATES.includes(subscription.state)) {
    throw new BillingError(
      'invalid_transition',
      `The billing date of a subscription that is ${subscription.state} cannot be changed.`,
    );
  }
  const when = at.getTime() < ctx.now.getTime() ? ctx.now : at;
  await ctx.tx.dueWork.cancelFor(site.id, subscription.id, ['renewal'], ctx.now);
  const moved = await update(ctx, site, subscription, {
    periodAnchorAt: when,
    currentPeriodEndsAt: when,
    nextAssessmentAt: when,
    trialEndedAt: subscription.state === 'trialing' ? when : subscription.trialEndedAt,
    data: { ...subscription.data, anchorIndex: subscription.periodIndex + 1 },
  });
  await scheduleRenewalAt(ctx, moved, when);
  ctx.record({
    siteId: site.id,
    key: 'billing_date_change',
    subjectType: 'subscription',
    subjectId: subscription.id,
    payload: {
      subscription: {
        id: subscription.id,
        previous_billing_date: subscription.nextAssessmentAt?.toISOString() ?? null,
        next_billing_date: when.toISOString(),
      },
    },
  });
  return { subscription: moved, runNow: when.getTime() <= ctx.now.getTime() };
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const LIFECYCLE_METHODS = [
  'changeBillingDate',
  'update',
  'cancel',
  'cancelAtEndOfPeriod',
  'undoCancelAtEndOfPeriod',
  'reactivate',
  'hold',
  'resume',
  'changeAutoResume',
  'retry',
  'activate',
  'cancelDunning',
  'previewRenewal',
] as const;
