import type { Decimal } from 'decimal.js';
import { invalid } from '../../errors.js';
import { parseWireDecimal } from './wire-decimal.js';

/** Options of {@link parsePercentage}. */
export interface PercentageParseOptions {
  /** The label that starts each error message; `Percentage` by default. */
  readonly field?: string;
  /** The input attribute the error is about (`percentage`), recorded on the error detail. */
  readonly attribute?: string;
  /** The most decimal places accepted; 4 by default, enough for any rate the service displays. */
  readonly maxDecimalPlaces?: number;
}

/**
 * Parses a wire percentage (`"12.5"`, `12.5`, `"100"`) into a decimal between 0 and 100 inclusive.
 * Throws "Percentage: is not a number." for anything that is not a plain decimal, "Percentage: must
 * be between 0 and 100." outside that range, and "Percentage: must have at most 4 decimal places."
 * when more precision is given (trailing zeros do not count).
 */
export function parsePercentage(input: unknown, options: PercentageParseOptions = {}): Decimal {
  const { field = 'Percentage', attribute, maxDecimalPlaces = 4 } = options;
  const value = parseWireDecimal(input, { field, attribute });
  if (value.isNegative() || value.gt(100)) throw invalid(`${field}: must be between 0 and 100.`, attribute);
  if (value.decimalPlaces() > maxDecimalPlaces) {
    throw invalid(`${field}: must have at most ${maxDecimalPlaces} decimal places.`, attribute);
  }
  return value;
}
