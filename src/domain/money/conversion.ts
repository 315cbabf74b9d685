import type { Decimal } from 'decimal.js';
import { currencyMinorDigits } from './currency.js';
import { assertMinor } from './minor.js';
import { type DecimalInput, MoneyDecimal, toMoneyDecimal } from './money-decimal.js';
import { DEFAULT_ROUNDING_MODE, decimalRounding, type RoundingMode, safeMinorFromInteger } from './rounding.js';

/**
 * Formats minor units as the service's major-unit decimal string for the currency: `1000` is
 * "10.00" in USD, "1000" in JPY and "1.000" in KWD; negatives carry a leading "-". The digits are
 * placed by string manipulation of the integer, so no division and no float is involved.
 */
export function toMajorString(minor: number, currency: string): string {
  assertMinor(minor);
  const digits = currencyMinorDigits(currency);
  const magnitude = String(Math.abs(minor)).padStart(digits + 1, '0');
  const sign = minor < 0 ? '-' : '';
  if (digits === 0) return sign + magnitude;
  const split = magnitude.length - digits;
  return `${sign}${magnitude.slice(0, split)}.${magnitude.slice(split)}`;
}

/** The exact major-unit value of an amount in minor units, as a decimal (`1050` USD is `10.5`). */
export function minorToDecimal(minor: number, currency: string): Decimal {
  return new MoneyDecimal(toMajorString(minor, currency));
}

/**
 * Converts a major-unit decimal to minor units of the currency, rounding with the named mode, and
 * returns a safe integer (or throws "Amount: is too large."). It rounds to the currency's decimal
 * places before shifting the point: shifting first would multiply in decimal.js, which rounds a
 * product longer than its precision and so could round twice.
 */
export function decimalToMinor(
  value: DecimalInput,
  currency: string,
  mode: RoundingMode = DEFAULT_ROUNDING_MODE,
  label = 'Amount',
  attribute?: string,
): number {
  const digits = currencyMinorDigits(currency);
  const rounded = toMoneyDecimal(value, label, attribute).toDecimalPlaces(digits, decimalRounding(mode));
  // The rounded value has at most `digits` places, so the shift below is exact for every safe result.
  return safeMinorFromInteger(rounded.times(new MoneyDecimal(10).pow(digits)), label, attribute);
}
