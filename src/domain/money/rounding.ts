import { Decimal } from 'decimal.js';
import { invalid } from '../../errors.js';
import { type DecimalInput, toMoneyDecimal } from './money-decimal.js';

/**
 * How a value between two minor units becomes one of them. `half_*` modes pick the nearer unit and
 * differ only on an exact half (`half_up` away from zero, `half_down` toward zero, `half_even` to
 * the even unit); `up`/`down` go away from/toward zero; `ceiling`/`floor` go toward +/- infinity.
 */
export type RoundingMode = 'half_up' | 'half_even' | 'half_down' | 'up' | 'down' | 'ceiling' | 'floor';

/** Every {@link RoundingMode}, for validation and for tests that must cover each one. */
export const ROUNDING_MODES: readonly RoundingMode[] = [
  'half_up',
  'half_even',
  'half_down',
  'up',
  'down',
  'ceiling',
  'floor',
];

/** The mode used wherever a rule does not name another: half-up to the minor unit. */
export const DEFAULT_ROUNDING_MODE: RoundingMode = 'half_up';

const DECIMAL_ROUNDING: Readonly<Record<RoundingMode, Decimal.Rounding>> = {
  half_up: Decimal.ROUND_HALF_UP,
  half_even: Decimal.ROUND_HALF_EVEN,
  half_down: Decimal.ROUND_HALF_DOWN,
  up: Decimal.ROUND_UP,
  down: Decimal.ROUND_DOWN,
  ceiling: Decimal.ROUND_CEIL,
  floor: Decimal.ROUND_FLOOR,
};

/**
 * The decimal.js rounding constant of a {@link RoundingMode}. The mode is checked at run time too,
 * because modes can arrive from site settings or plain JavaScript callers that the types do not cover.
 */
export function decimalRounding(mode: RoundingMode): Decimal.Rounding {
  if (!Object.hasOwn(DECIMAL_ROUNDING, mode)) {
    throw invalid(`Rounding mode: '${String(mode)}' is not supported.`, 'rounding_mode');
  }
  return DECIMAL_ROUNDING[mode];
}

/**
 * Converts an integer decimal to a JS number if it is a safe integer, and otherwise throws the
 * service's "is too large." validation error; this is the single gate between decimal arithmetic
 * and the `number` that holds minor units everywhere else. `-0` becomes `0` so equality checks and
 * serializers never see a negative zero.
 */
export function safeMinorFromInteger(value: Decimal | bigint, label = 'Amount', attribute?: string): number {
  const asNumber = typeof value === 'bigint' ? Number(value) : value.toNumber();
  const exact = typeof value === 'bigint' ? BigInt(asNumber) === value : value.eq(asNumber);
  if (!Number.isSafeInteger(asNumber) || !exact) throw invalid(`${label}: is too large.`, attribute);
  return asNumber === 0 ? 0 : asNumber;
}

/**
 * Rounds a value already expressed in minor units (for example `123.5` cents) to a whole minor unit
 * with the named mode and returns it as a safe integer. Rounding uses decimal.js `toDecimalPlaces`,
 * which is exact however many digits the input has (it is not limited by the configured precision).
 */
export function roundToMinor(value: DecimalInput, mode: RoundingMode = DEFAULT_ROUNDING_MODE): number {
  const rounded = toMoneyDecimal(value).toDecimalPlaces(0, decimalRounding(mode));
  return safeMinorFromInteger(rounded);
}

/**
 * Rounds the exact quotient `numerator / denominator` of two integers to an integer with the named
 * mode. Deciding from the integer quotient and remainder is exact for any size of operands, unlike
 * dividing in decimal.js, which rounds the quotient to its precision before the final rounding.
 * The denominator must be positive; callers move any sign to the numerator.
 */
export function roundQuotient(numerator: bigint, denominator: bigint, mode: RoundingMode): bigint {
  if (denominator <= 0n) throw invalid('Denominator: must be greater than 0.');
  decimalRounding(mode);
  const quotient = numerator / denominator; // BigInt division truncates toward zero.
  const remainder = numerator % denominator; // Same sign as the numerator.
  if (remainder === 0n) return quotient;
  const awayFromZero = quotient + (numerator < 0n ? -1n : 1n);
  const twiceRemainder = remainder < 0n ? -2n * remainder : 2n * remainder;
  switch (mode) {
    case 'down':
      return quotient;
    case 'up':
      return awayFromZero;
    case 'ceiling':
      return numerator > 0n ? awayFromZero : quotient;
    case 'floor':
      return numerator < 0n ? awayFromZero : quotient;
    default:
      if (twiceRemainder > denominator) return awayFromZero;
      if (twiceRemainder < denominator) return quotient;
      if (mode === 'half_up') return awayFromZero;
      if (mode === 'half_down') return quotient;
      return quotient % 2n === 0n ? quotient : awayFromZero;
  }
}
