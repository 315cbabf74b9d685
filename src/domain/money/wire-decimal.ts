import type { Decimal } from 'decimal.js';
import { invalid } from '../../errors.js';
import { MoneyDecimal } from './money-decimal.js';

/** Options shared by the wire parsers: the label that starts each message and the input's attribute name. */
export interface WireDecimalOptions {
  /** The label that starts each error message, as in "Amount: is not a number.". */
  readonly field?: string;
  /** The input attribute the error is about (`amount_in_cents`), recorded on the error detail. */
  readonly attribute?: string;
}

// Plain decimal notation only: exponents, hex, "+", ".5" and "5." are what Rails' numericality
// check would read differently from a human, so the service's inputs never rely on them.
const DECIMAL_PATTERN = /^-?\d+(\.\d+)?$/;

/**
 * Reads a decimal from a wire value: a finite JS number (taken through its shortest round-trip
 * string, so `10.1` is exactly 10.1), a bigint, or a string in plain decimal notation with
 * surrounding whitespace ignored. Everything else (null, '', NaN, Infinity, '1e3', '0x10', booleans,
 * objects) throws "<field>: is not a number.". A negative zero is returned as zero.
 */
export function parseWireDecimal(input: unknown, options: WireDecimalOptions = {}): Decimal {
  const { field = 'Amount', attribute } = options;
  let value: Decimal | undefined;
  if (typeof input === 'number' && Number.isFinite(input)) value = new MoneyDecimal(input);
  else if (typeof input === 'bigint') value = new MoneyDecimal(input.toString());
  else if (typeof input === 'string') {
    const trimmed = input.trim();
    if (DECIMAL_PATTERN.test(trimmed)) value = new MoneyDecimal(trimmed);
  }
  if (value === undefined) throw invalid(`${field}: is not a number.`, attribute);
  return value.isZero() ? new MoneyDecimal(0) : value;
}
