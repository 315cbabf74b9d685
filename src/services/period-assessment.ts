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
  TransactionRecord,
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

/**
 * The subscription data key where a coupon added to an existing subscription records the period
 * it was added in (`{ CODE: periodIndex }`): it starts discounting at the next renewal, so it does
 * not price changes within that period.
 */
export const COUPON_ADDED_IN_PERIOD = 'couponAddedInPeriod';

/**
 * The subscription data key where a coupon removed from a subscription during a period it priced
 * records that period (`{ CODE: periodIndex }`): it keeps pricing that period's changes, since
 * the period was paid with it, and stops at the next renewal.
 */
export const COUPON_REMOVED_IN_PERIOD = 'couponRemovedInPeriod';

/**
 * The coupons that price a change within the subscription's current period (an allocation's
 * charge or credit, a migration that keeps the period): the percentage coupons the period was
 * assessed with, so a change is discounted at the rate the rest of the period was paid at and a
 * credit never gives back more than was paid. They are read from the period's own coupon lines
 * (`lines`: the subscription's ledger, or at least the current period's lines) rather than from
 * what the next renewal will apply, because the two differ:
 * - a coupon in its last discounted period has spent its uses for the next renewal, but it still
 *   discounted this period, so it discounts this period's changes;
 * - a coupon removed during the period keeps pricing the rest of it (the period was paid with it;
 *   the removal takes effect at the next renewal; {@link COUPON_REMOVED_IN_PERIOD});
 * - a coupon added during the period does not price it (it starts at the next renewal).
 * A coupon that wrote no line because the period's charges were nothing (a free product) counts
 * when the next renewal applies it and it was on the subscription before the period began.
 * Flat-amount coupons never price a change: a flat amount is a discount per assessment, and taken
 * off every change it would be given again with each one (docs/decisions.md).
 */
export async function periodCoupons(
  tx: StorageTransaction,
  subscription: SubscriptionRecord,
  lines: readonly Pick<TransactionRecord, 'type' | 'kind' | 'memo' | 'periodIndex'>[],
): Promise<CouponRecord[]> {
  const added = (subscription.data[COUPON_ADDED_IN_PERIOD] ?? {}) as Record<string, unknown>;
  const removed = (subscription.data[COUPON_REMOVED_IN_PERIOD] ?? {}) as Record<string, unknown>;
  const codes = new Set<string>();
  for (const [code, index] of Object.entries(removed)) if (index === subscription.periodIndex) codes.add(code);
  for (const l of lines) {
    if (l.type !== 'adjustment' || l.kind !== 'coupon' || l.periodIndex !== subscription.periodIndex) continue;
    const code = couponCodeOfMemo(l.memo);
    if (code !== undefined) codes.add(code);
  }
  for (const coupon of await renewalCoupons(tx, subscription)) {
    if (added[coupon.code] !== subscription.periodIndex) codes.add(coupon.code);
  }
  const out: CouponRecord[] = [];
  for (const code of codes) {
    const coupon = await tx.coupons.findByCode(subscription.siteId, code);
    if (coupon !== undefined && coupon.percentage !== null) out.push(coupon);
  }
  // The order the subscription lists them in (compounding applies them in order); removed ones last.
  const order = (code: string) => {
    const i = subscription.couponCodes.indexOf(code);
    return i === -1 ? Number.MAX_SAFE_INTEGER : i;
  };
  return out.sort((a, b) => order(a.code) - order(b.code));
}

/**
 * The code a coupon line names: every coupon line's memo is `Coupon: CODE` or
 * `Coupon: CODE - description` (`couponDiscounts`), and a code has no spaces.
 */
function couponCodeOfMemo(memo: string | null): string | undefined {
  if (memo === null || !memo.startsWith('Coupon: ')) return undefined;
  const code = memo.slice('Coupon: '.length).split(' ')[0];
  return code === undefined || code === '' ? undefined : code;
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
