/**
 * Delayed signups (`initial_billing_at`) and signup end dates (`expires_at`): the due work they
 * schedule, and what the start of a delayed signup charges. A delayed signup is created
 * `awaiting_signup` with nothing charged; at `initial_billing_at` the renewal worker starts it
 * (see `RenewalService`): trialing when the product has a trial (its trial charge and a setup fee
 * not deferred past the trial), otherwise active with the first period's charges and the setup fee,
 * the charges a signup at that instant would take. The lines are posted with their payment in one
 * `post()` once the payment has succeeded, as a signup's are; a failed first payment cancels the
 * subscription and leaves nothing owed (docs/decisions.md). What the signup schedules is in
 * `delayed-signup-schedule.ts` (the signup cannot import this module: it prices with the signup's
 * coupon rules).
 */
import { BillingError } from '../errors.js';
import type {
  CouponRecord,
  NewTransaction,
  ProductTerms,
  SiteRecord,
  StorageTransaction,
  SubscriptionRecord,
  SubscriptionState,
} from '../ports/storage.js';
import type { CommandContext } from './command-runner.js';
import { PENDING_START_KEY } from './delayed-signup-schedule.js';
import { type AssessedCharge, assessNextPeriod, renewalCoupons } from './period-assessment.js';
import { post } from './posting.js';
import { couponDiscounts, couponUsesAfter, line } from './subscription-service.js';

export { PENDING_START_KEY };

/** One line of a delayed signup's start: a charge or a coupon's (negative) adjustment. */
export interface StartLine {
  readonly type: 'charge' | 'adjustment';
  readonly kind: string;
  readonly amountInCents: number;
  readonly memo: string;
  readonly componentId: number | null;
}

/** What starting a delayed signup does: its new state and dates, and the lines it bills. */
export interface DelayedStart {
  readonly state: Extract<SubscriptionState, 'active' | 'trialing'>;
  /** The period the lines belong to: -1 for a trial (the trial is before period 0), else 0. */
  readonly periodIndex: number;
  readonly periodStart: Date;
  readonly periodEnd: Date;
  /** The trial's end, for a trial. */
  readonly trialEndsAt: Date | null;
  readonly lines: readonly StartLine[];
  /** The coupons that discounted the lines (their uses count when the start is written). */
  readonly couponCodes: readonly string[];
  /** What the lines add up to (never below zero). */
  readonly totalInCents: number;
}

/**
 * Plans the start of an `awaiting_signup` subscription at `ctx.now`, at its pinned terms: with a
 * trial, the trial charge and the setup fee unless it is deferred past the trial (components are
 * first billed when the trial ends, as for a signup into a trial); without one, the first period
 * as a renewal would assess it (baseline, components, metered usage recorded while awaiting) plus
 * the setup fee. The signup's coupons (deferred to the first amount due) discount the lines.
 * Takes the metered usage it bills off the balances, in the caller's transaction, unless
 * `resetMetered` is false (an estimate that reads only).
 */
export async function planDelayedStart(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  terms: ProductTerms,
  options: { readonly resetMetered?: boolean } = {},
): Promise<DelayedStart> {
  const coupons: CouponRecord[] = await renewalCoupons(ctx.tx, subscription);
  const setupFee: AssessedCharge | undefined =
    (terms.initialChargeInCents ?? 0) > 0
      ? {
          kind: 'initial',
          amountInCents: terms.initialChargeInCents!,
          memo: `${terms.name} setup fee`,
          componentId: null,
        }
      : undefined;
  let charges: AssessedCharge[];
  let start: Omit<DelayedStart, 'lines' | 'couponCodes' | 'totalInCents'>;
  if (terms.trialInterval !== null) {
    charges = [];
    if ((terms.trialPriceInCents ?? 0) > 0)
      charges.push({
        kind: 'trial',
        amountInCents: terms.trialPriceInCents!,
        memo: `${terms.name} trial`,
        componentId: null,
      });
    if (setupFee && !terms.initialChargeAfterTrial) charges.push(setupFee);
    start = {
      state: 'trialing',
      periodIndex: -1,
      periodStart: subscription.currentPeriodEndsAt,
      periodEnd: subscription.periodAnchorAt,
      trialEndsAt: subscription.periodAnchorAt,
    };
  } else {
    const assessed = await assessNextPeriod(ctx, site, subscription, terms, {
      resetMetered: options.resetMetered ?? true,
    });
    charges = [...assessed.charges, ...(setupFee ? [setupFee] : [])];
    start = {
      state: 'active',
      periodIndex: assessed.period.index,
      periodStart: assessed.period.start,
      periodEnd: assessed.period.end,
      trialEndsAt: null,
    };
  }
  const charged = charges.reduce((sum, c) => sum + c.amountInCents, 0);
  // A free start defers the coupons to the first amount due, as a free trial at signup does.
  const discounts = charged > 0 ? couponDiscounts(charges, coupons) : [];
  const lines: StartLine[] = [
    ...charges.map((c) => ({ type: 'charge' as const, ...c })),
    ...discounts.map((d) => ({
      type: 'adjustment' as const,
      kind: 'coupon',
      amountInCents: d.amountInCents,
      memo: d.memo,
      componentId: null,
    })),
  ];
  const total = lines.reduce((sum, l) => sum + l.amountInCents, 0);
  return { ...start, lines, couponCodes: discounts.map((d) => d.code), totalInCents: Math.max(0, total) };
}

/** A planned start as kept in the subscription's data while its payment is in flight (JSON-safe). */
export function storedStart(start: DelayedStart): Record<string, unknown> {
  return {
    state: start.state,
    periodIndex: start.periodIndex,
    periodStart: start.periodStart.toISOString(),
    periodEnd: start.periodEnd.toISOString(),
    trialEndsAt: start.trialEndsAt?.toISOString() ?? null,
    lines: start.lines.map((l) => ({ ...l })),
    couponCodes: [...start.couponCodes],
    totalInCents: start.totalInCents,
  };
}

/** The planned start kept in a subscription's data, if any. */
export function readStoredStart(data: Readonly<Record<string, unknown>>): DelayedStart | undefined {
  const raw = data[PENDING_START_KEY] as Record<string, unknown> | undefined;
  if (raw === undefined || raw === null || typeof raw !== 'object') return undefined;
  return {
    state: raw.state === 'trialing' ? 'trialing' : 'active',
    periodIndex: Number(raw.periodIndex),
    periodStart: new Date(String(raw.periodStart)),
    periodEnd: new Date(String(raw.periodEnd)),
    trialEndsAt: raw.trialEndsAt == null ? null : new Date(String(raw.trialEndsAt)),
    lines: (raw.lines as StartLine[]).map((l) => ({ ...l })),
    couponCodes: [...(raw.couponCodes as string[])],
    totalInCents: Number(raw.totalInCents),
  };
}

/** The subscription's data without a planned start. */
export function withoutStoredStart(data: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { [PENDING_START_KEY]: _dropped, ...rest } = data;
  return rest;
}

/** The ledger lines a planned start posts at `at` (its instant), in the start's period; its payment is not among them. */
export function startLines(subscription: SubscriptionRecord, start: DelayedStart, at: Date): NewTransaction[] {
  return start.lines.map((l) =>
    line(subscription, l.type, l.kind, l.amountInCents, l.memo, at, {
      periodIndex: start.periodIndex,
      componentId: l.componentId,
    }),
  );
}

/**
 * The subscription's fields once a planned start is written at `at`, beside its state
 * (`start.state`): its first period (or trial) and its dates, the planned start dropped from its
 * data, and the coupons that discounted the start counted (no longer deferred).
 */
export function startFields(
  subscription: SubscriptionRecord,
  start: DelayedStart,
  at: Date,
): Pick<
  SubscriptionRecord,
  | 'periodIndex'
  | 'currentPeriodStartedAt'
  | 'currentPeriodEndsAt'
  | 'nextAssessmentAt'
  | 'activatedAt'
  | 'trialStartedAt'
  | 'trialEndedAt'
  | 'data'
> {
  const data = withoutStoredStart(subscription.data);
  const codes = start.couponCodes;
  return {
    periodIndex: start.periodIndex,
    currentPeriodStartedAt: start.periodStart,
    currentPeriodEndsAt: start.periodEnd,
    nextAssessmentAt: start.periodEnd,
    activatedAt: start.state === 'active' ? at : null,
    trialStartedAt: start.trialEndsAt === null ? null : at,
    trialEndedAt: start.trialEndsAt,
    data:
      codes.length === 0
        ? data
        : {
            ...data,
            couponUses: couponUsesAfter(
              (data.couponUses ?? {}) as Record<string, unknown>,
              codes.map((code) => ({ code })),
            ),
            couponDeferred: ((data.couponDeferred ?? []) as string[]).filter((code) => !codes.includes(code)),
          },
  };
}

/**
 * For previews only, in a transaction that is rolled back: writes the start of an
 * `awaiting_signup` subscription as the due work will write it at its `initial_billing_at` (the
 * lines {@link planDelayedStart} plans at that instant, posted as the signup invoice, and the
 * subscription moved by {@link startFields}), without its payment, events or next renewal; while
 * the start's first payment is in flight, the start already planned and kept in its data. What a
 * preview then reads (the ledger, the invoice, the next renewal's manifest) is what the start
 * bills and what follows it. Returns the started subscription. Used by the signup preview, the
 * signup proforma and the proforma of an `awaiting_signup` subscription.
 */
export async function writeStartForPreview(
  tx: StorageTransaction,
  site: SiteRecord,
  subscription: SubscriptionRecord,
): Promise<SubscriptionRecord> {
  const version = await tx.catalog.findProductVersion(site.id, subscription.productId, subscription.productVersion);
  if (!version)
    throw new BillingError('storage', `Subscription ${subscription.id} refers to a missing product version.`);
  const at = subscription.currentPeriodEndsAt;
  const ctx: CommandContext = { tx, now: at, record: () => {} };
  // While the start's first payment is in flight its lines are already planned (and the metered
  // usage they bill taken off the balances): those are what will be written.
  const start = readStoredStart(subscription.data) ?? (await planDelayedStart(ctx, site, subscription, version.terms));
  await post(tx, startLines(subscription, start, at), { role: 'signup' });
  const started = await tx.subscriptions.updateAtVersion(site.id, subscription.id, subscription.version, {
    ...startFields(subscription, start, at),
    state: start.state,
    updatedAt: at,
  });
  if (!started) throw new BillingError('conflict', `Subscription ${subscription.id} changed during its preview.`);
  return started;
}
