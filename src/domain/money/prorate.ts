import { invalid } from '../../errors.js';
import { assertMinor } from './minor.js';
import { type DecimalInput, pow10, toMoneyDecimal, toScaledInteger } from './money-decimal.js';
import { DEFAULT_ROUNDING_MODE, type RoundingMode, roundQuotient, safeMinorFromInteger } from './rounding.js';

/**
 * `amount × numerator / denominator`, rounded once to a minor unit with the named mode (half-up by
 * default), as a safe integer. Used for proration over seconds (`prorate(price, secondsLeft,
 * periodSeconds)`) and any other exact fraction of an amount. The denominator must be greater than
 * 0. The fraction is evaluated exactly over integers, so the result is correct for any size of
 * numerator and denominator, with no intermediate rounding.
 */
export function prorate(
  amount: number,
  numerator: DecimalInput,
  denominator: DecimalInput,
  mode: RoundingMode = DEFAULT_ROUNDING_MODE,
): number {
  assertMinor(amount);
  const top = toScaledInteger(toMoneyDecimal(numerator, 'Numerator'));
  const bottom = toScaledInteger(toMoneyDecimal(denominator, 'Denominator'));
  if (bottom.int <= 0n) throw invalid('Denominator: must be greater than 0.');
  // amount × (a / 10^s) / (b / 10^t) = amount × a × 10^t / (b × 10^s)
  const dividend = BigInt(amount) * top.int * pow10(bottom.scale);
  const divisor = bottom.int * pow10(top.scale);
  return safeMinorFromInteger(roundQuotient(dividend, divisor, mode));
}
