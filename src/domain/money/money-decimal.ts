import { Decimal } from 'decimal.js';
import { invalid } from '../../errors.js';

/**
 * The decimal.js constructor that all money arithmetic uses. It is a private clone so that the
 * engine never reads or changes decimal.js's global configuration, which the host application may
 * have set for its own purposes. Forty significant digits hold any product of a safe-integer amount
 * (16 digits) and a rate or fraction exactly; plain notation (no exponents) keeps `toString()`
 * usable for the service's decimal strings.
 */
export const MoneyDecimal: Decimal.Constructor = Decimal.clone({
  precision: 40,
  rounding: Decimal.ROUND_HALF_UP,
  toExpNeg: -9e15,
  toExpPos: 9e15,
});

/**
 * What the money functions accept where a decimal is expected: a `Decimal` from any decimal.js
 * constructor, a decimal string, a finite JS number (read through its shortest round-trip string)
 * or a bigint.
 */
export type DecimalInput = Decimal | string | number | bigint;

/**
 * Converts a {@link DecimalInput} to a finite {@link MoneyDecimal} instance, throwing the service's
 * "is not a number." validation error for anything else. Decimals from other constructors are
 * re-created here so that later arithmetic runs under this module's configuration, not theirs.
 */
export function toMoneyDecimal(value: DecimalInput, label = 'Amount', attribute?: string): Decimal {
  let result: Decimal | undefined;
  try {
    if (typeof value === 'bigint') result = new MoneyDecimal(value.toString());
    else if (typeof value === 'number' || typeof value === 'string' || Decimal.isDecimal(value)) {
      result = new MoneyDecimal(value);
    }
  } catch {
    // decimal.js throws a plain Error for unparsable strings; the caller wants the service's message.
    result = undefined;
  }
  if (result === undefined || !result.isFinite()) throw invalid(`${label}: is not a number.`, attribute);
  return result;
}

/**
 * An exact decimal as an integer and a power-of-ten scale (`value = int / 10^scale`). Rounding a
 * quotient from these integers is exact, whereas decimal.js division would first round the
 * quotient to its precision and could then round a second time in the wrong direction.
 */
export interface ScaledInteger {
  readonly int: bigint;
  readonly scale: number;
}

/** Splits a finite decimal into a {@link ScaledInteger}; `toFixed()` is used because it never uses exponents. */
export function toScaledInteger(value: Decimal): ScaledInteger {
  const scale = value.decimalPlaces();
  return { int: BigInt(value.toFixed(scale).replace('.', '')), scale };
}

/** 10^exponent as a bigint. */
export function pow10(exponent: number): bigint {
  return 10n ** BigInt(exponent);
}
