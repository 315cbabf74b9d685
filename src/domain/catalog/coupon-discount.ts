/**
 * The discount coupons give an assessment: it applies to the total of all the
 * assessment's charges (base price, setup fee, components), not only the base price, and is split
 * back over the line items so that the parts sum exactly to the discount.
 */
import { invalid } from '../../errors.js';
import {
  allocate,
  applyPercentage,
  assertMinor,
  DEFAULT_ROUNDING_MODE,
  type DecimalInput,
  parsePercentage,
  type RoundingMode,
  sumMinor,
} from '../money/index.js';

/** How a coupon's percentage combines with the coupons before it. */
export type CompoundingStrategy = 'compound' | 'full-price';

/** One charge of an assessment: a key the caller recognises (`base`, `setup`, `component:7`) and its amount. */
export interface DiscountLineItem {
  readonly key: string;
  readonly amountInCents: number;
}

/** The terms of a coupon that decide its discount. Exactly one of `percentage` and `amountInCents` is set. */
export interface DiscountCoupon {
  readonly code: string;
  /** 0-100, an exact decimal. */
  readonly percentage: DecimalInput | null;
  /** A flat amount in minor units. */
  readonly amountInCents: number | null;
  /** True: the discount may exceed what is due, leaving a negative balance. False: it is capped at what is due. */
  readonly allowNegativeBalance: boolean;
  /** `compound` (default): a percentage applies to what earlier coupons left; `full-price`: to the undiscounted total. */
  readonly compoundingStrategy?: CompoundingStrategy;
}

/** Options of {@link computeDiscount}. */
export interface DiscountOptions {
  /** How a percentage discount is rounded to the minor unit; half-up by default. */
  readonly roundingMode?: RoundingMode;
}

/** The discount of one line item. */
export interface LineDiscount {
  readonly key: string;
  readonly discountInCents: number;
}

/** What one coupon took off, in total and per line. */
export interface CouponDiscount {
  readonly code: string;
  readonly discountInCents: number;
  readonly perLine: readonly LineDiscount[];
}

/** The result of {@link computeDiscount}. The per-line and per-coupon figures each sum exactly to the total. */
export interface DiscountResult {
  readonly totalDiscountInCents: number;
  readonly perLine: readonly LineDiscount[];
  readonly perCoupon: readonly CouponDiscount[];
}

/**
 * The discount of `coupons`, applied in order, to an assessment's line items.
 *
 * - Nothing is due, nothing is discounted: an assessment totalling 0 (a free trial) gets no
 *   discount, so the coupon waits for the first amount due.
 * - A percentage coupon takes `applyPercentage(base, percentage)` (rounded once, half-up by default),
 *   where the base is the total left after earlier coupons (`compound`) or the undiscounted total
 *   (`full-price`).
 * - An amount coupon takes its amount.
 * - Without `allowNegativeBalance` a coupon takes at most what is still due; with it, the excess
 *   stays as a credit ($100 off $30 is a discount of 10000, a balance of -7000).
 * - Each coupon's discount is split over the lines in proportion to what each line still owes
 *   (with {@link allocate}, so the parts sum exactly); an excess beyond what is owed is split in
 *   proportion to the lines' amounts. Hence, without negative balances, no line is discounted
 *   below zero.
 */
export function computeDiscount(
  lineItems: readonly DiscountLineItem[],
  coupons: readonly DiscountCoupon[],
  options: DiscountOptions = {},
): DiscountResult {
  const mode = options.roundingMode ?? DEFAULT_ROUNDING_MODE;
  const amounts = checkLines(lineItems);
  const total = sumMinor(amounts, 'Line amount');
  const remaining = [...amounts];
  const perLine = amounts.map(() => 0);
  const perCoupon: CouponDiscount[] = [];
  for (const coupon of coupons) {
    const terms = checkCoupon(coupon);
    const left = sumMinor(remaining);
    let discount = 0;
    if (total > 0) {
      if (terms.percentage !== null) {
        const base = coupon.compoundingStrategy === 'full-price' ? total : Math.max(left, 0);
        discount = applyPercentage(base, terms.percentage, mode);
      } else {
        discount = terms.amountInCents;
      }
      if (!coupon.allowNegativeBalance) discount = Math.min(discount, Math.max(left, 0));
    }
    const parts = splitOverLines(discount, remaining, amounts);
    parts.forEach((part, i) => {
      remaining[i] = (remaining[i] ?? 0) - part;
      perLine[i] = (perLine[i] ?? 0) + part;
    });
    perCoupon.push({
      code: coupon.code,
      discountInCents: discount,
      perLine: lineItems.map((line, i) => ({ key: line.key, discountInCents: parts[i] ?? 0 })),
    });
  }
  return {
    totalDiscountInCents: sumMinor(perCoupon.map((c) => c.discountInCents)),
    perLine: lineItems.map((line, i) => ({ key: line.key, discountInCents: perLine[i] ?? 0 })),
    perCoupon,
  };
}

/**
 * The problems with adding coupons to a subscription that already has some (several
 * coupons only if each is stackable), as the service words them in `add_coupon` errors. Empty when
 * the combination is allowed.
 */
export function stackingErrors(
  applied: readonly { readonly code: string; readonly stackable: boolean }[],
  adding: readonly { readonly code: string; readonly stackable: boolean }[],
): string[] {
  if (applied.length + adding.length <= 1) return [];
  const errors: string[] = [];
  if (applied.some((c) => !c.stackable))
    errors.push('Coupon Codes: Subscription already has at least one non-stackable coupon.');
  for (const coupon of adding) {
    if (!coupon.stackable) errors.push(`Coupon Codes: '${coupon.code}' - That coupon is not stackable`);
  }
  return errors;
}

/**
 * Splits one coupon's discount: what the lines still owe first, in proportion to it, then any
 * excess (a negative balance) in proportion to the lines' original amounts.
 */
function splitOverLines(discount: number, remaining: readonly number[], amounts: readonly number[]): number[] {
  if (discount === 0 || amounts.length === 0) return amounts.map(() => 0);
  const owed = remaining.map((r) => Math.max(r, 0));
  const owedTotal = sumMinor(owed);
  const covered = Math.min(discount, owedTotal);
  const excess = discount - covered;
  const first = covered > 0 ? allocate(covered, owed) : owed.map(() => 0);
  const second = excess > 0 ? allocate(excess, amounts) : amounts.map(() => 0);
  return first.map((part, i) => part + (second[i] ?? 0));
}

function checkLines(lineItems: readonly DiscountLineItem[]): number[] {
  const keys = new Set<string>();
  return lineItems.map((line) => {
    if (typeof line.key !== 'string' || line.key === '') throw invalid('Line item key: cannot be blank.');
    if (keys.has(line.key)) throw invalid(`Line item key: '${line.key}' appears more than once.`);
    keys.add(line.key);
    assertMinor(line.amountInCents, 'Line amount');
    if (line.amountInCents < 0) throw invalid('Line amount: must be greater than or equal to 0.');
    return line.amountInCents;
  });
}

type CheckedCoupon = { percentage: DecimalInput; amountInCents: null } | { percentage: null; amountInCents: number };

function checkCoupon(coupon: DiscountCoupon): CheckedCoupon {
  const hasPercentage = coupon.percentage !== null && coupon.percentage !== undefined;
  const hasAmount = coupon.amountInCents !== null && coupon.amountInCents !== undefined;
  if (hasPercentage === hasAmount) {
    throw invalid(`Coupon ${coupon.code}: must have either a percentage or an amount, not both or neither.`);
  }
  if (hasPercentage) {
    const value = coupon.percentage as DecimalInput;
    parsePercentage(typeof value === 'object' ? value.toFixed() : value);
    return { percentage: value, amountInCents: null };
  }
  const amount = coupon.amountInCents as number;
  assertMinor(amount, 'Amount in cents');
  if (amount < 0) throw invalid('Amount in cents: must be greater than or equal to 0.');
  return { percentage: null, amountInCents: amount };
}
