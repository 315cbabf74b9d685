/**
 * What the next period of a subscription is billed, assessed in one place: the renewal writes it
 * and the billing manifest (the "next renewal" estimate) shows it, so the estimate is the renewal
 * by construction. Reads only; with `resetMetered` (the renewal) the metered usage it bills is
 * taken off the balances in the caller's transaction.
 */
import { nextPeriod } from '../domain/subscription/periods.js';
import type {
  CouponRecord,
  ProductTerms,
  SiteRecord,
  StorageTransaction,
  SubscriptionRecord,
} from '../ports/storage.js';
import type { CommandContext } from './command-runner.js';
import { renewalComponentLines } from './component-billing.js';
import { couponDiscounts, couponUsesAfter } from './subscription-service.js';

/** One charge of an assessed period. */
export interface AssessedCharge {
  readonly kind: string;
  readonly amountInCents: number;
  readonly memo: string;
  readonly componentId: number | null;
}

/** The next period of a subscription, what it charges, and its coupons' discounts. */
export interface PeriodAssessment {
  readonly period: { readonly index: number; readonly start: Date; readonly end: Date };
  /** Baseline, a setup fee deferred past a trial, then components in component order. */
  readonly charges: readonly AssessedCharge[];
  /** The coupons that discount this period (their uses count when it is written). */
  readonly coupons: readonly CouponRecord[];
  /** One negative line per coupon that gave a discount. */
  readonly discounts: readonly { readonly code: string; readonly amountInCents: number; readonly memo: string }[];
}

/** Assesses the period after the subscription's current one, at its pinned product version `terms`. */
export async function assessNextPeriod(
  ctx: CommandContext,
  site: SiteRecord,
  subscription: SubscriptionRecord,
  terms: ProductTerms,
  options: { readonly resetMetered: boolean },
): Promise<PeriodAssessment> {
  const period = nextPeriod(subscription, terms, site.timeZone, site.settings.periodRule);
  const dates = `${period.start.toISOString().slice(0, 10)} - ${period.end.toISOString().slice(0, 10)}`;
  const charges: AssessedCharge[] = [
    { kind: 'baseline', amountInCents: terms.priceInCents, memo: `${terms.name} (${dates})`, componentId: null },
  ];
  if (subscription.state === 'trialing' && terms.initialChargeAfterTrial && (terms.initialChargeInCents ?? 0) > 0) {
    charges.push({
      kind: 'initial',
      amountInCents: terms.initialChargeInCents!,
      memo: `${terms.name} setup fee`,
      componentId: null,
    });
  }
  // Components: quantity and on/off in advance for the new period, metered usage of the ending
  // period in arrears.
  for (const c of await renewalComponentLines(ctx, subscription, period, { resetMetered: options.resetMetered })) {
    charges.push({ kind: c.kind, amountInCents: c.amountInCents, memo: c.memo, componentId: c.componentId });
  }
  const coupons = await renewalCoupons(ctx.tx, subscription);
  return { period, charges, coupons, discounts: couponDiscounts(charges, coupons) };
}

/**
 * The coupons that discount a subscription's next renewal: recurring ones within their
 * `durationPeriodCount` (signup counts as the first period when it was discounted), and any coupon
 * a free trial deferred to the first amount due. Archived coupons keep applying.
 */
export async function renewalCoupons(
  tx: StorageTransaction,
  subscription: SubscriptionRecord,
): Promise<CouponRecord[]> {
  if (subscription.couponCodes.length === 0) return [];
  const uses = (subscription.data.couponUses ?? {}) as Record<string, number>;
  const deferred = (subscription.data.couponDeferred ?? []) as string[];
  const out: CouponRecord[] = [];
  for (const code of subscription.couponCodes) {
    const coupon = await tx.coupons.findByCode(subscription.siteId, code);
    if (!coupon) continue;
    const withinDuration = coupon.durationPeriodCount === null || (uses[code] ?? 0) < coupon.durationPeriodCount;
    if (deferred.includes(code) || (coupon.recurring && withinDuration)) out.push(coupon);
  }
  return out;
}

/** The subscription's data after a renewal applied these coupons: uses counted, deferrals spent. */
export function couponDataAfter(
  data: Readonly<Record<string, unknown>>,
  coupons: readonly CouponRecord[],
  discounts: readonly { code: string }[],
): Record<string, unknown> {
  const applied = new Set(coupons.map((c) => c.code));
  const deferred = ((data.couponDeferred ?? []) as string[]).filter((code) => !applied.has(code));
  return {
    ...data,
    couponUses: couponUsesAfter((data.couponUses ?? {}) as Record<string, unknown>, discounts),
    couponDeferred: deferred,
  };
}
