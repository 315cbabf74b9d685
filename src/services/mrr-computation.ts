/**
 * One subscription's MRR, computed from what it is billed at (pinned product and component
 * versions, allocations, the period's metered usage, the coupons of its next renewal). Shared by
 * the MRR reports (`report-service.ts`) and the MRR movements the commands record
 * (`mrr-movements.ts`); it imports no service, so both can use it.
 */
import { componentPrice } from '../domain/catalog/component-pricing.js';
import { computeDiscount } from '../domain/catalog/coupon-discount.js';
import { roundQuotient } from '../domain/money/rounding.js';
import type { CouponRecord, MrrSubscriptionInput, StorageTransaction, SubscriptionState } from '../ports/storage.js';

/**
 * The states whose subscriptions count in MRR: the ones the engine renews and expects to collect.
 * `active`, and the dunning and unpaid states (`soft_failure`, `past_due`, `unpaid`), whose
 * subscriptions still renew and owe their charges. Left out: `trialing` (nothing recurring is
 * charged yet; it enters MRR when the trial converts), `on_hold` and `suspended` (billing is
 * paused), and the ended or never-started states (`cancelled`, `expired`, `trial_ended`,
 * `failed_to_create`, `awaiting_signup`). A subscription set to cancel at the end of its period
 * counts until it is cancelled.
 */
export const MRR_STATES: readonly SubscriptionState[] = ['active', 'soft_failure', 'past_due', 'unpaid'];

/** One subscription's monthly recurring revenue, split as the service splits it. */
export interface SubscriptionMrr {
  readonly subscriptionId: number;
  /** `planAmountInCents + usageAmountInCents`. */
  readonly amountInCents: number;
  /** The product price and quantity-based and on/off components, net of their coupon share. */
  readonly planAmountInCents: number;
  /** Metered usage of the current period, net of its coupon share. */
  readonly usageAmountInCents: number;
}

/**
 * One subscription's MRR: what its next period would recur, normalised to one month.
 * - Plan: the product price of the version it is pinned to, plus each quantity-based and on/off
 *   component at its allocated quantity and pinned pricing.
 * - Usage: each metered component priced at the usage recorded so far in the current period (what
 *   the next renewal bills in arrears).
 * - Coupons: the ones the next renewal would apply (recurring coupons within their duration, and
 *   any a trial deferred), computed over those lines as the renewal computes them; each line's
 *   discount is taken off the part (plan or usage) it belongs to.
 * - A month: an interval of `n` months is divided by `n`; an interval of `d` days is multiplied by
 *   365 / (12 × d) (a year of 365 days). Plan and usage are each rounded once, half away from zero,
 *   to a whole minor unit; the total is their sum, so the parts always add up.
 */
export function subscriptionMrr(
  input: MrrSubscriptionInput,
  coupons: readonly CouponRecord[],
  currency: string,
): SubscriptionMrr {
  return subscriptionMrrLines(input, coupons, currency).mrr;
}

/** One line of {@link subscriptionMrrLines}: the product (`componentId` null) or one component. */
export interface MrrLine {
  readonly componentId: number | null;
  /** 1 for the product and an on/off component, the allocation, or the period's metered usage. */
  readonly quantity: number;
  /** False for metered components (the usage part). */
  readonly recurring: boolean;
  /** The line's monthly share, net of its coupon share; a part's lines add up to the part. */
  readonly mrrInCents: number;
}

/**
 * {@link subscriptionMrr} with its lines: the product, then each component with a positive
 * quantity (by component id), each with its monthly share. A part's lines are rounded so that
 * they add up to the part exactly (line k gets the month of the first k lines less the month of
 * the first k - 1), so each is within a cent of its own rounding.
 */
export function subscriptionMrrLines(
  input: MrrSubscriptionInput,
  coupons: readonly CouponRecord[],
  currency: string,
): { mrr: SubscriptionMrr; lines: MrrLine[] } {
  const lines: { key: string; amountInCents: number }[] = [
    { key: 'plan:product', amountInCents: input.terms.priceInCents },
  ];
  const shown: { key: string; componentId: number | null; quantity: number; recurring: boolean }[] = [
    { key: 'plan:product', componentId: null, quantity: 1, recurring: true },
  ];
  for (const c of input.components) {
    const metered = c.kind === 'metered_component';
    const quantity = metered ? c.unitBalance : c.allocatedQuantity;
    if (quantity <= 0) continue;
    const key = `${metered ? 'usage' : 'plan'}:${c.componentId}`;
    shown.push({ key, componentId: c.componentId, quantity, recurring: !metered });
    const amount = componentPrice(c.pricing, quantity, currency);
    if (amount > 0) lines.push({ key, amountInCents: amount });
  }
  const applying = renewalCouponsOf(input, coupons);
  const discounts =
    applying.length === 0
      ? []
      : computeDiscount(
          lines,
          applying.map((c) => ({
            code: c.code,
            percentage: c.percentage,
            amountInCents: c.amountInCents,
            allowNegativeBalance: c.allowNegativeBalance,
            compoundingStrategy: c.compoundingStrategy,
          })),
        ).perLine;
  const discountOf = new Map(discounts.map((d) => [d.key, d.discountInCents]));
  const netOf = new Map(lines.map((line) => [line.key, line.amountInCents - (discountOf.get(line.key) ?? 0)]));
  const monthly = (amount: number) => perMonth(amount, input.terms.interval, input.terms.intervalUnit);
  // Running sums per part: a line's month is the month of the sum so far less the month before it.
  const running = { plan: 0, usage: 0 };
  const out: MrrLine[] = [];
  for (const line of shown) {
    const part = line.recurring ? 'plan' : 'usage';
    const before = running[part];
    running[part] += netOf.get(line.key) ?? 0;
    out.push({
      componentId: line.componentId,
      quantity: line.quantity,
      recurring: line.recurring,
      mrrInCents: monthly(running[part]) - monthly(before),
    });
  }
  const planMonthly = monthly(running.plan);
  const usageMonthly = monthly(running.usage);
  return {
    mrr: {
      subscriptionId: input.subscriptionId,
      amountInCents: planMonthly + usageMonthly,
      planAmountInCents: planMonthly,
      usageAmountInCents: usageMonthly,
    },
    lines: out,
  };
}

/** An amount charged every `count` `unit`s as a monthly amount (see {@link subscriptionMrr}). */
export function perMonth(amountInCents: number, count: number, unit: 'day' | 'month'): number {
  const safeCount = Number.isSafeInteger(count) && count > 0 ? count : 1;
  const [numerator, denominator] = unit === 'day' ? [365n, 12n * BigInt(safeCount)] : [1n, BigInt(safeCount)];
  return Number(roundQuotient(BigInt(amountInCents) * numerator, denominator, 'half_up'));
}

/** The coupons a subscription's next renewal applies, by the renewal's rule (`renewalCoupons`). */
function renewalCouponsOf(input: MrrSubscriptionInput, coupons: readonly CouponRecord[]): CouponRecord[] {
  const out: CouponRecord[] = [];
  for (const code of input.couponCodes) {
    const coupon = coupons.find((c) => c.code === code);
    if (coupon === undefined) continue;
    const withinDuration =
      coupon.durationPeriodCount === null || (input.couponUses[code] ?? 0) < coupon.durationPeriodCount;
    if (input.couponDeferred.includes(code) || (coupon.recurring && withinDuration)) out.push(coupon);
  }
  return out;
}

/**
 * Looks coupons up once per code for a whole report: a book has many subscriptions and few
 * coupon codes, so the lookups grow with the codes, not with the subscriptions.
 */
export function couponCache(tx: StorageTransaction, siteId: number) {
  const known = new Map<string, CouponRecord | undefined>();
  return async (input: MrrSubscriptionInput): Promise<CouponRecord[]> => {
    const out: CouponRecord[] = [];
    for (const code of input.couponCodes) {
      if (!known.has(code)) known.set(code, await tx.coupons.findByCode(siteId, code));
      const coupon = known.get(code);
      // A subcode finds its parent coupon; the subscription's own code is what its uses are kept under.
      if (coupon !== undefined) out.push(coupon.code === code ? coupon : { ...coupon, code });
    }
    return out;
  };
}
