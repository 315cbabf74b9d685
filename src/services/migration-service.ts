import { randomUUID } from 'node:crypto';
import { remainderOf, unpaidRemainder } from '../billing/assessment.js';
import { productInterval } from '../domain/subscription/periods.js';
import { addInterval, billingPeriod, parseInstant } from '../domain/time/index.js';
import { BillingError, invalid, ValidationCollector } from '../errors.js';
import { callGateway, openRenewalAmount } from '../payments/collect.js';
import type {
  CouponRecord,
  NewTransaction,
  PaymentAttemptRecord,
  ProductRecord,
  ProductVersionRecord,
  SiteRecord,
  SubscriptionRecord,
} from '../ports/storage.js';
import { refusePeriodRestartWithAdvanceInvoice } from './advance-invoice-service.js';
import { type CommandContext, runCommand } from './command-runner.js';
import { renewalComponentLines } from './component-billing.js';
import { type CustomPricePlan, checkCustomPrice, plannedCustomView, writeCustomPricePoint } from './custom-price.js';
import { recordStateChange } from './lifecycle-service.js';
import {
  claimOpenCollection,
  pendingAttempt,
  releaseOpenCollection,
  scheduleRefundIfUncommitted,
  subscriptionCollection,
} from './payment-runner.js';
import { couponDataAfter, periodCoupons, renewalCoupons } from './period-assessment.js';
import { type ProductPricePointInput, resolveSignupVersion } from './price-point-service.js';
import { changeProductInCommand, findTarget, type ProductChangeInput, writeAtVersion } from './product-change.js';
import { scheduleRenewalAt } from './renewal-schedule.js';

export type { ProductChangeInput };

import { collectableAmount, collectableBalance, post } from './posting.js';
import { loadSite } from './site-lookup.js';
import {
  couponDiscounts,
  line,
  loadSubscription,
  loadView,
  recordPayment,
  type SubscriptionDeps,
  type SubscriptionView,
} from './subscription-service.js';

/** Input of a prorated migration. */
export interface MigrationInput {
  readonly productHandle?: string;
  readonly productId?: number;
  /** A specific version of the target product (default its current one): moves between versions. */
  readonly productVersion?: number;
  /**
   * A price point of the target product (its current terms); with only this given, the product is
   * the price point's. An unknown, another product's or an archived price point is refused.
   */
  readonly pricePointId?: number;
  /** A price point of the target product by handle (needs the product). */
  readonly pricePointHandle?: string;
  /** Keep the period dates; the new price is prorated to the rest of the period. */
  readonly preservePeriod?: boolean;
  /** Start the target's trial (ignored with `preservePeriod`). */
  readonly includeTrial?: boolean;
  /** Charge the target's setup fee. */
  readonly includeInitialCharge?: boolean;
  /** Preview only: the instant to prorate at (within the current period); default now. */
  readonly prorationDate?: Date | string;
  /**
   * Terms of the subscription's own instead of a price point (`custom_price`): written as a
   * `custom` price point of the target product (the subscription's product when none is named)
   * when the migration is, and billed like any migration. Not with a price point or a version.
   */
  readonly customPrice?: ProductPricePointInput;
}

/** What a migration costs; a preview returns it and changes nothing. */
export interface MigrationPreview {
  /** The credit for unused time on the old product (negative, at least one minor unit when anything was paid). */
  readonly proratedAdjustmentInCents: number;
  /** The charge for the new product (full, or prorated with `preservePeriod`, plus a setup fee when included). */
  readonly chargeInCents: number;
  /** What the card is charged now: the balance after the credit and the charge, when positive. */
  readonly paymentDueInCents: number;
  /** How much of the charge is covered by credit (the proration credit and any existing credit). */
  readonly creditAppliedInCents: number;
}

/** A line a migration posts for the new product (a charge, or a coupon's discount of them). */
interface PlannedLine {
  readonly type: 'charge' | 'adjustment';
  readonly kind: string;
  readonly amountInCents: number;
  readonly memo: string;
  readonly componentId: number | null;
  /** The coupon of a discount line. */
  readonly couponCode?: string;
}

/** The plan of one migration: amounts plus what the commit writes. */
interface MigrationPlan extends MigrationPreview {
  readonly site: SiteRecord;
  readonly subscription: SubscriptionRecord;
  readonly target: { product: ProductRecord; version: ProductVersionRecord };
  readonly preservePeriod: boolean;
  readonly trialEnd: Date | null;
  /** What the current period had paid for its remaining time: credited back (0 or more). */
  readonly creditInCents: number;
  /** Charges for the new product and its coupons' discounts, in posting order. */
  readonly lines: readonly PlannedLine[];
  /** The total of the component charges of a new period (checked again when they are written). */
  readonly componentTotalInCents: number;
  /** The coupons that discounted a new period (their uses are counted when it is written). */
  readonly coupons: readonly CouponRecord[];
  /** A custom price to write as the target's price point (`target.version` holds its planned terms). */
  readonly customPrice?: CustomPricePlan;
}

const MIGRATABLE = ['active', 'trialing', 'trial_ended'] as const;

/**
 * Product changes: immediate or delayed changes without proration, and prorated migrations with
 * a preview. A migration is billed by recompute and diff (src/billing/assessment.ts): the credit
 * is what the lines already billed for the current period paid for its remaining time, so a
 * second change in one period never credits the same time twice, a coupon's discount lowers the
 * credit, and component charges are credited with the product's; the new product is then charged
 * with its components and coupons, for the rest of the period (`preservePeriod`) or for a new
 * full period. The credit is at least one minor unit when anything was paid for the period.
 */
export class MigrationService {
  readonly #deps: SubscriptionDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /**
   * Switches the product now (no charge or credit; the new price applies from the next renewal;
   * `subscription_product_change`), or at the next renewal with `delayed`. `productId: null`
   * with `delayed` cancels a pending delayed change.
   */
  async changeProduct(
    subdomain: string,
    id: number,
    input: ProductChangeInput | { delayed: true; productId: null },
  ): Promise<SubscriptionView> {
    return runCommand(this.#deps, async (ctx) => {
      const site = await loadSite(ctx.tx, subdomain);
      const subscription = await loadSubscription(ctx.tx, site.id, id);
      await changeProductInCommand(ctx, site, subscription, input);
      return loadView(ctx.tx, site.id, id);
    });
  }

  /** What migrating would cost; changes nothing. */
  async preview(subdomain: string, id: number, input: MigrationInput): Promise<MigrationPreview> {
    const plan = await runCommand(this.#deps, (ctx) => this.#plan(ctx, subdomain, id, input, true));
    return {
      proratedAdjustmentInCents: plan.proratedAdjustmentInCents,
      chargeInCents: plan.chargeInCents,
      paymentDueInCents: plan.paymentDueInCents,
      creditAppliedInCents: plan.creditAppliedInCents,
    };
  }

  /**
   * Migrates to another product (or another version of this one) with proration: a credit for
   * the unused time, a charge for the new product, and a payment of what is due, collected before
   * anything changes. The payment attempt commits with an exclusive claim on the subscription's
   * collections, so of concurrent migrations (or allocations) only one reaches the gateway. A
   * decline records `upgrade_downgrade_failure` and leaves the subscription as it was; success
   * records `upgrade_downgrade_success`.
   */
  async migrate(subdomain: string, id: number, input: MigrationInput): Promise<SubscriptionView> {
    if (input.prorationDate !== undefined)
      throw invalid('Proration date: may only be given to a preview.', 'proration_date');
    const plan = await runCommand(this.#deps, (ctx) => this.#plan(ctx, subdomain, id, input, false));
    const claim = subscriptionCollection(id);
    let paid: { attempt: PaymentAttemptRecord; transactionId: string } | undefined;
    if (plan.paymentDueInCents > 0) {
      const profileId = plan.subscription.paymentProfileId;
      const profile =
        profileId === null
          ? undefined
          : await this.#deps.storage.transaction((tx) => tx.customers.findPaymentProfile(plan.site.id, profileId));
      if (!profile) {
        throw invalid(`No credit card was on file for the ${plan.paymentDueInCents} balance.`);
      }
      const attempt = await runCommand(this.#deps, async ({ tx, now }) => {
        // Before the gateway: a concurrent command on this subscription is refused here, unpaid.
        await claimOpenCollection(tx, plan.site.id, claim, now);
        const current = await loadSubscription(tx, plan.site.id, id);
        if (current.version !== plan.subscription.version) throw changedMeanwhile();
        const pending = await tx.payments.insert(
          pendingAttempt({
            siteId: plan.site.id,
            subscriptionId: id,
            customerId: plan.subscription.customerId,
            idempotencyKey: `migration:${id}:${randomUUID()}`,
            amountInCents: plan.paymentDueInCents,
            currency: plan.site.currency,
            purpose: 'migration',
            now: now,
          }),
        );
        // A migration that is never written after its charge (a crash, a lost answer, a conflict)
        // is refunded by key; writing it, or a known failure, cancels this.
        await scheduleRefundIfUncommitted(tx, pending, now, claim);
        return pending;
      });
      const result = await callGateway(this.#deps.gateway, {
        attempt,
        vault: profile,
        description: `Migration of subscription ${id}`,
      });
      if (result.outcome !== 'success') {
        const outcome = result.outcome;
        await runCommand(this.#deps, async (ctx) => {
          await ctx.tx.payments.update(plan.site.id, attempt.id, {
            status: outcome === 'declined' ? 'declined' : outcome === 'error' ? 'failed' : 'unknown',
            message: result.message,
            updatedAt: ctx.now,
          });
          // A still-unknown outcome keeps its reconciliation, which refunds the charge if it was
          // taken and then releases the claim: until then no other command collects for this
          // subscription, so a retry by the caller cannot take the money a second time.
          if (outcome !== 'unknown') {
            await ctx.tx.dueWork.cancelFor(plan.site.id, attempt.id, ['reconcile_payment'], ctx.now);
            await releaseOpenCollection(ctx.tx, plan.site.id, claim);
          }
          ctx.record({
            siteId: plan.site.id,
            key: 'upgrade_downgrade_failure',
            subjectType: 'subscription',
            subjectId: id,
            payload: {
              subscription: { id },
              previous_product: { id: plan.subscription.productId },
              target_product: { id: plan.target.product.id },
              message: result.message,
            },
          });
        });
        throw new BillingError(result.outcome === 'declined' ? 'payment_declined' : 'gateway_error', result.message, {
          data: { attemptId: attempt.id },
        });
      }
      paid = { attempt, transactionId: result.transactionId };
    }
    try {
      return await runCommand(this.#deps, (ctx) => this.#write(ctx, plan, paid));
    } catch (error) {
      // Not written: the paid attempt's reconciliation refunds it; the claim must not outlive this.
      if (paid) {
        await this.#deps.storage.transaction((tx) => releaseOpenCollection(tx, plan.site.id, claim)).catch(() => {});
      }
      throw error;
    }
  }

  /** The commit of a migration (after its payment, if one was due): the move, the lines, the events. */
  async #write(
    ctx: CommandContext,
    plan: MigrationPlan,
    paid: { attempt: PaymentAttemptRecord; transactionId: string } | undefined,
  ): Promise<SubscriptionView> {
    const id = plan.subscription.id;
    const subscription = await loadSubscription(ctx.tx, plan.site.id, id);
    if (subscription.version !== plan.subscription.version) throw changedMeanwhile(paid !== undefined);
    const oldIndex = subscription.periodIndex;
    // A migration that resets the period opens period n+1 now: a trial period up to the trial end
    // (the anchor for the paid periods after it), or a full period anchored now.
    const newIndex = oldIndex + 1;
    const interval = productInterval(plan.target.version.terms);
    const period = billingPeriod(ctx.now, 0, interval, plan.site.timeZone);
    const couponData =
      plan.preservePeriod || plan.coupons.length === 0
        ? {}
        : couponDataAfter(
            subscription.data,
            plan.coupons,
            plan.lines.flatMap((l) => (l.couponCode === undefined ? [] : [{ code: l.couponCode }])),
          );
    const reset = plan.preservePeriod
      ? {}
      : plan.trialEnd !== null
        ? {
            periodIndex: newIndex,
            periodAnchorAt: plan.trialEnd,
            currentPeriodStartedAt: ctx.now,
            currentPeriodEndsAt: plan.trialEnd,
            nextAssessmentAt: plan.trialEnd,
            data: { ...subscription.data, ...couponData, anchorIndex: newIndex + 1 },
            state: 'trialing' as const,
            trialStartedAt: ctx.now,
            trialEndedAt: plan.trialEnd,
          }
        : {
            periodIndex: newIndex,
            periodAnchorAt: ctx.now,
            currentPeriodStartedAt: period.start,
            currentPeriodEndsAt: period.end,
            nextAssessmentAt: period.end,
            data: { ...subscription.data, ...couponData, anchorIndex: newIndex },
          };
    // A custom price becomes the subscription's own price point now, with the move.
    const custom =
      plan.customPrice === undefined
        ? undefined
        : await writeCustomPricePoint(ctx.tx, plan.target.product, plan.customPrice, id, ctx.now);
    const moved = await writeAtVersion(ctx.tx, subscription, {
      productId: plan.target.product.id,
      productVersion: custom?.version.version ?? plan.target.version.version,
      ...reset,
      updatedAt: ctx.now,
    });
    if (moved.state !== subscription.state) recordStateChange(ctx, moved, subscription.state);
    if (!plan.preservePeriod && plan.trialEnd === null) {
      // The new period's component charges, written now with the metered usage taken off; they
      // must be what the payment was planned on.
      const components = await renewalComponentLines(ctx, moved, { index: newIndex, ...period });
      const total = components.reduce((sum, c) => sum + c.amountInCents, 0);
      if (total !== plan.componentTotalInCents) throw changedMeanwhile(paid !== undefined);
    }
    const chargeIndex = moved.periodIndex;
    const lines: NewTransaction[] = [];
    if (plan.creditInCents > 0) {
      lines.push(
        line(
          moved,
          'adjustment',
          'prorated',
          -plan.creditInCents,
          'Prorated credit for the unused part of the period',
          ctx.now,
          { periodIndex: oldIndex },
        ),
      );
    }
    for (const planned of plan.lines) {
      lines.push(
        line(moved, planned.type, planned.kind, planned.amountInCents, planned.memo, ctx.now, {
          periodIndex: chargeIndex,
          componentId: planned.componentId,
        }),
      );
    }
    if (paid) {
      lines.push(
        line(moved, 'payment', null, paid.attempt.amountInCents, 'Payment for migration', ctx.now, {
          success: true,
          gatewayTransactionId: paid.transactionId,
        }),
      );
    }
    const written = await post(ctx.tx, lines);
    if (paid) {
      const payment = written.at(-1)!;
      await ctx.tx.payments.update(plan.site.id, paid.attempt.id, {
        status: 'succeeded',
        gatewayTransactionId: paid.transactionId,
        transactionId: payment.id,
        updatedAt: ctx.now,
      });
      await ctx.tx.dueWork.cancelFor(plan.site.id, paid.attempt.id, ['reconcile_payment'], ctx.now);
      await releaseOpenCollection(ctx.tx, plan.site.id, subscriptionCollection(id));
      recordPayment(ctx, moved, payment, true);
    }
    if (!plan.preservePeriod) {
      await ctx.tx.dueWork.cancelFor(plan.site.id, id, ['renewal', 'notice'], ctx.now);
      await scheduleRenewalAt(ctx, moved);
    }
    ctx.record({
      siteId: plan.site.id,
      key: 'upgrade_downgrade_success',
      subjectType: 'subscription',
      subjectId: id,
      payload: {
        subscription: { id },
        previous_product: { id: subscription.productId },
        target_product: { id: plan.target.product.id },
      },
    });
    return loadView(ctx.tx, plan.site.id, id);
  }

  async #plan(
    ctx: CommandContext,
    subdomain: string,
    id: number,
    input: MigrationInput,
    preview: boolean,
  ): Promise<MigrationPlan> {
    const { tx } = ctx;
    const site = await loadSite(tx, subdomain);
    const subscription = await loadSubscription(tx, site.id, id);
    let productInput = input;
    if (input.customPrice !== undefined) {
      if (
        input.pricePointId !== undefined ||
        input.pricePointHandle !== undefined ||
        input.productVersion !== undefined
      )
        throw invalid('Custom price: cannot be given with a product price point.', 'custom_price');
      // Without a product, a custom price is a new price of the subscription's own product.
      if (input.productHandle === undefined && input.productId === undefined)
        productInput = { ...input, productId: subscription.productId };
    }
    if (input.productHandle === undefined && input.productId === undefined && input.pricePointId !== undefined) {
      // A price point id names its product, as the service accepts.
      const pricePoint = await tx.pricePoints.findProductPricePoint(site.id, input.pricePointId);
      if (pricePoint === undefined)
        throw invalid(`Product price point: ${input.pricePointId} does not exist.`, 'product_price_point_id');
      productInput = { ...input, productId: pricePoint.productId };
    }
    if (productInput.productHandle === undefined && productInput.productId === undefined)
      throw invalid('Product must be specified');
    if (!(MIGRATABLE as readonly string[]).includes(subscription.state)) {
      throw invalid(
        preview ? 'Subscription must be active' : 'This subscription is not eligible for a prorated migration',
      );
    }
    let target: { product: ProductRecord; version: ProductVersionRecord };
    try {
      target = await findTarget(tx, site.id, productInput);
    } catch (error) {
      if (error instanceof BillingError && error.code === 'not_found') throw invalid('Invalid Product');
      throw error;
    }
    if (input.pricePointId !== undefined || input.pricePointHandle !== undefined) {
      if (input.productVersion !== undefined)
        throw invalid('Product version: cannot be given with a price point.', 'product_version');
      const version = await resolveSignupVersion(tx, site.id, target.product, {
        pricePointId: input.pricePointId ?? null,
        pricePointHandle: input.pricePointHandle ?? null,
        subscriptionId: subscription.id,
      });
      target = { product: target.product, version };
    }
    let customPrice: CustomPricePlan | undefined;
    if (input.customPrice !== undefined) {
      const errors = new ValidationCollector();
      customPrice = await checkCustomPrice(tx, target, input.customPrice, errors);
      errors.throwIfAny();
      target = { product: target.product, version: plannedCustomView(target, customPrice!, ctx.now).version };
    }
    if (target.product.id === subscription.productId && target.version.version === subscription.productVersion) {
      throw invalid('Product: the subscription is already on this product and version.');
    }
    const at =
      input.prorationDate === undefined ? ctx.now : parseInstant(input.prorationDate, site.timeZone, 'Proration date');
    const current = { start: subscription.currentPeriodStartedAt, end: subscription.currentPeriodEndsAt };
    if (at.getTime() < current.start.getTime() || at.getTime() > current.end.getTime())
      throw invalid('Proration date: must be within the current period.', 'proration_date');

    // Recompute: what the lines billed for this period paid for the time after `at`.
    const periodLines = (await tx.ledger.listForSubscription(site.id, id))
      .filter((l) => l.periodIndex === subscription.periodIndex)
      // An advance invoice's lines were posted before the period began; they cover it from its start.
      .map((l) => (l.createdAt < current.start ? { ...l, createdAt: current.start } : l));
    const paidInAdvance = unpaidRemainder(periodLines, current.end, current.start);
    const unused = unpaidRemainder(periodLines, current.end, at);
    const creditInCents =
      paidInAdvance > 0 && at.getTime() < current.end.getTime() ? Math.min(paidInAdvance, Math.max(1, unused)) : 0;

    // Assess the new product: for the rest of this period, or a new full period (or a trial).
    const preservePeriod = input.preservePeriod === true;
    if (!preservePeriod) await refusePeriodRestartWithAdvanceInvoice(tx, subscription);
    const terms = target.version.terms;
    const trialEnd =
      !preservePeriod && input.includeTrial && terms.trialInterval !== null
        ? addInterval(at, { count: terms.trialInterval, unit: terms.trialIntervalUnit ?? 'month' }, 1, site.timeZone)
        : null;
    const charges: PlannedLine[] = [];
    let componentTotalInCents = 0;
    const charge = (kind: string, amountInCents: number, memo: string, componentId: number | null = null) => {
      if (amountInCents > 0) charges.push({ type: 'charge', kind, amountInCents, memo, componentId });
    };
    if (trialEnd !== null) {
      charge('baseline', terms.trialPriceInCents ?? 0, `${terms.name} (migration)`);
    } else if (preservePeriod) {
      charge('baseline', remainderOf(terms.priceInCents, current, at), `${terms.name} (migration)`);
      // Components keep their allocations: the credit above gave back their unused part, and the
      // rest of the period is charged again beside the new product (metered usage keeps accruing).
      for (const c of await renewalComponentLines(
        ctx,
        subscription,
        { index: subscription.periodIndex, ...current },
        {
          resetMetered: false,
        },
      )) {
        if (c.kind === 'metered_component') continue;
        charge(c.kind, remainderOf(c.amountInCents, current, at), `${c.memo}, prorated`, c.componentId);
      }
    } else {
      charge('baseline', terms.priceInCents, `${terms.name} (migration)`);
      const period = billingPeriod(at, 0, productInterval(terms), site.timeZone);
      for (const c of await renewalComponentLines(
        ctx,
        subscription,
        { index: subscription.periodIndex + 1, ...period },
        {
          resetMetered: false,
        },
      )) {
        componentTotalInCents += c.amountInCents;
        charge(c.kind, c.amountInCents, c.memo, c.componentId);
      }
    }
    if (input.includeInitialCharge) charge('initial', terms.initialChargeInCents ?? 0, `${terms.name} setup fee`);
    // A new period is discounted by the coupons a renewal would apply; the rest of this period by
    // the ones it was billed with (its percentage coupons, as an allocation in it is), so a coupon
    // in its last discounted period still counts and one added or removed in it waits for the
    // next renewal.
    const coupons = preservePeriod
      ? await periodCoupons(tx, subscription, periodLines)
      : await renewalCoupons(tx, subscription);
    const discounts: PlannedLine[] = couponDiscounts(charges, coupons).map((d) => ({
      type: 'adjustment',
      kind: 'coupon',
      amountInCents: d.amountInCents,
      memo: d.memo,
      componentId: null,
      couponCode: d.code,
    }));
    const chargeInCents = [...charges, ...discounts].reduce((sum, l) => sum + l.amountInCents, 0);
    // A payment whose outcome is not known yet (an allocation's lost answer, the current period's
    // renewal charge still at the gateway under a row a command canceled) holds its amount out of
    // what the migration collects, until it is settled; it never turns debt into credit.
    const owed = collectableBalance(await tx.ledger.balance(site.id, id), subscription);
    const balance = owed > 0 ? Math.max(0, owed - (await openRenewalAmount(tx, subscription))) : owed;
    const availableCredit = creditInCents + Math.max(0, -balance);
    return {
      site,
      subscription,
      target,
      preservePeriod,
      trialEnd,
      creditInCents,
      lines: [...charges, ...discounts],
      componentTotalInCents,
      coupons,
      ...(customPrice === undefined ? {} : { customPrice }),
      proratedAdjustmentInCents: -creditInCents,
      chargeInCents,
      // A remittance subscription pays the migration's invoice itself: nothing is due from its card now.
      paymentDueInCents: collectableAmount(subscription, Math.max(0, balance - creditInCents + chargeInCents)),
      creditAppliedInCents: Math.min(Math.max(0, chargeInCents), availableCredit),
    };
  }
}

/** The refusal of a migration whose subscription changed between its plan and its write. */
function changedMeanwhile(paid = false): BillingError {
  return new BillingError(
    'conflict',
    paid
      ? 'The subscription changed while the migration was being paid; nothing was changed and the payment will be refunded. Try again.'
      : 'The subscription was changed by another request; nothing was charged. Try again.',
  );
}

/** The methods a site handle exposes (each takes the subdomain first). */
export const MIGRATION_METHODS = ['changeProduct', 'migrate'] as const;
