import { assertMinor } from './minor.js';
import { type DecimalInput, pow10, toMoneyDecimal, toScaledInteger } from './money-decimal.js';
import { DEFAULT_ROUNDING_MODE, type RoundingMode, roundQuotient, safeMinorFromInteger } from './rounding.js';

/**
 * `percent` % of an amount in minor units, rounded once with the named mode (half-up by default):
 * the discount of a percentage coupon, a tax or a fee. `applyPercentage(1999, '12.5')` is 250. The
 * percentage is taken as an exact decimal (validate wire input with `parsePercentage` first); the
 * product is evaluated exactly over integers, so no intermediate rounding can shift the result.
 */
export function applyPercentage(
  amount: number,
  percent: DecimalInput,
  mode: RoundingMode = DEFAULT_ROUNDING_MODE,
): number {
  assertMinor(amount);
  const rate = toScaledInteger(toMoneyDecimal(percent, 'Percentage'));
  return safeMinorFromInteger(roundQuotient(BigInt(amount) * rate.int, 100n * pow10(rate.scale), mode));
}
