import { describe, expect, it } from 'vitest';
import { normaliseCouponCode, parseCouponCode } from '../../src/domain/catalog/coupon-code.js';
import { computeDiscount, type DiscountCoupon, stackingErrors } from '../../src/domain/catalog/coupon-discount.js';
import { BillingError } from '../../src/errors.js';

const amountCoupon = (amountInCents: number, allowNegativeBalance: boolean, code = 'FLAT'): DiscountCoupon => ({
  code,
  percentage: null,
  amountInCents,
  allowNegativeBalance,
});
const percentCoupon = (
  percentage: string,
  compoundingStrategy: 'compound' | 'full-price' = 'compound',
  code = 'PCT',
): DiscountCoupon => ({ code, percentage, amountInCents: null, allowNegativeBalance: false, compoundingStrategy });

function messagesOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof BillingError) return error.messages;
    throw error;
  }
  throw new Error('expected a validation error');
}

describe('computeDiscount: reference §12.9 C1 and C2', () => {
  // The reference's C1 row says "balance -3000" but cites the same page as its §6 table, which
  // (like the page itself, chargify/docs.chargify.com coupons.textile) gives -$70 for this case.
  it('C1: a $100 coupon on a $30 product with a negative balance allowed leaves -$70', () => {
    const result = computeDiscount([{ key: 'base', amountInCents: 3000 }], [amountCoupon(10_000, true)]);
    expect(result.totalDiscountInCents).toBe(10_000);
    expect(3000 - result.totalDiscountInCents).toBe(-7000);
    expect(result.perLine).toEqual([{ key: 'base', discountInCents: 10_000 }]);
  });

  it('C2: the same coupon without a negative balance is capped at what is due, leaving 0', () => {
    const result = computeDiscount([{ key: 'base', amountInCents: 3000 }], [amountCoupon(10_000, false)]);
    expect(result.totalDiscountInCents).toBe(3000);
    expect(3000 - result.totalDiscountInCents).toBe(0);
  });
});

describe('computeDiscount', () => {
  it('discounts the total of every line (base, setup fee, components), rounding a percentage half-up once', () => {
    const lines = [
      { key: 'base', amountInCents: 1004 },
      { key: 'setup', amountInCents: 4 },
      { key: 'component:7', amountInCents: 4 },
    ];
    const result = computeDiscount(lines, [percentCoupon('12.5')]);
    // 12.5% of 1012 is exactly 126.5, which rounds half-up to 127; rounding per line would give 126 + 1 + 1.
    expect(result.totalDiscountInCents).toBe(127);
    expect(result.perLine.reduce((sum, line) => sum + line.discountInCents, 0)).toBe(127);
    expect(result.perLine.map((l) => l.key)).toEqual(['base', 'setup', 'component:7']);
    for (const [i, line] of result.perLine.entries()) {
      expect(line.discountInCents).toBeLessThanOrEqual(lines[i]!.amountInCents);
    }
    expect(result.perCoupon).toEqual([{ code: 'PCT', discountInCents: 127, perLine: result.perLine }]);
  });

  it('compounds percentages on what is left, or applies each to the full price', () => {
    const lines = [{ key: 'base', amountInCents: 10_000 }];
    const compound = computeDiscount(lines, [
      percentCoupon('50', 'compound', 'A'),
      percentCoupon('50', 'compound', 'B'),
    ]);
    expect(compound.perCoupon.map((c) => c.discountInCents)).toEqual([5000, 2500]);
    expect(compound.totalDiscountInCents).toBe(7500);
    const full = computeDiscount(lines, [
      percentCoupon('50', 'full-price', 'A'),
      percentCoupon('30', 'full-price', 'B'),
    ]);
    expect(full.perCoupon.map((c) => c.discountInCents)).toEqual([5000, 3000]);
    // Two full-price 60% coupons would take 120%; without a negative balance the second is capped.
    const capped = computeDiscount(lines, [
      percentCoupon('60', 'full-price', 'A'),
      percentCoupon('60', 'full-price', 'B'),
    ]);
    expect(capped.perCoupon.map((c) => c.discountInCents)).toEqual([6000, 4000]);
  });

  it('splits an amount over the lines in proportion to what they owe, summing exactly', () => {
    const result = computeDiscount(
      [
        { key: 'a', amountInCents: 100 },
        { key: 'b', amountInCents: 100 },
        { key: 'c', amountInCents: 100 },
      ],
      [amountCoupon(100, false)],
    );
    expect(result.perLine.map((l) => l.discountInCents)).toEqual([34, 33, 33]);
  });

  it('spreads a negative-balance excess over the lines by their amounts', () => {
    const result = computeDiscount(
      [
        { key: 'base', amountInCents: 3000 },
        { key: 'setup', amountInCents: 1000 },
      ],
      [amountCoupon(10_000, true)],
    );
    // 4000 covers both lines; the 6000 excess splits 3:1.
    expect(result.perLine).toEqual([
      { key: 'base', discountInCents: 7500 },
      { key: 'setup', discountInCents: 2500 },
    ]);
  });

  it('gives nothing while nothing is due (a free trial defers the coupon)', () => {
    const result = computeDiscount(
      [{ key: 'trial', amountInCents: 0 }],
      [amountCoupon(5000, true), percentCoupon('10')],
    );
    expect(result.totalDiscountInCents).toBe(0);
    expect(result.perCoupon.map((c) => c.discountInCents)).toEqual([0, 0]);
    expect(computeDiscount([], [amountCoupon(5000, true)]).totalDiscountInCents).toBe(0);
  });

  it('lets a later capped coupon take nothing once an earlier one went negative', () => {
    const result = computeDiscount(
      [{ key: 'base', amountInCents: 3000 }],
      [amountCoupon(5000, true, 'BIG'), amountCoupon(1000, false, 'SMALL')],
    );
    expect(result.perCoupon.map((c) => c.discountInCents)).toEqual([5000, 0]);
  });

  it('refuses coupons with both or neither kind of discount, bad percentages and bad lines', () => {
    const line = [{ key: 'base', amountInCents: 100 }];
    const both: DiscountCoupon = { code: 'X', percentage: '10', amountInCents: 100, allowNegativeBalance: false };
    const neither: DiscountCoupon = { code: 'X', percentage: null, amountInCents: null, allowNegativeBalance: false };
    expect(messagesOf(() => computeDiscount(line, [both]))).toEqual([
      'Coupon X: must have either a percentage or an amount, not both or neither.',
    ]);
    expect(messagesOf(() => computeDiscount(line, [neither]))).toEqual([
      'Coupon X: must have either a percentage or an amount, not both or neither.',
    ]);
    expect(messagesOf(() => computeDiscount(line, [percentCoupon('100.5')]))).toEqual([
      'Percentage: must be between 0 and 100.',
    ]);
    expect(messagesOf(() => computeDiscount(line, [amountCoupon(-1, false)]))).toEqual([
      'Amount in cents: must be greater than or equal to 0.',
    ]);
    expect(messagesOf(() => computeDiscount([...line, ...line], []))).toEqual([
      "Line item key: 'base' appears more than once.",
    ]);
    expect(messagesOf(() => computeDiscount([{ key: 'x', amountInCents: -5 }], []))).toEqual([
      'Line amount: must be greater than or equal to 0.',
    ]);
    expect(messagesOf(() => computeDiscount([{ key: 'x', amountInCents: 1.5 }], []))).toEqual([
      'Line amount: must be an integer.',
    ]);
  });
});

describe('stackingErrors', () => {
  it('allows one coupon of any kind, and several only when each is stackable', () => {
    expect(stackingErrors([], [{ code: 'ONLY', stackable: false }])).toEqual([]);
    expect(stackingErrors([{ code: 'A', stackable: true }], [{ code: 'B', stackable: true }])).toEqual([]);
    expect(stackingErrors([{ code: 'A', stackable: false }], [{ code: 'B', stackable: false }])).toEqual([
      'Coupon Codes: Subscription already has at least one non-stackable coupon.',
      "Coupon Codes: 'B' - That coupon is not stackable",
    ]);
  });
});

describe('coupon codes', () => {
  it('normalises to upper case without surrounding space', () => {
    expect(normaliseCouponCode('  save10 ')).toBe('SAVE10');
    expect(parseCouponCode('john.doe+vip@example.com')).toBe('JOHN.DOE+VIP@EXAMPLE.COM');
    expect(parseCouponCode('50%_off-now')).toBe('50%_OFF-NOW');
  });

  it('refuses blank, too long and codes with other characters', () => {
    expect(messagesOf(() => parseCouponCode('  '))).toEqual(['Code: cannot be blank.']);
    expect(messagesOf(() => parseCouponCode(undefined))).toEqual(['Code: cannot be blank.']);
    expect(messagesOf(() => parseCouponCode('A'.repeat(256)))).toEqual([
      'Code: is too long (maximum is 255 characters).',
    ]);
    for (const bad of ['SAVE 10', 'SAVE#1', 'CAFÉ', 'A/B']) {
      expect(messagesOf(() => parseCouponCode(bad))).toEqual([
        'Code: may contain only letters, numbers and the characters _ % @ + - .',
      ]);
    }
    expect(parseCouponCode('A'.repeat(255))).toHaveLength(255);
  });
});
