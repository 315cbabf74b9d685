import { invalid } from '../../errors.js';

/**
 * Asserts that `value` is an amount in minor units: a JS number that is a safe integer. Used where
 * amounts cross a boundary (storage rows, command inputs already parsed, results of other modules)
 * so that a float or an imprecise huge number is caught before it is stored or summed. Throws the
 * service's validation messages: "<label>: is not a number.", "<label>: must be an integer." or
 * "<label>: is too large.".
 */
export function assertMinor(value: unknown, label = 'Amount', attribute?: string): asserts value is number {
  if (typeof value !== 'number' || Number.isNaN(value)) throw invalid(`${label}: is not a number.`, attribute);
  if (Number.isSafeInteger(value)) return;
  // Infinity and integers past 2^53 are "too large" rather than fractions: that is what a caller can fix.
  if (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER) {
    throw invalid(`${label}: is too large.`, attribute);
  }
  throw invalid(`${label}: must be an integer.`, attribute);
}

/**
 * Sums amounts in minor units, checking every operand and the running total. A float sum of safe
 * integers is exact until it passes 2^53, and any total past that fails `Number.isSafeInteger`, so
 * checking after each addition is enough to guarantee the result is exact.
 */
export function sumMinor(values: Iterable<number>, label = 'Amount'): number {
  let total = 0;
  for (const value of values) {
    assertMinor(value, label);
    total += value;
    if (!Number.isSafeInteger(total)) throw invalid(`${label}: is too large.`);
  }
  return total === 0 ? 0 : total;
}
