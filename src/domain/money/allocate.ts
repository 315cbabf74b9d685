import { invalid } from '../../errors.js';
import { assertMinor } from './minor.js';
import { type DecimalInput, pow10, toMoneyDecimal, toScaledInteger } from './money-decimal.js';

/**
 * Splits an amount in minor units into parts proportional to `ratios` with the largest-remainder
 * method: each part first gets the floor of its exact share, then the units left over go one each
 * to the parts with the largest remainders, earlier index first on a tie. The parts therefore sum
 * exactly to `amount` (no minor unit is lost or invented), each is within one unit of its exact
 * share, and the result depends only on the inputs. A negative amount is split by magnitude and
 * negated, so it mirrors the positive split. Ratios must be non-negative and not all zero; they are
 * compared as exact decimals, so `[1, 2]`, `['0.1', '0.2']` and Decimals agree.
 */
export function allocate(amount: number, ratios: readonly DecimalInput[]): number[] {
  assertMinor(amount);
  if (ratios.length === 0) throw invalid('Ratios: cannot be empty.');
  const scaled = ratios.map((ratio) => {
    const value = toMoneyDecimal(ratio, 'Ratio');
    if (value.isNegative() && !value.isZero()) throw invalid('Ratio: must be greater than or equal to 0.');
    return toScaledInteger(value);
  });
  // Bring every ratio to one scale so they become integers that can be compared and summed exactly.
  const scale = scaled.reduce((max, s) => Math.max(max, s.scale), 0);
  const weights = scaled.map((s) => s.int * pow10(scale - s.scale));
  const total = weights.reduce((sum, weight) => sum + weight, 0n);
  if (total === 0n) throw invalid('Ratios: must not all be zero.');

  const magnitude = BigInt(Math.abs(amount));
  const parts = weights.map((weight) => (magnitude * weight) / total);
  // Every remainder is over the same denominator `total`, so comparing numerators compares shares.
  const remainders = weights.map((weight) => (magnitude * weight) % total);
  let left = magnitude - parts.reduce((sum, part) => sum + part, 0n);
  const order = remainders
    .map((remainder, index) => ({ remainder, index }))
    // Array.prototype.sort is stable, so equal remainders keep index order: earlier index first.
    .sort((a, b) => (a.remainder === b.remainder ? 0 : a.remainder > b.remainder ? -1 : 1));
  for (const { index } of order) {
    if (left === 0n) break;
    parts[index] = (parts[index] ?? 0n) + 1n;
    left -= 1n;
  }
  // Parts never exceed |amount|, so they are safe integers; `|| 0` avoids returning -0.
  return parts.map((part) => (amount < 0 ? -Number(part) : Number(part)) || 0);
}

/**
 * Splits an amount in minor units into `count` parts that differ by at most one unit, larger parts
 * first (`allocateEvenly(100, 3)` is `[34, 33, 33]`), summing exactly to `amount`. It is
 * {@link allocate} with equal ratios, computed directly with exact integer division.
 */
export function allocateEvenly(amount: number, count: number): number[] {
  assertMinor(amount);
  if (!Number.isSafeInteger(count) || count < 1) throw invalid('Count: must be greater than 0.');
  const magnitude = Math.abs(amount);
  // `%` is exact on safe integers, and subtracting the remainder first makes the division exact too.
  const remainder = magnitude % count;
  const base = (magnitude - remainder) / count;
  const sign = amount < 0 ? -1 : 1;
  return Array.from({ length: count }, (_, index) => sign * (index < remainder ? base + 1 : base) || 0);
}
