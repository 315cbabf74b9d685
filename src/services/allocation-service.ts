import { randomUUID } from 'node:crypto';
import { componentPrice } from '../domain/catalog/component-pricing.js';
import {
  type AllocationChange,
  allocationChange,
  downgradeScheme,
  PRORATION_MODES,
  type ProrationMode,
  upgradeScheme,
} from '../domain/components/index.js';
import { BillingError, type BillingErrorDetail, invalid, notFound, ValidationCollector } from '../errors.js';
import { callGateway, isOpenAttempt, reconcileByKey } from '../payments/collect.js';
import type { ChargeResult } from '../ports/gateway.js';
import type {
  AllocationRecord,
  ComponentPricePointRecord,
  ComponentRecord,
  ComponentVersionRecord,
  CouponRecord,
  DueWorkRecord,
  NewTransaction,
  PaymentAttemptRecord,
  PaymentAttemptStatus,
  PaymentProfileRecord,
  ProductRecord,
  SiteRecord,
  StorageTransaction,
  SubscriptionComponentRecord,
  SubscriptionRecord,
  TransactionRecord,
  UsageRecord,
} from '../ports/storage.js';
import { type CommandContext, runCommand } from './command-runner.js';
import {
  allocationError,
  allocationProblem,
  captureAllocation,
  componentEventSubject,
  componentRow,
  eventTimestamp,
  LIVE_STATES,
  NOT_ELIGIBLE,
  ON_OFF_MESSAGE,
  readQuantity,
} from './component-inputs.js';
import { loadComponentVersion } from './component-service.js';
import {
  claimOpenCollection,
  pendingAttempt,
  releaseOpenCollection,
  scheduleReconciliation,
  subscriptionCollection,
} from './payment-runner.js';
import { periodCoupons } from './period-assessment.js';
import { collectableBalance, post, UNSETTLED_PAYMENTS, unsettledPayments } from './posting.js';
import { loadComponentPricePoint, type PricePointRef } from './price-point-service.js';
import { loadSite } from './site-lookup.js';
import {
  couponDiscounts,
  line,
  loadSubscription,
  recordPayment,
  type SubscriptionDeps,
} from './subscription-service.js';
import { claimUniquenessToken } from './uniqueness.js';

/**
 * An allocation change (`{"allocation":{...}}`). `upgradeCharge`,
 * `downgradeCredit` and `accrueCharge` win over the classic `prorationUpgradeScheme` /
 * `prorationDowngradeScheme`, which fill in what they leave out. Defaults: `prorated`, `prorated`,
 * and `accrueCharge` false (collect now).
 */
export interface AllocationInput {
  /** Whole units for a quantity-based component; 0 or 1 for on/off. A string of digits is accepted. */
  readonly quantity: number | string;
  readonly memo?: string | null;
  readonly upgradeCharge?: ProrationMode;
  readonly downgradeCredit?: ProrationMode;
  /** True: the charge waits for the next renewal. False: it is collected now. */
  readonly accrueCharge?: boolean;
  readonly prorationUpgradeScheme?: string;
  readonly prorationDowngradeScheme?: string;
  /** A client's duplicate-prevention token. */
  readonly uniquenessToken?: string | null;
  /**
   * The component price point to allocate at: an id, or a handle (a string of digits is an id;
   * `handle:` may prefix a handle). The subscription's component moves to that price point's
   * current version, which prices the new quantity; the previous quantity is valued at the version
   * it was on. Left out, the subscription stays on its pinned version.
   */
  readonly pricePointId?: number | string | null;
  /** The price point by handle, when `pricePointId` is not given. */
  readonly pricePointHandle?: string | null;
}

/** One entry of {@link AllocationService.allocateMany}. */
export interface BulkAllocationInput extends Omit<AllocationInput, 'uniquenessToken'> {
  readonly componentId: number;
}

/** What an allocation change costs, as a preview shows it; changes nothing. */
export interface AllocationPreview {
  readonly direction: AllocationChange['direction'];
  /** The charge line's amount, before coupons. */
  readonly chargeInCents: number;
  /** The credit line's amount (positive), before coupons. */
  readonly creditInCents: number;
  /**
   * What the subscription's percentage coupons take off the charge, or give back of the credit
   * (never more than it): the change nets `chargeInCents - discountInCents` or
   * `-(creditInCents - discountInCents)`.
   */
  readonly discountInCents: number;
  /** The service's `period_type`: a mid-period change is always prorated against the current period. */
  readonly periodType: 'prorated';
}

/** What one applied allocation change wrote. */
export interface AllocationEffect {
  readonly allocation: AllocationRecord;
  readonly subscriptionComponent: SubscriptionComponentRecord;
  readonly direction: AllocationChange['direction'];
  readonly chargeInCents: number;
  readonly creditInCents: number;
  /** As in {@link AllocationPreview}: the coupons' part of the charge or credit. */
  readonly discountInCents: number;
  /** The charge or credit line, when the change gave one. */
  readonly line: TransactionRecord | null;
  /** The component price point the subscription is on after the change (undefined when none is recorded). */
  readonly pricePoint: ComponentPricePointRecord | undefined;
  /** The price point it was on before, when the change moved it to another one. */
  readonly previousPricePoint: ComponentPricePointRecord | undefined;
  /**
   * One `adjustment` line of kind `coupon` per coupon that discounted the change: negative
   * against a charge, positive against a credit (a credit gives back only what was paid).
   */
  readonly discountLines: readonly TransactionRecord[];
}

/** How the immediate collection of an allocation charge ended. */
export interface AllocationPayment {
  readonly attemptId: number;
  readonly amountInCents: number;
  /**
   * `succeeded`; `declined` / `failed` (the charge stays on the balance for the next renewal);
   * `unknown` (its reconciliation row looks it up by key later and settles it once).
   */
  readonly status: PaymentAttemptStatus;
  /** The `component_proration` payment line, on success. */
  readonly transaction: TransactionRecord | null;
  readonly message: string | null;
}

/** The result of {@link AllocationService.allocate}: the change, and its payment when one was attempted. */
export interface AllocationResult extends AllocationEffect {
  readonly payment: AllocationPayment | null;
}

/** The result of {@link AllocationService.allocateMany}: every change, and one payment for their charges. */
export interface BulkAllocationResult {
  readonly allocations: readonly AllocationEffect[];
  readonly payment: AllocationPayment | null;
}

/** Input of {@link AllocationService.recordUsage}. */
export interface UsageInput {
  /** Whole, non-negative units (a string of digits is accepted). */
  readonly quantity: number | string;
  readonly memo?: string | null;
  readonly uniquenessToken?: string | null;
}

/** The result of {@link AllocationService.recordUsage}. */
export interface UsageResult {
  readonly usage: UsageRecord;
  readonly previousUnitBalance: number;
  readonly newUnitBalance: number;
}

/** A component of a subscription with the component and the pinned pricing version. */
export interface SubscriptionComponentView {
  readonly subscriptionComponent: SubscriptionComponentRecord;
  readonly component: ComponentRecord;
  readonly version: ComponentVersionRecord;
}

/** An allocation input, checked without storage. */
interface ParsedAllocation {
  readonly componentId: number;
  readonly quantity: number;
  readonly memo: string | null;
  readonly upgradeCharge: ProrationMode;
  readonly downgradeCredit: ProrationMode;
  readonly accrueCharge: boolean;
  /** The price point asked for, or undefined to stay on the pinned version. */
  readonly pricePoint: PricePointRef | undefined;
}

/** An allocation change worked out against storage, before anything is written. */
interface AllocationPlan extends ParsedAllocation {
  readonly component: ComponentRecord;
  readonly version: ComponentVersionRecord;
  readonly existing: SubscriptionComponentRecord | undefined;
  readonly previousQuantity: number;
  readonly change: AllocationChange;
  /** The coupon lines of the change, signed as the ledger takes them (see {@link AllocationEffect.discountLines}). */
  readonly discounts: readonly { readonly code: string; readonly amountInCents: number; readonly memo: string }[];
  /** What the coupons take off the charge or give back of the credit (positive). */
  readonly discountInCents: number;
}

/** The subscription and what every allocation of it needs. */
interface SubscriptionScope {
  readonly site: SiteRecord;
  readonly subscription: SubscriptionRecord;
  readonly product: ProductRecord;
  readonly productName: string;
}

/**
 * What the outcome step of an allocation payment needs; also the payload of its
 * `reconcile_payment` row. The allocation's charge and coupon lines were committed with the
 * attempt, so settling writes only the payment (or the failure), unlike a one-time charge's plan.
 */
interface AllocationPaymentPlan {
  readonly type: typeof ALLOCATION_PLAN;
  readonly key: string;
  readonly subscriptionId: number;
  readonly memo: string;
  /** The component the payment line names: the only one collected for, else null. */
  readonly componentId: number | null;
  /**
   * The invoice the allocation's lines issued, which the payment pays first (left out by plans
   * stored before it was recorded: their payment pays the oldest open invoice first).
   */
  readonly invoiceUid?: string;
}

/** The `type` of an allocation payment's reconciliation plan. */
const ALLOCATION_PLAN = 'allocation';

/** The first step of a collected allocation charge: the committed attempt and the card. */
interface PreparedPayment {
  readonly site: SiteRecord;
  readonly attempt: PaymentAttemptRecord;
  readonly profile: PaymentProfileRecord;
  readonly plan: AllocationPaymentPlan;
}

/** How an outcome step ended: what the payment is now, and whether this step settled it. */
interface SettledPayment {
  readonly payment: AllocationPayment;
  readonly settledHere: boolean;
}

/** The refusal of a collecting change while another payment of the subscription is in flight. */
const IN_FLIGHT =
  'Another payment for this subscription is in progress; the allocation was not changed and nothing was charged. Try again when it has finished.';

/**
 * Allocation changes and metered usage of subscriptions: quantity-based and on/off
 * allocations with proration by the computed cost, immediate collection or accrual of the charge,
 * previews, allocation and usage history. A subscription stays on the component version it was
 * given (at signup, or at its first allocation): a change is priced with that pinned version, like
 * the renewal that bills it, and does not move the subscription to a newer price, unless it names
 * a component price point, which moves the subscription's component to that price point's
 * current version (the new quantity is priced there, the previous one at the version it was on). The service
 * prices at "the current price" of the subscription's price point, which is what the pin models.
 * Mid-period charges are discounted by the percentage coupons the current period was assessed
 * with, and credits by the same rate (docs/decisions.md says why flat-amount coupons are left out).
 */
export class AllocationService {
  readonly #deps: SubscriptionDeps;

  constructor(deps: SubscriptionDeps) {
    this.#deps = deps;
  }

  /**
   * Changes one component's allocation now. In one command: the new allocation (pinned version
   * kept), its history row, a charge line (kind: the component kind) for an upgrade or a credit
   * line for a downgrade, as `upgradeCharge` / `downgradeCredit` say, and
   * `component_allocation_change`. The period's percentage coupons discount the charge (or
   * give back their share of the credit) in `adjustment` lines of kind `coupon`, as a renewal
   * writes them; that is not a use of the coupon. A period not yet paid for (a trial, a delayed
   * signup before its start, or the free period before an import's first billing) gives neither
   * charge nor credit. When a charge is due and `accrueCharge` is false, the part of it the
   * balance still owes is collected after that commit (attempt
   * `allocation:<sub>:<component>:<uuid>`, committed with its `reconcile_payment` row and the
   * subscription's open-collection claim; gateway outside any transaction; result committed and
   * the claim released): success adds a `component_proration` payment, which pays the invoice the
   * change issued first (not an older open one, such as an advance invoice); a decline or
   * error records the attempt's outcome and `payment_failure`, and the charge accrues to the next
   * renewal; a lost answer leaves the attempt `unknown` for its reconciliation row, which looks it
   * up by key and settles it once (see {@link reconcile}), and until then the amount is held out of
   * every collection of the balance ({@link UNSETTLED_PAYMENTS}), so a renewal meanwhile never
   * takes it a second time. The allocation stands either way, so a
   * decline is reported in `payment`, not thrown. A subscription without a card (or `unpaid`)
   * accrues. While another payment of the subscription is in flight, a change that would collect
   * is refused with `conflict` (409) and changes nothing. Bad input rejects with no trace:
   * `validation` in the allocation object shape for quantity problems (T14), `not_found` for a
   * component outside the subscription's product family.
   */
  async allocate(
    subdomain: string,
    subscriptionId: number,
    componentId: number,
    input: AllocationInput,
  ): Promise<AllocationResult> {
    const parsed = parseAllocations([{ ...input, componentId }]);
    const key = `allocation:${subscriptionId}:${componentId}:${randomUUID()}`;
    const { effects, prepared } = await this.#apply(subdomain, subscriptionId, parsed, input.uniquenessToken, key);
    const effect = effects[0];
    if (effect === undefined) throw new BillingError('internal', 'An allocation command applied nothing.');
    return { ...effect, payment: prepared ? await this.#collect(prepared) : null };
  }

  /**
   * Changes several allocations of one subscription in one command (`POST
   * /subscriptions/{id}/allocations.json`): all are applied, in order, or none is. Their lines make
   * one invoice; the charges of the entries that do not accrue are collected together in one
   * payment, which pays that invoice first, as for {@link allocate}.
   * A component listed twice is changed twice, the second change starting from the first.
   */
  async allocateMany(
    subdomain: string,
    subscriptionId: number,
    allocations: readonly BulkAllocationInput[],
    options: { readonly uniquenessToken?: string | null } = {},
  ): Promise<BulkAllocationResult> {
    if (!Array.isArray(allocations) || allocations.length === 0) {
      throw invalid('Allocations: at least one allocation is required.', 'allocations');
    }
    const parsed = parseAllocations(allocations);
    const ids = [...new Set(parsed.map((p) => p.componentId))].join('+');
    const key = `allocation:${subscriptionId}:${ids}:${randomUUID()}`;
    const { effects, prepared } = await this.#apply(subdomain, subscriptionId, parsed, options.uniquenessToken, key);
    return { allocations: effects, payment: prepared ? await this.#collect(prepared) : null };
  }

  /**
   * What {@link allocate} would charge or credit now, computed by the same rules in a transaction
   * that writes nothing; rejects exactly what `allocate` would reject (except a reused uniqueness
   * token, which a preview does not claim).
   */
  async previewAllocation(
    subdomain: string,
    subscriptionId: number,
    componentId: number,
    input: AllocationInput,
  ): Promise<AllocationPreview> {
    const [parsed] = parseAllocations([{ ...input, componentId }]);
    const now = this.#deps.clock.now();
    return this.#deps.storage.transaction(async (tx) => {
      const scope = await loadScope(tx, subdomain, subscriptionId);
      const coupons = await midPeriodCoupons(tx, scope.subscription);
      const plan = await planAllocation(tx, scope, parsed!, coupons, now);
      return {
        direction: plan.change.direction,
        chargeInCents: plan.change.chargeInCents,
        creditInCents: plan.change.creditInCents,
        discountInCents: plan.discountInCents,
        periodType: 'prorated',
      };
    });
  }

  /** The subscription's allocation history (of one component, or all), oldest first. */
  async listAllocations(subdomain: string, subscriptionId: number, componentId?: number): Promise<AllocationRecord[]> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      await loadSubscription(tx, site.id, subscriptionId);
      return tx.subscriptionComponents.listAllocations(site.id, subscriptionId, componentId);
    });
  }

  /**
   * Records metered usage (`POST .../components/{cid}/usages.json`): adds `quantity` to the unit
   * balance atomically (concurrent usages never lose one), keeps the usage row and records
   * `metered_usage` with the balance before and after. Quantities are whole and non-negative
   * (the spec's `unit_balance` is an integer, and prices are computed for whole units). A metered
   * component of the product's family that the subscription does not have yet is added at its
   * current version. Quantity-based and on/off components take allocations instead.
   */
  async recordUsage(
    subdomain: string,
    subscriptionId: number,
    componentId: number,
    input: UsageInput,
  ): Promise<UsageResult> {
    const errors = new ValidationCollector();
    const quantity = errors.capture(() => readQuantity(input.quantity, 'Quantity', 'quantity'));
    const memo = errors.capture(() => readMemo(input.memo));
    errors.throwIfAny();
    return runCommand(this.#deps, async (ctx) => {
      const scope = await loadScope(ctx.tx, subdomain, subscriptionId);
      await claimUniquenessToken(ctx, scope.site.id, input.uniquenessToken);
      const component = await familyComponent(ctx.tx, scope, componentId);
      if (component.kind !== 'metered_component') {
        throw invalid('Component: usage can only be recorded for metered components.', 'component_id');
      }
      const existing = await ctx.tx.subscriptionComponents.find(scope.site.id, subscriptionId, componentId);
      if (!existing) {
        if (component.archivedAt !== null)
          throw invalid(`Component: '${componentId}' has been archived.`, 'component_id');
        // `ensure`, not `upsert`: a concurrent first usage must not overwrite this one's balance.
        await ctx.tx.subscriptionComponents.ensure(
          componentRow(
            scope.subscription,
            componentId,
            { componentVersion: component.currentVersion, allocatedQuantity: 0, unitBalance: 0 },
            ctx.now,
            ctx.now,
          ),
        );
      }
      const added = await ctx.tx.subscriptionComponents.addUsage(
        scope.site.id,
        subscriptionId,
        componentId,
        quantity!,
        ctx.now,
      );
      if (!added)
        throw new BillingError('storage', `Subscription ${subscriptionId} lost its component ${componentId}.`);
      const usage = await ctx.tx.subscriptionComponents.insertUsage({
        siteId: scope.site.id,
        subscriptionId,
        componentId,
        quantity: quantity!,
        memo: memo ?? null,
        createdAt: ctx.now,
      });
      ctx.record({
        siteId: scope.site.id,
        key: 'metered_usage',
        subjectType: 'subscription',
        subjectId: subscriptionId,
        payload: {
          ...componentEventSubject(component, scope.subscription, scope.product, scope.productName),
          previous_unit_balance: added.before.unitBalance,
          new_unit_balance: added.after.unitBalance,
          usage_quantity: quantity!,
          memo: memo ?? null,
          timestamp: eventTimestamp(ctx.now),
        },
      });
      return { usage, previousUnitBalance: added.before.unitBalance, newUnitBalance: added.after.unitBalance };
    });
  }

  /** The subscription's usages of one component, oldest first. */
  async listUsages(subdomain: string, subscriptionId: number, componentId: number): Promise<UsageRecord[]> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      await loadSubscription(tx, site.id, subscriptionId);
      return tx.subscriptionComponents.listUsages(site.id, subscriptionId, componentId);
    });
  }

  /** The subscription's components by component id, each with the component and its pinned version. */
  async listComponents(subdomain: string, subscriptionId: number): Promise<SubscriptionComponentView[]> {
    return this.#deps.storage.transaction(async (tx) => {
      const site = await loadSite(tx, subdomain);
      await loadSubscription(tx, site.id, subscriptionId);
      const views: SubscriptionComponentView[] = [];
      for (const row of await tx.subscriptionComponents.listForSubscription(site.id, subscriptionId)) {
        const { component, version } = await loadComponentVersion(tx, site.id, row.componentId, row.componentVersion);
        views.push({ subscriptionComponent: row, component, version });
      }
      return views;
    });
  }

  /**
   * Step 1 of allocate / allocateMany: every change, its lines and events in one command, plus the
   * payment attempt when a charge is to be collected now (committed with them, so a crash after
   * this step leaves an attempt to reconcile by key, never an uncharged, unrecorded allocation).
   */
  #apply(
    subdomain: string,
    subscriptionId: number,
    parsed: readonly ParsedAllocation[],
    uniquenessToken: string | null | undefined,
    key: string,
  ): Promise<{ effects: AllocationEffect[]; prepared: PreparedPayment | undefined }> {
    return runCommand(this.#deps, async (ctx) => {
      const scope = await loadScope(ctx.tx, subdomain, subscriptionId);
      await claimUniquenessToken(ctx, scope.site.id, uniquenessToken);
      // Version-checked: two concurrent changes of one subscription cannot both read the same
      // previous allocation, and a renewal running meanwhile makes one of them retry.
      const subscription = await ctx.tx.subscriptions.updateAtVersion(
        scope.site.id,
        subscriptionId,
        scope.subscription.version,
        { updatedAt: ctx.now },
      );
      if (!subscription)
        throw new BillingError('conflict', 'The subscription was changed by another request; try again.');
      const current: SubscriptionScope = { ...scope, subscription };
      const coupons = await midPeriodCoupons(ctx.tx, subscription);
      const written: WrittenAllocation[] = [];
      let collectable = 0;
      const memos: string[] = [];
      for (const entry of parsed) {
        const plan = await planAllocation(ctx.tx, current, entry, coupons, ctx.now);
        written.push(await writeAllocation(ctx, current, plan));
        if (!plan.accrueCharge && plan.change.chargeInCents > 0) {
          collectable += plan.change.chargeInCents - plan.discountInCents;
          memos.push(chargeMemo(plan));
        }
      }
      // The lines of every change in one post: one invoice for the command, which its payment pays.
      const posted = await post(
        ctx.tx,
        written.flatMap((w) => w.lines),
      );
      const effects: AllocationEffect[] = [];
      let offset = 0;
      for (const w of written) {
        const mine = posted.slice(offset, offset + w.lines.length);
        offset += w.lines.length;
        effects.push(recordAllocation(ctx, current, w, mine));
      }
      if (collectable === 0 || subscription.state === 'unpaid' || subscription.paymentProfileId === null) {
        return { effects, prepared: undefined };
      }
      // Collect what the balance still owes of the charge: existing credit pays for it first.
      const balance = await ctx.tx.ledger.balance(scope.site.id, subscriptionId);
      const amount = Math.min(collectable, Math.max(0, collectableBalance(balance, subscription)));
      const profile = await ctx.tx.customers.findPaymentProfile(scope.site.id, subscription.paymentProfileId);
      if (amount === 0 || !profile) return { effects, prepared: undefined };
      // One collecting command per subscription at a time: a concurrent one is refused here, before
      // anything of it commits or reaches the gateway. The outcome step releases the claim.
      await claimOpenCollection(ctx.tx, scope.site.id, subscriptionCollection(subscriptionId), ctx.now, IN_FLIGHT);
      const attempt = await ctx.tx.payments.insert(
        pendingAttempt({
          siteId: scope.site.id,
          subscriptionId,
          customerId: subscription.customerId,
          idempotencyKey: key,
          amountInCents: amount,
          currency: scope.site.currency,
          purpose: 'allocation',
          now: ctx.now,
        }),
      );
      const componentIds = new Set(parsed.map((p) => p.componentId));
      const invoiceUid = await invoiceOfLines(ctx.tx, scope.site.id, subscriptionId, posted);
      const plan: AllocationPaymentPlan = {
        type: ALLOCATION_PLAN,
        key,
        subscriptionId,
        memo: memos.join('; '),
        componentId: componentIds.size === 1 ? parsed[0]!.componentId : null,
        ...(invoiceUid === undefined ? {} : { invoiceUid }),
      };
      // Committed with the attempt: if its outcome is never committed (a lost answer, a crash),
      // the row settles it by key later, so the balance is never collected beside it blindly.
      await scheduleReconciliation(ctx.tx, attempt, { ...plan }, ctx.now);
      // Until the outcome is known, the amount is held out of what due work collects from the
      // balance: a renewal or dunning retry meanwhile must not take it a second time.
      const marked = await ctx.tx.subscriptions.updateAtVersion(scope.site.id, subscriptionId, subscription.version, {
        data: {
          ...subscription.data,
          [UNSETTLED_PAYMENTS]: { ...unsettledPayments(subscription.data), [key]: amount },
        },
      });
      if (!marked) throw new BillingError('conflict', 'The subscription was changed by another request; try again.');
      return { effects, prepared: { site: scope.site, attempt, profile, plan } };
    });
  }

  /** Steps 2 and 3: the gateway call outside any transaction, then its outcome committed once. */
  async #collect(prepared: PreparedPayment): Promise<AllocationPayment> {
    const { site, attempt, plan } = prepared;
    // The one gateway call and recovery rule: a lost answer is looked up once by key; still
    // unknown, the attempt stays open for its reconciliation row.
    const result = await callGateway(this.#deps.gateway, {
      attempt,
      vault: prepared.profile,
      description: plan.memo,
    });
    return (await this.#settle(site.id, plan, result, true)).payment;
  }

  /**
   * Settles an allocation payment whose outcome was never committed, from its `reconcile_payment`
   * row (the engine's due work hands it the rows whose plan {@link isAllocationReconciliation}
   * recognises). The charge is looked up at the gateway by its key, never charged again: money
   * taken gives the `component_proration` payment line, once; no record of the charge marks the
   * attempt failed (with `payment_failure`) and leaves the charge on the balance for the next
   * renewal or dunning, as a decline does. Returns `unknown` when the gateway still cannot be
   * asked (the row is looked at again later), `settled` when the attempt was already resolved.
   */
  async reconcile(
    work: Pick<DueWorkRecord, 'siteId' | 'payload'>,
  ): Promise<'succeeded' | 'failed' | 'unknown' | 'settled'> {
    const plan = parsePaymentPlan(work.payload);
    if (plan === undefined) {
      throw new BillingError('internal', 'A reconcile_payment row carries no allocation payment plan.', {
        data: { payload: work.payload },
      });
    }
    const finding = await reconcileByKey(this.#deps.storage, this.#deps.gateway, work.siteId, plan.key);
    if (finding.kind !== 'known') return finding.kind;
    const { result } = finding;
    // The claim is not released here: it belongs to whichever command holds it now.
    const { payment, settledHere } = await this.#settle(work.siteId, plan, result, false);
    if (!settledHere) return 'settled';
    return payment.status === 'succeeded' ? 'succeeded' : 'failed';
  }

  /**
   * Step 3: commits an outcome of the attempt once. A known outcome cancels the reconciliation row
   * (success: the payment line and `payment_success`; decline or error: the attempt's status and
   * `payment_failure`, the charge left owed); an unknown one marks the attempt and keeps the row.
   * A known outcome also ends the hold on the amount ({@link UNSETTLED_PAYMENTS}); an unknown one
   * keeps it until the reconciliation settles the attempt: meanwhile every collection of the
   * balance (a renewal, a dunning retry, another allocation) leaves the amount out, so the money
   * is never taken twice. `command` (the command's own outcome step) ends its open-collection
   * claim in the same transaction, whatever the outcome: from here on the hold and the
   * reconciliation row guard the money.
   */
  #settle(
    siteId: number,
    plan: AllocationPaymentPlan,
    result: ChargeResult,
    command: boolean,
  ): Promise<SettledPayment> {
    return runCommand(this.#deps, async (ctx) => {
      if (command) await releaseOpenCollection(ctx.tx, siteId, subscriptionCollection(plan.subscriptionId));
      const stored = await ctx.tx.payments.findByKey(siteId, plan.key);
      if (!stored) throw new BillingError('internal', `Payment attempt ${plan.key} vanished.`);
      if (!isOpenAttempt(stored.status)) {
        await releaseHold(ctx, siteId, plan);
        // Settled by someone else first (the command or a reconciliation): report what they committed.
        const payment =
          stored.transactionId === null ? undefined : await ctx.tx.ledger.findById(siteId, stored.transactionId);
        return { payment: describeSettled(stored, payment ?? null), settledHere: false };
      }
      if (result.outcome === 'unknown') {
        const updated = await ctx.tx.payments.update(siteId, stored.id, {
          status: 'unknown',
          message: result.message,
          updatedAt: ctx.now,
        });
        return { payment: describeSettled(updated ?? stored, null), settledHere: false };
      }
      await releaseHold(ctx, siteId, plan);
      await ctx.tx.dueWork.cancelFor(siteId, stored.id, ['reconcile_payment'], ctx.now);
      const subscription = await loadSubscription(ctx.tx, siteId, plan.subscriptionId);
      if (result.outcome === 'success') {
        // It pays the invoice the allocation issued first, not the oldest open one (an advance
        // invoice, or a renewal's left open by a decline, is collected by its own renewal or retry).
        const [payment] = await post(
          ctx.tx,
          [
            {
              ...line(
                subscription,
                'payment',
                'component_proration',
                stored.amountInCents,
                `Payment for: ${plan.memo}`,
                ctx.now,
                { success: true, gatewayTransactionId: result.transactionId },
              ),
              componentId: plan.componentId,
            },
          ],
          plan.invoiceUid === undefined ? {} : { payInvoiceUid: plan.invoiceUid },
        );
        const updated = await ctx.tx.payments.update(siteId, stored.id, {
          status: 'succeeded',
          gatewayTransactionId: result.transactionId,
          transactionId: payment!.id,
          updatedAt: ctx.now,
        });
        recordPayment(ctx, subscription, payment!, true);
        return { payment: describeSettled(updated ?? stored, payment!), settledHere: true };
      }
      const updated = await ctx.tx.payments.update(siteId, stored.id, {
        status: result.outcome === 'declined' ? 'declined' : 'failed',
        message: result.message,
        updatedAt: ctx.now,
      });
      ctx.record({
        siteId,
        key: 'payment_failure',
        subjectType: 'subscription',
        subjectId: subscription.id,
        payload: {
          subscription: { id: subscription.id, state: subscription.state },
          payment_attempt: { id: stored.id, amount_in_cents: stored.amountInCents, memo: plan.memo },
          message: result.message,
        },
      });
      return { payment: describeSettled(updated ?? stored, null), settledHere: true };
    });
  }
}

/**
 * Ends the hold of a settled attempt's amount on its subscription ({@link UNSETTLED_PAYMENTS}).
 * Version-checked against concurrent writers of the subscription (a renewal, another command):
 * read again and retried, so the hold is never left behind by a lost race.
 */
async function releaseHold(ctx: CommandContext, siteId: number, plan: AllocationPaymentPlan): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const subscription = await ctx.tx.subscriptions.findById(siteId, plan.subscriptionId);
    if (subscription === undefined) return;
    const held = unsettledPayments(subscription.data);
    if (!(plan.key in held)) return;
    delete held[plan.key];
    const written = await ctx.tx.subscriptions.updateAtVersion(siteId, subscription.id, subscription.version, {
      data: { ...subscription.data, [UNSETTLED_PAYMENTS]: held },
    });
    if (written) return;
  }
  throw new BillingError('conflict', `Subscription ${plan.subscriptionId} kept changing while a payment was settled.`);
}

/** True when a `reconcile_payment` row's payload is an allocation payment's plan (for {@link AllocationService.reconcile}). */
export function isAllocationReconciliation(payload: Readonly<Record<string, unknown>>): boolean {
  return parsePaymentPlan(payload) !== undefined;
}

/** The allocation payment plan stored in a reconciliation row, or undefined when the payload is not one. */
function parsePaymentPlan(payload: Readonly<Record<string, unknown>>): AllocationPaymentPlan | undefined {
  const { type, key, subscriptionId, memo, componentId, invoiceUid } = payload;
  if (type !== ALLOCATION_PLAN || typeof key !== 'string' || typeof memo !== 'string') return undefined;
  if (typeof subscriptionId !== 'number' || !(componentId === null || typeof componentId === 'number')) {
    return undefined;
  }
  return { type, key, subscriptionId, memo, componentId, ...(typeof invoiceUid === 'string' ? { invoiceUid } : {}) };
}

/**
 * The coupons that discount a mid-period change: the percentage coupons the current period was
 * assessed with ({@link periodCoupons}), so a coupon in its last discounted period still discounts
 * the period's changes, and a credit is given back at the rate the time was paid at.
 */
async function midPeriodCoupons(tx: StorageTransaction, subscription: SubscriptionRecord): Promise<CouponRecord[]> {
  return periodCoupons(tx, subscription, await tx.ledger.listForSubscription(subscription.siteId, subscription.id));
}

/**
 * The coupon lines of one change: the renewal's discount of the charge (negative lines), or of
 * the credit given back (positive lines, so a credit never exceeds what was paid for the time).
 */
function changeDiscounts(
  kind: string,
  change: AllocationChange,
  coupons: readonly CouponRecord[],
): { code: string; amountInCents: number; memo: string }[] {
  const amount = change.chargeInCents > 0 ? change.chargeInCents : change.creditInCents;
  if (amount === 0 || coupons.length === 0) return [];
  const sign = change.chargeInCents > 0 ? 1 : -1;
  return couponDiscounts([{ kind, amountInCents: amount }], coupons).map((d) => ({
    ...d,
    amountInCents: sign * d.amountInCents,
  }));
}

/** Checks every entry's input without storage; all problems at once, in the allocation object shape. */
function parseAllocations(entries: readonly BulkAllocationInput[]): ParsedAllocation[] {
  const problems: BillingErrorDetail[] = [];
  const parsed: ParsedAllocation[] = [];
  for (const entry of entries) {
    const componentId = entry?.componentId;
    if (typeof componentId !== 'number' || !Number.isSafeInteger(componentId) || componentId < 1) {
      throw invalid('Component: cannot be blank.', 'component_id');
    }
    const before = problems.length;
    const quantity = captureAllocation(componentId, 'quantity', problems, () =>
      readQuantity(entry.quantity, 'Quantity', 'quantity'),
    );
    const memo = captureAllocation(componentId, 'memo', problems, () => readMemo(entry.memo));
    const upgrade = mode(entry.upgradeCharge, 'Upgrade charge', 'upgrade_charge', componentId, problems);
    const downgrade = mode(entry.downgradeCredit, 'Downgrade credit', 'downgrade_credit', componentId, problems);
    const pricePoint = readPricePoint(entry, componentId, problems);
    if (entry.accrueCharge !== undefined && typeof entry.accrueCharge !== 'boolean') {
      problems.push(allocationProblem(componentId, 'accrue_charge', 'Accrue charge: must be true or false.'));
    }
    const classicUp =
      entry.prorationUpgradeScheme === undefined
        ? undefined
        : captureAllocation(componentId, 'proration_upgrade_scheme', problems, () =>
            upgradeScheme(String(entry.prorationUpgradeScheme)),
          );
    const classicDown =
      entry.prorationDowngradeScheme === undefined
        ? undefined
        : captureAllocation(componentId, 'proration_downgrade_scheme', problems, () =>
            downgradeScheme(String(entry.prorationDowngradeScheme)),
          );
    if (problems.length > before) continue;
    parsed.push({
      componentId,
      quantity: quantity!,
      memo: memo ?? null,
      upgradeCharge: upgrade ?? classicUp?.upgradeCharge ?? 'prorated',
      downgradeCredit: downgrade ?? classicDown ?? 'prorated',
      accrueCharge: entry.accrueCharge ?? classicUp?.accrueCharge ?? false,
      pricePoint,
    });
  }
  if (problems.length > 0) throw allocationError(problems);
  return parsed;
}

function mode(
  value: unknown,
  label: string,
  on: string,
  componentId: number,
  problems: BillingErrorDetail[],
): ProrationMode | undefined {
  if (value === undefined) return undefined;
  if (PRORATION_MODES.includes(value as ProrationMode)) return value as ProrationMode;
  problems.push(allocationProblem(componentId, on, `${label}: must be one of full, prorated or none.`));
  return undefined;
}

/** The price point an entry names (id, or handle), or undefined; a value of another type is a problem. */
function readPricePoint(
  entry: BulkAllocationInput,
  componentId: number,
  problems: BillingErrorDetail[],
): PricePointRef | undefined {
  const { pricePointId: id, pricePointHandle: handle } = entry;
  if (id !== undefined && id !== null && id !== '') {
    if (typeof id === 'number' && Number.isSafeInteger(id) && id > 0) return id;
    if (typeof id === 'string' && id.trim() !== '') return id.trim();
    problems.push(allocationProblem(componentId, 'price_point_id', 'Price point: must be an id or a handle.'));
    return undefined;
  }
  if (handle === undefined || handle === null || handle === '') return undefined;
  if (typeof handle !== 'string') {
    problems.push(allocationProblem(componentId, 'price_point_handle', 'Price point handle: must be text.'));
    return undefined;
  }
  // A handle of digits alone would read as an id: the prefix keeps it a handle.
  return `handle:${handle.trim()}`;
}

/** An optional memo, trimmed; null when absent or blank. */
function readMemo(memo: unknown): string | null {
  if (memo === undefined || memo === null) return null;
  if (typeof memo !== 'string') throw invalid('Memo: must be text.', 'memo');
  return memo.trim() === '' ? null : memo.trim();
}

/**
 * The site, a live or `awaiting_signup` subscription of it and its product; `not_found` /
 * `validation` otherwise. A delayed signup takes allocations and usage before its start, as the
 * service's does ("it can be canceled, allocated to, had its billing date changed"): its period
 * (index -1) was not paid, so a change charges or credits nothing, and the start bills the
 * quantities it finds then.
 */
async function loadScope(
  tx: StorageTransaction,
  subdomain: string,
  subscriptionId: number,
): Promise<SubscriptionScope> {
  const site = await loadSite(tx, subdomain);
  const subscription = await loadSubscription(tx, site.id, subscriptionId);
  if (!LIVE_STATES.includes(subscription.state) && subscription.state !== 'awaiting_signup')
    throw invalid(NOT_ELIGIBLE);
  const product = await tx.catalog.findProduct(site.id, subscription.productId);
  const version = await tx.catalog.findProductVersion(site.id, subscription.productId, subscription.productVersion);
  if (!product || !version) {
    throw new BillingError('storage', `Subscription ${subscriptionId} refers to a missing product version.`);
  }
  return { site, subscription, product, productName: version.terms.name };
}

/** A component of the subscription's product family; `not_found` for any other (no reaching across families). */
async function familyComponent(
  tx: StorageTransaction,
  scope: SubscriptionScope,
  componentId: number,
): Promise<ComponentRecord> {
  const component = await tx.components.findById(scope.site.id, componentId);
  if (!component || component.familyId !== scope.product.familyId) throw notFound('Component', componentId);
  return component;
}

/**
 * Works out one change against storage without writing: the component (of the product's family,
 * quantity-based or on/off), the pinned version (the current one for a component the subscription
 * does not have yet, which must then not be archived), the costs before and after, and the charge
 * or credit, and the coupons' part of it. A period that was not charged in advance (a trial, or
 * the period before a delayed signup starts or before an import's first billing, index -1) gives
 * neither: there is nothing paid to top up or refund.
 */
async function planAllocation(
  tx: StorageTransaction,
  scope: SubscriptionScope,
  entry: ParsedAllocation,
  coupons: readonly CouponRecord[],
  now: Date,
): Promise<AllocationPlan> {
  const { site, subscription } = scope;
  const component = await familyComponent(tx, scope, entry.componentId);
  const problems: BillingErrorDetail[] = [];
  if (component.kind === 'metered_component') {
    problems.push(
      allocationProblem(
        component.id,
        'component_id',
        'Component: allocations are only for quantity-based and on/off components; record usage instead.',
      ),
    );
  } else if (component.kind === 'on_off_component' && entry.quantity > 1) {
    problems.push(allocationProblem(component.id, 'quantity', ON_OFF_MESSAGE));
  }
  const existing = await tx.subscriptionComponents.find(site.id, subscription.id, component.id);
  if (!existing && component.archivedAt !== null) {
    problems.push(allocationProblem(component.id, 'component_id', `Component: '${component.id}' has been archived.`));
  }
  // A named price point is looked up before the other checks report: an unknown one is a 404.
  const pricePoint =
    entry.pricePoint === undefined
      ? undefined
      : await loadComponentPricePoint(tx, site.id, component.id, entry.pricePoint);
  if (pricePoint !== undefined && pricePoint.archivedAt !== null) {
    problems.push(
      allocationProblem(component.id, 'price_point_id', `Price point: '${pricePoint.handle}' has been archived.`),
    );
  }
  if (problems.length > 0) throw allocationError(problems);
  const pinned = existing?.componentVersion ?? component.currentVersion;
  const { version: pinnedVersion } = await loadComponentVersion(tx, site.id, component.id, pinned);
  // The quantity held so far is valued at the version it was billed at; the new one at the target.
  const version =
    pricePoint === undefined || pricePoint.version === pinned
      ? pinnedVersion
      : (await loadComponentVersion(tx, site.id, component.id, pricePoint.version)).version;
  const previousQuantity = existing?.allocatedQuantity ?? 0;
  const previousCost = captureAllocation(component.id, 'quantity', problems, () =>
    componentPrice(pinnedVersion.pricing, previousQuantity, site.currency),
  );
  const newCost = captureAllocation(component.id, 'quantity', problems, () =>
    componentPrice(version.pricing, entry.quantity, site.currency),
  );
  if (problems.length > 0) throw allocationError(problems);
  const billed = subscription.state !== 'trialing' && subscription.periodIndex >= 0;
  const change = allocationChange({
    previousCostInCents: previousCost!,
    newCostInCents: newCost!,
    periodStart: subscription.currentPeriodStartedAt,
    periodEnd: subscription.currentPeriodEndsAt,
    at: now,
    upgradeCharge: billed ? entry.upgradeCharge : 'none',
    downgradeCredit: billed ? entry.downgradeCredit : 'none',
  });
  const discounts = changeDiscounts(component.kind, change, coupons);
  const discountInCents = discounts.reduce((sum, d) => sum + Math.abs(d.amountInCents), 0);
  return { ...entry, component, version, existing, previousQuantity, change, discounts, discountInCents };
}

/** One change written but not yet posted: its row and history, and the lines it bills. */
interface WrittenAllocation {
  readonly plan: AllocationPlan;
  readonly allocation: AllocationRecord;
  readonly subscriptionComponent: SubscriptionComponentRecord;
  /** Its charge or credit line (when the change gave one), then its coupon lines. */
  readonly lines: readonly NewTransaction[];
  readonly hasLine: boolean;
  readonly pricePoint: ComponentPricePointRecord | undefined;
  readonly previousPricePoint: ComponentPricePointRecord | undefined;
}

/**
 * Writes one planned change: the row and its history, and works out its charge or credit line and
 * its coupon lines (posted by the command with the other changes' lines, as one invoice).
 */
async function writeAllocation(
  ctx: CommandContext,
  scope: SubscriptionScope,
  plan: AllocationPlan,
): Promise<WrittenAllocation> {
  const { site, subscription } = scope;
  const subscriptionComponent = await ctx.tx.subscriptionComponents.upsert(
    componentRow(
      subscription,
      plan.component.id,
      {
        componentVersion: plan.version.version,
        allocatedQuantity: plan.quantity,
        unitBalance: plan.existing?.unitBalance ?? 0,
      },
      plan.existing?.createdAt ?? ctx.now,
      ctx.now,
    ),
  );
  const allocation = await ctx.tx.subscriptionComponents.insertAllocation({
    siteId: site.id,
    subscriptionId: subscription.id,
    componentId: plan.component.id,
    previousQuantity: plan.previousQuantity,
    quantity: plan.quantity,
    memo: plan.memo,
    upgradeCharge: plan.upgradeCharge,
    downgradeCredit: plan.downgradeCredit,
    accrueCharge: plan.accrueCharge,
    createdAt: ctx.now,
  });
  let ledgerLine: NewTransaction | undefined;
  const extra = { periodIndex: subscription.periodIndex };
  if (plan.change.chargeInCents > 0) {
    ledgerLine = line(
      subscription,
      'charge',
      plan.component.kind,
      plan.change.chargeInCents,
      chargeMemo(plan),
      ctx.now,
      extra,
    );
  } else if (plan.change.creditInCents > 0) {
    // Credits carry a negative amount, as the service shows them.
    ledgerLine = line(
      subscription,
      'credit',
      plan.component.kind,
      -plan.change.creditInCents,
      chargeMemo(plan),
      ctx.now,
      extra,
    );
  }
  const lines: NewTransaction[] = ledgerLine ? [{ ...ledgerLine, componentId: plan.component.id }] : [];
  for (const d of plan.discounts) {
    lines.push(
      line(subscription, 'adjustment', 'coupon', d.amountInCents, d.memo, ctx.now, {
        ...extra,
        componentId: plan.component.id,
      }),
    );
  }
  const pricePoint = await ctx.tx.pricePoints.findComponentVersionPricePoint(
    site.id,
    plan.component.id,
    plan.version.version,
  );
  const previousPricePoint =
    plan.existing === undefined || plan.existing.componentVersion === plan.version.version
      ? pricePoint
      : await ctx.tx.pricePoints.findComponentVersionPricePoint(
          site.id,
          plan.component.id,
          plan.existing.componentVersion,
        );
  return {
    plan,
    allocation,
    subscriptionComponent,
    lines,
    hasLine: ledgerLine !== undefined,
    pricePoint,
    previousPricePoint: previousPricePoint?.id === pricePoint?.id ? undefined : previousPricePoint,
  };
}

/** Records a written change's event, once its lines (`posted`, in its order) are on the ledger. */
function recordAllocation(
  ctx: CommandContext,
  scope: SubscriptionScope,
  written: WrittenAllocation,
  posted: readonly TransactionRecord[],
): AllocationEffect {
  const { site, subscription } = scope;
  const { plan } = written;
  ctx.record({
    siteId: site.id,
    key: 'component_allocation_change',
    subjectType: 'subscription',
    subjectId: subscription.id,
    payload: {
      ...componentEventSubject(plan.component, subscription, scope.product, scope.productName),
      previous_allocation: plan.previousQuantity,
      new_allocation: plan.quantity,
      memo: plan.memo,
      timestamp: eventTimestamp(ctx.now),
    },
  });
  const [first, ...rest] = posted;
  return {
    allocation: written.allocation,
    subscriptionComponent: written.subscriptionComponent,
    direction: plan.change.direction,
    chargeInCents: plan.change.chargeInCents,
    creditInCents: plan.change.creditInCents,
    discountInCents: plan.discountInCents,
    line: written.hasLine ? (first ?? null) : null,
    discountLines: written.hasLine ? rest : posted,
    pricePoint: written.pricePoint,
    previousPricePoint: written.previousPricePoint,
  };
}

/** The open invoice the command's posted lines are on, when they issued one still due. */
async function invoiceOfLines(
  tx: StorageTransaction,
  siteId: number,
  subscriptionId: number,
  posted: readonly TransactionRecord[],
): Promise<string | undefined> {
  if (posted.length === 0) return undefined;
  const ids = new Set(posted.map((l) => l.id));
  const open = await tx.invoices.listForSubscription(siteId, subscriptionId, 'open');
  return open.find((i) => i.lineItems.some((item) => item.transactionId !== null && ids.has(item.transactionId)))?.uid;
}

/** The memo of a change's ledger line: the caller's memo, or what changed and how it was priced. */
function chargeMemo(plan: AllocationPlan): string {
  if (plan.memo !== null) return plan.memo;
  const how = plan.change.direction === 'upgrade' ? plan.upgradeCharge : plan.downgradeCredit;
  const unit = plan.component.kind === 'on_off_component' ? '' : ` ${plan.component.unitName}`;
  return `${plan.component.name}: ${plan.previousQuantity} to ${plan.quantity}${unit} (${how})`;
}

function describeSettled(attempt: PaymentAttemptRecord, transaction: TransactionRecord | null): AllocationPayment {
  return {
    attemptId: attempt.id,
    amountInCents: attempt.amountInCents,
    status: attempt.status,
    transaction,
    message: attempt.message,
  };
}
