import { invalid } from '../../errors.js';
import { decimalToMinor } from './conversion.js';
import { assertCurrency, currencyMinorDigits } from './currency.js';
import { safeMinorFromInteger } from './rounding.js';
import { parseWireDecimal } from './wire-decimal.js';

/** Options of {@link parseMajorAmount} and {@link parseMinorAmount}. */
export interface AmountParseOptions {
  /** The label that starts each error message; `Amount` for major amounts, `Amount in cents` for minor ones. */
  readonly field?: string;
  /** Accept amounts below zero (adjustments, balances); by default they are rejected as the service does. */
  readonly allowNegative?: boolean;
  /** The input attribute the error is about (`amount`, `amount_in_cents`), recorded on the error detail. */
  readonly attribute?: string;
}

/**
 * Parses a wire amount in major units (`"10.00"`, `"10"`, `10`, `10.5`, `"-5.00"`) into minor
 * units of the currency. Throws validation errors in the service's style: "Amount: is not a
 * number." for anything that is not a plain decimal, "Amount: must be greater than or equal to 0."
 * for a negative unless allowed, "Amount: has more decimal places than USD allows." when precision
 * would be lost (extra zero digits such as "10.000" are fine, they lose nothing), and "Amount: is
 * too large." when the minor amount is not a safe integer.
 */
export function parseMajorAmount(input: unknown, currency: string, options: AmountParseOptions = {}): number {
  const { field = 'Amount', allowNegative = false, attribute } = options;
  const code = assertCurrency(currency);
  const value = parseWireDecimal(input, { field, attribute });
  if (!allowNegative && value.isNegative()) throw invalid(`${field}: must be greater than or equal to 0.`, attribute);
  // decimal.js drops trailing zeros, so "10.000" has 0 decimal places here and is accepted.
  if (value.decimalPlaces() > currencyMinorDigits(code)) {
    throw invalid(`${field}: has more decimal places than ${code} allows.`, attribute);
  }
  // No rounding can happen: the value has at most the currency's decimal places.
  return decimalToMinor(value, code, 'down', field, attribute);
}

/**
 * Parses a wire amount already in minor units (`*_in_cents`: `1000`, `"1000"`, `"-5"`) into a
 * safe integer. Throws "Amount in cents: is not a number.", "...: must be an integer." for a
 * fraction such as `10.5` (a value with only zero decimals such as `"10.0"` is an integer and is
 * accepted), "...: must be greater than or equal to 0." for a negative unless allowed, and "...: is
 * too large." past `Number.MAX_SAFE_INTEGER`.
 */
export function parseMinorAmount(input: unknown, options: AmountParseOptions = {}): number {
  const { field = 'Amount in cents', allowNegative = false, attribute } = options;
  const value = parseWireDecimal(input, { field, attribute });
  // Integer before sign, as Rails' numericality validator orders its checks.
  if (!value.isInteger()) throw invalid(`${field}: must be an integer.`, attribute);
  if (!allowNegative && value.isNegative()) throw invalid(`${field}: must be greater than or equal to 0.`, attribute);
  return safeMinorFromInteger(value, field, attribute);
}
