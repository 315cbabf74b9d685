import { Decimal } from 'decimal.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allocate,
  allocateEvenly,
  applyPercentage,
  type DecimalInput,
  decimalToMinor,
  MoneyDecimal,
  minorToDecimal,
  parseMajorAmount,
  parseMinorAmount,
  prorate,
  ROUNDING_MODES,
  type RoundingMode,
  roundToMinor,
  toMajorString,
} from '../../src/domain/money/index.js';

const MAX = Number.MAX_SAFE_INTEGER;
const CURRENCIES = ['USD', 'JPY', 'KWD'] as const;
const DIGITS: Record<(typeof CURRENCIES)[number], number> = { USD: 2, JPY: 0, KWD: 3 };

// An independent oracle: enough precision that every comparison below is exact for these inputs.
const Exact = Decimal.clone({ precision: 1200, toExpNeg: -9e15, toExpPos: 9e15 });

const safeAmount = fc.maxSafeInteger();
const currency = fc.constantFrom(...CURRENCIES);
const mode = fc.constantFrom(...ROUNDING_MODES);

const digitString = (maxLength: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { maxLength }).map((digits) => digits.join(''));

/** A non-negative ratio in every accepted form, from subnormal doubles to long decimal strings. */
const ratio: fc.Arbitrary<DecimalInput> = fc.oneof(
  fc.nat({ max: 1000 }),
  fc.constant(0),
  fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true }),
  fc
    .tuple(fc.bigInt({ min: 0n, max: 10n ** 20n }), digitString(12))
    .map(([whole, fraction]) => (fraction ? `${whole}.${fraction}` : `${whole}`)),
  fc.bigInt({ min: 0n, max: 10n ** 30n }),
  fc.nat({ max: 10_000 }).map((n) => new Decimal(n).div(7)),
);

/** A decimal string in minor units whose every rounding stays safe; ties (…5, …50) are frequent. */
const minorDecimalString = fc
  .tuple(
    fc.boolean(),
    fc.oneof(fc.bigInt({ min: 0n, max: BigInt(MAX - 1) }), fc.bigInt({ min: 0n, max: 1000n })),
    fc.oneof(digitString(45), fc.constantFrom('5', '50', '500', '49999999999999999999999999999999999999999999')),
  )
  .map(([negative, whole, fraction]) => `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`);

/** Checks the defining property of one rounding mode for an exact value and its rounded result. */
function expectRoundedCorrectly(exact: Decimal, rounded: number, roundingMode: RoundingMode): void {
  const result = new Exact(rounded);
  const diff = result.minus(exact);
  expect(Number.isSafeInteger(rounded)).toBe(true);
  expect(diff.abs().lt(1)).toBe(true);
  if (exact.isInteger()) {
    expect(diff.isZero()).toBe(true);
    return;
  }
  switch (roundingMode) {
    case 'floor':
      expect(result.lt(exact)).toBe(true);
      break;
    case 'ceiling':
      expect(result.gt(exact)).toBe(true);
      break;
    case 'down':
      expect(result.abs().lt(exact.abs())).toBe(true);
      break;
    case 'up':
      expect(result.abs().gt(exact.abs())).toBe(true);
      break;
    default: {
      const distance = diff.abs();
      expect(distance.lte(0.5)).toBe(true);
      if (distance.eq(0.5)) {
        if (roundingMode === 'half_up') expect(result.abs().gt(exact.abs())).toBe(true);
        if (roundingMode === 'half_down') expect(result.abs().lt(exact.abs())).toBe(true);
        if (roundingMode === 'half_even') expect(Math.abs(rounded) % 2).toBe(0);
      }
    }
  }
}

describe('allocate properties', () => {
  const ratios = fc
    .array(ratio, { minLength: 1, maxLength: 12 })
    .filter((list) => list.some((r) => !new Exact(typeof r === 'bigint' ? r.toString() : r).isZero()));

  it('parts sum exactly to the amount and each is within one unit of its exact share', () => {
    fc.assert(
      fc.property(safeAmount, ratios, (amount, list) => {
        const parts = allocate(amount, list);
        expect(parts).toHaveLength(list.length);
        expect(parts.reduce((sum, part) => sum + BigInt(part), 0n)).toBe(BigInt(amount));
        const exact = list.map((r) => new Exact(typeof r === 'bigint' ? r.toString() : r));
        const total = exact.reduce((sum, r) => sum.plus(r), new Exact(0));
        parts.forEach((part, index) => {
          expect(Number.isSafeInteger(part)).toBe(true);
          expect(Object.is(part, -0)).toBe(false);
          const share = new Exact(amount).times(exact[index] ?? 0).div(total);
          expect(new Exact(part).minus(share).abs().lt(1)).toBe(true);
          // Parts share the amount's sign: a split never turns a charge into a credit.
          expect(amount >= 0 ? part >= 0 : part <= 0).toBe(true);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('is deterministic and a negative amount mirrors the positive one', () => {
    fc.assert(
      fc.property(safeAmount, ratios, (amount, list) => {
        const first = allocate(amount, list);
        expect(allocate(amount, [...list])).toEqual(first);
        expect(allocate(-amount, list)).toEqual(first.map((part) => -part || 0));
      }),
    );
  });

  it('scaling every ratio by the same factor does not change the split', () => {
    fc.assert(
      fc.property(
        safeAmount,
        fc.array(fc.nat({ max: 1000 }), { minLength: 1, maxLength: 10 }).filter((l) => l.some((n) => n > 0)),
        fc.integer({ min: 1, max: 1000 }),
        (amount, list, factor) => {
          expect(
            allocate(
              amount,
              list.map((n) => n * factor),
            ),
          ).toEqual(allocate(amount, list));
          expect(
            allocate(
              amount,
              list.map((n) => new Decimal(n).div(1000)),
            ),
          ).toEqual(allocate(amount, list));
        },
      ),
    );
  });

  it('allocateEvenly equals allocate with equal ratios and differs by at most one unit', () => {
    fc.assert(
      fc.property(safeAmount, fc.integer({ min: 1, max: 50 }), (amount, count) => {
        const parts = allocateEvenly(amount, count);
        expect(parts).toEqual(
          allocate(
            amount,
            Array.from({ length: count }, () => 1),
          ),
        );
        const magnitudes = parts.map(Math.abs);
        expect(Math.max(...magnitudes) - Math.min(...magnitudes)).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe('rounding properties', () => {
  it('roundToMinor is within one unit of the exact value and respects its mode', () => {
    fc.assert(
      fc.property(minorDecimalString, mode, (value, roundingMode) => {
        expectRoundedCorrectly(new Exact(value), roundToMinor(value, roundingMode), roundingMode);
      }),
      { numRuns: 1000 },
    );
  });

  it('prorate rounds the exact rational amount × n / d with its mode', () => {
    fc.assert(
      fc.property(
        safeAmount,
        fc.bigInt({ min: 1n, max: 10n ** 40n }),
        fc.double({ min: -1, max: 1, noNaN: true }),
        mode,
        (amount, denominator, fraction, roundingMode) => {
          // A numerator in [-d, d] keeps the result within the safe range.
          const numerator = BigInt(new Exact(denominator.toString()).times(fraction).toFixed(0, Decimal.ROUND_DOWN));
          const rounded = prorate(amount, numerator, denominator, roundingMode);
          const exact = new Exact(amount).times(numerator.toString()).div(denominator.toString());
          expectRoundedCorrectly(exact, rounded, roundingMode);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('prorate agrees with decimal.js rounding when the quotient is a finite decimal', () => {
    fc.assert(
      fc.property(
        safeAmount,
        fc.integer({ min: 0, max: 12 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        mode,
        (amount, k, f, m) => {
          const denominator = 10n ** BigInt(k);
          const numerator = BigInt(Math.floor(f * Number(denominator)));
          const viaDecimal = roundToMinor(
            new MoneyDecimal(amount).times(numerator.toString()).div(denominator.toString()),
            m,
          );
          expect(prorate(amount, numerator, denominator, m)).toBe(viaDecimal);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('applyPercentage agrees with decimal.js and is bounded by the amount', () => {
    const percent = fc
      .tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 9999 }))
      .map(([whole, fraction]) => (whole === 100 ? '100' : `${whole}.${String(fraction).padStart(4, '0')}`));
    fc.assert(
      fc.property(safeAmount, percent, mode, (amount, p, m) => {
        const discount = applyPercentage(amount, p, m);
        expect(discount).toBe(roundToMinor(new MoneyDecimal(amount).times(p).div(100), m));
        expect(Math.abs(discount)).toBeLessThanOrEqual(Math.abs(amount));
        expectRoundedCorrectly(new Exact(amount).times(p).div(100), discount, m);
      }),
      { numRuns: 500 },
    );
  });

  it('decimalToMinor is the correctly rounded minor value of a major decimal', () => {
    fc.assert(
      fc.property(minorDecimalString, currency, mode, (value, code, m) => {
        // Read the generated digits as major units small enough to stay safe in any currency.
        const major = new Exact(value).div(10 ** DIGITS[code]).div(1000);
        const minor = decimalToMinor(major.toString(), code, m);
        expectRoundedCorrectly(major.times(10 ** DIGITS[code]), minor, m);
      }),
      { numRuns: 500 },
    );
  });
});

describe('conversion and parsing properties', () => {
  it('parseMajorAmount(toMajorString(m)) round-trips every safe amount', () => {
    fc.assert(
      fc.property(safeAmount, currency, (minor, code) => {
        const text = toMajorString(minor, code);
        expect(parseMajorAmount(text, code, { allowNegative: true })).toBe(minor);
        expect(decimalToMinor(minorToDecimal(minor, code), code)).toBe(minor);
      }),
      { numRuns: 1000 },
    );
  });

  it('toMajorString matches an exact decimal division', () => {
    fc.assert(
      fc.property(safeAmount, currency, (minor, code) => {
        const digits = DIGITS[code];
        const expected = new Exact(minor).div(new Exact(10).pow(digits)).toFixed(digits);
        expect(toMajorString(minor, code)).toBe(expected);
      }),
    );
  });

  it('a JS number amount with up to 15 significant digits parses like its string', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(10 ** 15) + 1, max: 10 ** 15 - 1 }), currency, (minor, code) => {
        const asNumber = Number(toMajorString(minor, code));
        expect(parseMajorAmount(asNumber, code, { allowNegative: true })).toBe(minor);
      }),
    );
  });

  it('parseMinorAmount(String(n)) and parseMinorAmount(n) return n for every safe integer', () => {
    fc.assert(
      fc.property(safeAmount, (n) => {
        expect(parseMinorAmount(String(n), { allowNegative: true })).toBe(n);
        expect(parseMinorAmount(n, { allowNegative: true })).toBe(n);
        if (n >= 0) expect(parseMinorAmount(` ${n} `)).toBe(n);
      }),
      { numRuns: 1000 },
    );
  });

  it('parseMinorAmount rejects every non-integer and every unsafe integer', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x)),
          fc.bigInt({ min: BigInt(MAX) + 1n, max: 10n ** 30n }).map((n) => n.toString()),
        ),
        (input) => {
          expect(() => parseMinorAmount(input, { allowNegative: true })).toThrow(
            /^Amount in cents: (must be an integer|is too large)\.$/,
          );
        },
      ),
    );
  });
});
