/**
 * What a period has paid for, recomputed from the ledger lines already billed for it: the pure
 * half of "recompute and diff" (Kill Bill's billing-events junction, done over our ledger).
 *
 * Every line billed in advance for the rest of a period (the baseline, a trial price, a quantity
 * or on/off component, a prorated credit or charge from a migration or an allocation) covers the
 * time from the instant it was posted to the period's end. A change at instant `at` therefore owes
 * back, for each such line, the share of it that falls after `at`; the sum over the lines is what
 * the period has paid for its remaining time. Because this is worked out from what was billed,
 * not from the price the subscription has now, any sequence of changes in one period is right by
 * construction: an earlier change's credit and charge are themselves lines, so a second change
 * credits exactly what is still unused, never the same time twice; a coupon's discount lowers
 * what was paid, so it lowers the credit; and the credit can never exceed what was billed.
 *
 * Nothing here reads storage or a clock.
 */
import { DEFAULT_ROUNDING_MODE, roundQuotient } from '../domain/money/rounding.js';

/** Ledger kinds billed in advance for the rest of a period: their unused part is owed back on a change. */
export const IN_ADVANCE_KINDS: ReadonlySet<string> = new Set([
  'baseline',
  'trial',
  'quantity_based_component',
  'on_off_component',
  'prorated',
]);

/** The fields of a ledger line that the assessment reads. */
export interface BilledLine {
  readonly type: string;
  readonly kind: string | null;
  readonly amountInCents: number;
  /** When it was posted: the start of the time it covers. */
  readonly createdAt: Date;
}

/**
 * What the lines billed for one period paid for the time from `at` to `periodEnd`, in minor units,
 * rounded once (half up) from the exact sum of fractions, and never below 0 nor above what those
 * lines billed in all.
 *
 * - A charge, credit or prorated adjustment of an {@link IN_ADVANCE_KINDS} kind posted at `t`
 *   covers `[t, periodEnd)`: its unused share is `amount × (periodEnd − at) / (periodEnd − t)`
 *   (all of it when `t >= at`).
 * - A coupon adjustment discounts everything posted with it (same instant) that is billed at list
 *   price: the charges (setup fees and metered usage too) and the credits of a component decrease
 *   (a positive coupon line takes back the discount on what is credited). Only its share of the
 *   in-advance lines posted with it is prorated, in proportion `inAdvance / discounted` of that
 *   posting. A prorated adjustment is already net of discounts and is never discounted again.
 * - Everything else (setup fees, metered usage billed in arrears, one-time charges, payments,
 *   refunds) is not time-based and is never owed back.
 */
export function unpaidRemainder(lines: readonly BilledLine[], periodEnd: Date, at: Date): number {
  const end = BigInt(periodEnd.getTime());
  const cut = BigInt(Math.min(at.getTime(), periodEnd.getTime()));
  if (cut >= end) return 0;
  // Lines posted together (one command, one instant) share that posting's coupon discounts.
  interface Posting {
    /** Everything the posting's coupons discount: its charges and its in-advance credits (signed). */
    discounted: bigint;
    /** The in-advance charges and credits among them. */
    inAdvance: bigint;
    /** In-advance adjustments (prorated credits or charges), already net of any discount. */
    net: bigint;
    coupons: bigint;
  }
  const postings = new Map<number, Posting>();
  for (const line of lines) {
    const key = line.createdAt.getTime();
    const posting = postings.get(key) ?? { discounted: 0n, inAdvance: 0n, net: 0n, coupons: 0n };
    const amount = BigInt(line.amountInCents);
    const inAdvance = line.kind !== null && IN_ADVANCE_KINDS.has(line.kind);
    if (line.type === 'charge') {
      posting.discounted += amount;
      if (inAdvance) posting.inAdvance += amount;
    } else if (line.type === 'adjustment' && line.kind === 'coupon') {
      posting.coupons += amount;
    } else if (inAdvance && line.type === 'credit') {
      posting.discounted += amount;
      posting.inAdvance += amount;
    } else if (inAdvance && line.type === 'adjustment') {
      posting.net += amount;
    }
    postings.set(key, posting);
  }
  // Σ over postings of paid × (end − cut) / (end − t), as one exact fraction, where a posting paid
  // its net adjustments plus its in-advance lines less their share of its coupons:
  // net + inAdvance × (discounted + coupons) / discounted.
  let numerator = 0n;
  let denominator = 1n;
  let billed = 0n;
  for (const [posted, { discounted, inAdvance, net, coupons }] of postings) {
    if (inAdvance === 0n && net === 0n) continue;
    const t = BigInt(posted);
    if (t >= end) continue;
    // paid = net + inAdvance × (discounted + coupons) / discounted, over a positive scale.
    const scale = discounted === 0n ? 1n : discounted < 0n ? -discounted : discounted;
    const sign = discounted < 0n ? -1n : 1n;
    const paid = net * scale + (discounted === 0n ? inAdvance : inAdvance * (discounted + coupons) * sign);
    const span = end - t;
    const unused = t >= cut ? span : end - cut;
    numerator = numerator * scale * span + paid * unused * denominator;
    denominator = denominator * scale * span;
    billed += paid / scale;
  }
  if (numerator <= 0n) return 0;
  const rounded = roundQuotient(numerator, denominator, DEFAULT_ROUNDING_MODE);
  const cap = billed < 0n ? 0n : billed;
  return Number(rounded > cap ? cap : rounded);
}

/** A period: the instants it starts and ends. */
export interface PeriodBounds {
  readonly start: Date;
  readonly end: Date;
}

/**
 * The price of a full period charged for the part of `period` after `at`:
 * `price × (end − at) / (end − start)`, rounded half up; the full price when `at` is at or before
 * the start.
 */
export function remainderOf(priceInCents: number, period: PeriodBounds, at: Date): number {
  const start = period.start.getTime();
  const end = period.end.getTime();
  const from = Math.max(start, Math.min(at.getTime(), end));
  if (end <= start) return priceInCents;
  return Number(roundQuotient(BigInt(priceInCents) * BigInt(end - from), BigInt(end - start), DEFAULT_ROUNDING_MODE));
}
